"""Glue between the run and `kz_worker.timing` (owned elsewhere).

`measure` builds zero-argument callables that rotate over a pool of POOL_SIZE input
sets already on the device (the reference and the candidate each have their own
clones) and keep their last output alive, then calls `timing.time_interleaved`.
"""

from .correctness import clone, input_pool
from .failure import Failure, candidate_failure, describe, is_cuda_error

POOL_SIZE = 3


def _rotating(model, pool, raised: dict, role: str):
    """A zero-arg callable doing one forward over the next input set of `pool`; an
    exception it raises is also stored in `raised[role]`."""
    state = {"calls": 0, "output": None}

    def forward():
        inputs = pool[state["calls"] % len(pool)]
        state["calls"] += 1
        try:
            state["output"] = model(*inputs)
        except BaseException as exc:
            raised[role] = exc
            raise
    return forward


def measure(timing, task, reference, candidate, device, options) -> dict:
    """Time reference and candidate; return the `stages.timing` object.

    A candidate that raises while being timed is a runtime_error Failure (the
    reference raising is invalid_task); a failure of the timing harness itself gives
    status "skipped" with the reason.
    """
    pool = input_pool(task, options.seed, device, POOL_SIZE)
    raised = {}
    ref_fn = _rotating(reference, [clone(inputs) for inputs in pool], raised, "reference")
    cand_fn = _rotating(candidate, [clone(inputs) for inputs in pool], raised, "candidate")
    try:
        return timing.time_interleaved(
            ref_fn, cand_fn, warmup=options.warmup, min_calls=options.min_calls,
            max_calls=options.max_calls, budget_s=options.timing_budget_s,
            stable_rel=options.stable_rel)
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
