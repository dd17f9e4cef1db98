"""Glue between the run and `kz_worker.run.timing`.

`measure` builds zero-argument callables that rotate over a pool of POOL_SIZE input
sets already on the device (the reference and the candidate each have their own
clones, always holding equal values) and keep their last output per slot alive, then
calls `timing.time_interleaved`. After every reference block + candidate block, outside
the timed region, `TimedRecheck` compares the last timed outputs of each slot and then
rotates the values between the slots (device copies, same pointers, same distribution):
a candidate that caches results by pointer, shape or call count, or serves several calls
from one launch, returns stale outputs and is rejected (`dataflow.stale_output`).
Rotation returns each slot to its original values every pool-size rounds; with blocks of
10 calls a slot is always reused after one rotation, so a stale cache shows in round 1.

The memory plan (`memory_plan`, docs/memory.md) sizes the pool: large tasks get two input
sets shared by both sides (neither writes its inputs: the correctness trials proved it),
and each side keeps only its last output (released just before its next call), whose slot
is the one rechecked.
"""

import torch

from ..failure import Failure, candidate_failure, describe, is_cuda_error
from .compare import compare_outputs
from .correctness import clone, input_pool, seed_all
from .memory_plan import POOL_SIZE, choose  # noqa: F401  (POOL_SIZE is re-exported: task/baseline.py, tests)


def _rotating(model, pool, raised: dict, role: str, outputs: dict, keep_all: bool = True):
    """A zero-arg callable doing one forward over the next input set of `pool`; it keeps
    the last output of each slot in `outputs` (only the last call's when not `keep_all`:
    the others are released before the call); an exception it raises is also stored in
    `raised[role]`."""
    state = {"calls": 0}

    def forward():
        slot = state["calls"] % len(pool)
        state["calls"] += 1
        if not keep_all:
            outputs.clear()
        try:
            outputs[slot] = model(*pool[slot])
        except BaseException as exc:
            raised[role] = exc
            raise
    return forward


class TimedRecheck:
    """The `after_pair` hook: recheck the last timed outputs, then rotate input values.

    A reference that draws from the RNG in forward (dropout in training mode) gives another
    output on every call, so a timed call's output cannot be compared with the other
    side's. The first mismatch therefore asks whether the reference repeats itself on the
    same inputs; if not, this and every later round recheck with fresh calls of both sides
    on the slot's (rotated) inputs, each right after seeding with the same seed, as the
    correctness trials do (`mode` "seeded" in `stages.timing.recheck`). A stale cache still
    shows: the fresh calls see the same pointers and shapes with new values."""

    def __init__(self, pools, ref_out, cand_out, options, models=None):
        self.pools, self.ref_out, self.cand_out = pools, ref_out, cand_out
        self.options, self.rounds = options, 0
        self.models = models  # (reference, candidate), for the seeded recheck
        self.mode = "outputs"

    def __call__(self):
        self.rounds += 1
        for slot in sorted(self.cand_out):
            if slot not in self.ref_out:
                continue
            if self.mode == "outputs":
                _, failure = compare_outputs(slot, self.ref_out[slot], self.cand_out[slot], self.options)
                if failure and self._reference_draws_rng(slot):
                    self.mode = "seeded"
            if self.mode == "seeded":
                failure = self._seeded(slot)
            if failure:
                raise Failure("rejected", "dataflow",
                              f"dataflow.stale_output: an output of a timed call (round {self.rounds}) "
                              f"differs from the reference on the same inputs"
                              f"{' (seeded recheck)' if self.mode == 'seeded' else ''}: {failure}")
        for pool in self.pools:
            _rotate(pool)

    def _reference_draws_rng(self, slot) -> bool:
        """Two unseeded reference calls on the slot's inputs differ: forward uses the RNG."""
        if self.models is None:
            return False
        ref_pool = self.pools[0]
        with torch.no_grad():
            first = self.models[0](*ref_pool[slot])
            second = self.models[0](*ref_pool[slot])
        _, differs = compare_outputs(slot, first, second, self.options)
        return differs is not None

    def _seeded(self, slot):
        """Fresh reference and candidate calls on the slot's inputs, each after the same seed;
        the compare's failure text or None. Outputs are released before returning."""
        reference, candidate = self.models
        cand_pool = self.pools[-1]
        seed = self.options.seed + 1000 + self.rounds
        with torch.no_grad():
            seed_all(seed)
            ref = reference(*self.pools[0][slot])
            seed_all(seed)
            cand = candidate(*cand_pool[slot])
        _, failure = compare_outputs(slot, ref, cand, self.options)
        del ref, cand
        return failure


def _rotate(pool: list) -> None:
    """Move every tensor's values one slot along, in place (pointers stay)."""
    for i, first in enumerate(pool[0]):
        if not isinstance(first, torch.Tensor):
            continue
        saved = first.clone()
        for k in range(len(pool) - 1):
            pool[k][i].copy_(pool[k + 1][i])
        pool[-1][i].copy_(saved)


def _pools(task, device, options, plan):
    """(reference pool, candidate pool): the same lists when the plan shares them."""
    pool = input_pool(task, options.seed, device, plan.pool_size)
    if plan.shared_pool:
        return pool, pool
    return pool, [clone(inputs) for inputs in pool]  # the reference keeps the originals


def measure(timing, task, reference, candidate, device, options, plan=None) -> dict:
    """Time reference and candidate; return the raw timing facts (timing.raw_result: the
    supervisor builds the `stages.timing` object from them) plus the recheck and pool.

    `plan` (a memory_plan.Plan; None: the full plan) sizes the input pool. A candidate
    that raises while being timed is a runtime_error Failure (the reference raising is
    invalid_task); a failure of the timing harness itself gives status "skipped" with
    the reason.
    """
    plan = plan or choose(None)
    ref_pool, cand_pool = _pools(task, device, options, plan)
    raised, ref_out, cand_out = {}, {}, {}
    ref_fn = _rotating(reference, ref_pool, raised, "reference", ref_out, not plan.lean)
    cand_fn = _rotating(candidate, cand_pool, raised, "candidate", cand_out, not plan.lean)
    pools = (ref_pool,) if plan.shared_pool else (ref_pool, cand_pool)
    recheck = (TimedRecheck(pools, ref_out, cand_out, options, (reference, candidate))
               if options.integrity else None)
    try:
        result = timing.time_interleaved(
            ref_fn, cand_fn, warmup=options.warmup, min_calls=options.min_calls,
            max_calls=options.max_calls, budget_s=options.timing_budget_s,
            stable_rel=options.stable_rel, ci_rel=options.ci_rel, after_pair=recheck)
        result["rechecked_rounds"] = recheck.rounds if recheck is not None else 0
        if recheck is not None:
            result["recheck"] = {"mode": recheck.mode}
        result["pool"] = {"sets": plan.pool_size, "shared": plan.shared_pool}
        return result
    except Failure:
        raise
    except (Exception, SystemExit) as exc:  # a candidate may even raise SystemExit
        if "candidate" in raised:
            raise candidate_failure(raised["candidate"], "forward during timing",
                                    "runtime_error", "runtime") from None
        if "reference" in raised:
            raise Failure.from_exception("invalid_task", "invalid_task",
                                         "task: Model forward during timing",
                                         raised["reference"]) from None
        if is_cuda_error(exc):
            raise Failure.from_exception("runtime_error", "cuda_error",
                                         "candidate: timing", exc) from None
        return {"status": "skipped", "reason": f"timing failed: {describe(exc)}"}
