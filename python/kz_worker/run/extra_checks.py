"""Checks beyond the task's own inputs, run after the normal trials pass
(docs/verdict.md, `stages.extra_checks`).

- `signed_inputs`: when every floating input `get_inputs()` draws is non-negative, two more
  trials run with each floating input multiplied by random signs (seeded). Kernels that
  only work for positive values (a ReLU that returns x, a log trick) fail here. Skipped,
  with the reason, when the reference itself is not finite on signed inputs.
- `perturbed_sizes`: every module-level int constant >= 8 that `get_inputs` or
  `get_init_inputs` read (whatever its name; module size_constants says how they are
  found and moved) is nudged down to an odd value (1024 -> 1021, 8205 -> 8203). The
  reference is rebuilt from the new init inputs and run once; if it refuses the nudges
  together (it raises: a divisibility constraint), they are retried one constant at a
  time and those it accepts are kept (the others are listed in `refused` and `partial`).
  The candidate is rebuilt too, the reference's parameters are copied in, and one trial
  compares them: kernels that hard-code the shape or drop the tail fail; a candidate
  whose constructor rejects the new init inputs, or whose parameters no longer
  correspond, fails as well. Not run (with the reason) when there is no such constant or
  the reference refuses every nudge. The task's namespace is restored on every path.
- Every check gets an entry in `checks`: `ran: true` with `pass`, or `ran: false` with
  `reason` (also when an earlier check failed first); the verdict's `not_checked` repeats
  each `reason` and each `partial`.
- `weak_task`: a flag, not a failure: the reference output of trial 0 is near-constant or
  near zero, so matching it says little (an all-zeros output would pass).
"""

import contextlib
import sys

import torch

from ..failure import Failure, describe, is_cuda_error
from . import size_constants
from .compare import chunks, compare_outputs, flatten
from .correctness import call_candidate, call_reference, clone, make_inputs, seed_all
from .params import match_parameters, mismatch_reason

SIGNED_TRIALS = 2
NO_SIZES = "no module-level size constant read by get_inputs/get_init_inputs"


def _not_run(check: str, reason: str) -> dict:
    """The entry of a check that did not run; the verdict's not_checked repeats the reason."""
    return {"check": check, "ran": False, "reason": reason}


def _floats(values) -> list:
    return [v for v in values if isinstance(v, torch.Tensor) and v.is_floating_point()]


def _sign_in_place(v: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Multiply `v` by random signs drawn from `gen` (on v's device), piece by piece in
    place when `v` is contiguous (no full-size temporary), else through one temporary."""
    if not v.is_contiguous():
        signs = torch.randint(0, 2, v.shape, generator=gen, device=v.device).to(v.dtype)
        return v * (signs * 2 - 1)
    for _, (piece,) in chunks([v]):
        signs = torch.randint(0, 2, piece.shape, generator=gen, device=v.device).to(v.dtype)
        piece.mul_(signs.mul_(2).sub_(1))
    return v


def _signed_inputs(task, seed: int, device) -> tuple[list, bool]:
    """Inputs of `seed`, each floating tensor multiplied by random signs (seeded, on the
    device), and whether get_inputs drew only non-negative floating values. Two calls
    with one seed give identical sets (each side of a trial gets its own)."""
    values = make_inputs(task, seed, device)
    floats = _floats(values)
    if not floats or any(t.numel() and bool(t.min() < 0) for t in floats):
        return values, False
    gen = torch.Generator(device=device).manual_seed(seed)
    return [_sign_in_place(v, gen) if isinstance(v, torch.Tensor) and v.is_floating_point()
            else v for v in values], True


def _finite(output) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in flatten(output)
               if isinstance(t, torch.Tensor) and t.is_floating_point())


def signed_inputs(task, reference, candidate, device, options) -> tuple[dict, str | None]:
    """Run the signed-input trials; return (check entry, failure message or None). Each
    side gets its own signed set of the trial's seed; one set is alive at a time besides
    the outputs (the memory plan, docs/memory.md)."""
    for k in range(SIGNED_TRIALS):
        seed = options.seed + 1000 + k
        inputs, only_positive = _signed_inputs(task, seed, device)
        if not only_positive:
            return _not_run("signed_inputs", "get_inputs already draws negative values"
                            if _floats(inputs) else "no floating inputs"), None
        seed_all(seed)
        ref = call_reference(reference, inputs, device)
        del inputs
        if not _finite(ref):
            return _not_run("signed_inputs", "the reference is not finite on signed inputs"), None
        inputs = _signed_inputs(task, seed, device)[0]  # drawn before seeding: as the reference's
        seed_all(seed)  # same RNG state for the candidate's own draws (dropout) as the reference had
        out = call_candidate(candidate, inputs, device)
        del inputs
        _, failure = compare_outputs(k, ref, out, options)
        del out
        if failure:
            return ({"check": "signed_inputs", "ran": True, "pass": False},
                    "correctness.signed_inputs: signed inputs (get_inputs draws only "
                    f"non-negative values): {failure}")
    return {"check": "signed_inputs", "ran": True, "pass": True, "trials": SIGNED_TRIALS}, None


@contextlib.contextmanager
def _applied(namespace: dict, values: dict):
    """Set `values` in the task's namespace for the block; the originals are put back
    on every way out (return, exception, Failure)."""
    originals = {name: namespace[name] for name in values}
    try:
        namespace.update(values)
        yield
    finally:
        namespace.update(originals)


def _reference_run(task, device, options) -> dict:
    """Build the reference from the current init inputs and run it once on fresh inputs;
    raise whatever the task raises."""
    seed = options.seed + 2000
    seed_all(options.seed)
    init = list(task.get_init_inputs())
    model = (getattr(task, "model", None) or task.Model)(*init).to(device)
    inputs = make_inputs(task, seed, device)
    seed_all(seed)
    return {"init": init, "model": model, "inputs": inputs, "seed": seed,
            "output": call_reference(model, clone(inputs), device)}


def _refusal(exc: Exception) -> str:
    """Why the reference refused a nudge; a CUDA error is no refusal: the context may
    be unusable, so the sample stops (invalid_task)."""
    if is_cuda_error(exc):
        raise Failure("invalid_task", "cuda_error",
                      f"task: CUDA error at perturbed sizes: {describe(exc)}") from None
    return exc.reason if isinstance(exc, Failure) else describe(exc)


def _probe(task, namespace, values, device, options):
    """(reference run, None) when the reference accepts `values`, else (None, why)."""
    try:
        with _applied(namespace, values):
            return _reference_run(task, device, options), None
    except Exception as exc:  # the task does not allow these sizes
        return None, _refusal(exc)


def _accepted(task, namespace, nudged, device, options):
    """The nudges the reference accepts: all of them if it can, else (retrying one
    constant at a time) each that it accepts together with those kept before it.
    Returns (accepted {name: value}, {name: why refused}, the run at all of them or None)."""
    run_all, why = _probe(task, namespace, nudged, device, options)
    if run_all is not None:
        return nudged, {}, run_all
    if len(nudged) == 1:
        return {}, {name: why for name in nudged}, None
    accepted, refused = {}, {}
    for name, value in nudged.items():
        why = _probe(task, namespace, {**accepted, name: value}, device, options)[1]
        if why is not None:  # (the probe's run is dropped at once: one live run at a time)
            refused[name] = why
        else:
            accepted[name] = value
    return accepted, refused, None


def _described(sizes: dict, nudged: dict, names) -> str:
    return "{" + ", ".join(f"{n}: {sizes[n]} -> {nudged[n]}" for n in names) + "}"


def _candidate_trial(model_class, run: dict, device, options) -> str | None:
    """Build the candidate from the run's init inputs (the reference's parameters copied
    in) and compare it with the run's reference output; the failure or None."""
    try:
        model = model_class(*run["init"]).to(device)
    except Exception as exc:
        return f"ModelNew(*get_init_inputs()) raised {describe(exc)}"
    params = match_parameters(run["model"], model)
    if params["status"] == "mismatch":
        return mismatch_reason(params)
    seed_all(run["seed"])
    out = call_candidate(model, clone(run["inputs"]), device)
    try:
        return compare_outputs(0, run["output"], out, options)[1]
    except Exception as exc:
        return f"outputs cannot be compared: {describe(exc)}"


def _mirrored(model_class, namespace: dict, sizes: dict, accepted: dict) -> tuple[dict, dict]:
    """The candidate module's namespace and the moved constants it mirrors: globals of the
    same name and the same original value (a port that keeps the task's `batch_size = 256`
    and reads it in ModelNew follows the task's sizes, as the reference does). A size baked
    any other way (a literal, a constant of another name, a value captured at import) stays."""
    module = sys.modules.get(getattr(model_class, "__module__", ""), None)
    own = vars(module) if module is not None else None
    if own is None or own is namespace:
        return {}, {}
    return own, {n: v for n, v in accepted.items()
                 if type(own.get(n)) is int and own[n] == sizes[n]}


def perturbed_sizes(task, model_class, device, options) -> tuple[dict, str | None]:
    """One trial with the task's size constants moved (module size_constants); return
    (check entry, failure message or None). The namespace is restored in every path."""
    namespace = size_constants.namespace_of(task)
    sizes = size_constants.candidates(task, namespace)
    if not sizes:
        return _not_run("perturbed_sizes", NO_SIZES), None
    nudged = {name: size_constants.nudge(value) for name, value in sizes.items()}
    accepted, refused, run = _accepted(task, namespace, nudged, device, options)
    if not accepted:
        why = "; ".join(f"{n}: {w}" for n, w in refused.items())
        return _not_run("perturbed_sizes", "the reference refused "
                        f"{_described(sizes, nudged, refused)} ({why})"), None
    own, mirrored = _mirrored(model_class, namespace, sizes, accepted)
    with _applied(namespace, accepted):
        run = run or _reference_run(task, device, options)
        with _applied(own, mirrored):
            failure = _candidate_trial(model_class, run, device, options)
    entry = {"check": "perturbed_sizes", "ran": True, "pass": failure is None,
             "sizes": accepted, "from": {n: sizes[n] for n in accepted}}
    if mirrored:
        entry["candidate_constants"] = sorted(mirrored)
    if refused:
        entry["refused"] = refused
        entry["partial"] = (f"not moved: {_described(sizes, nudged, refused)}, "
                            "the reference refused them")
    message = f"correctness.perturbed_sizes: perturbed sizes {accepted}: {failure}"
    return entry, (message if failure else None)


def weak_task(reference_output) -> str | None:
    """Why the reference output is too weak to judge by, or None. Reductions only (no
    copy of the output: the memory plan)."""
    tensors = [t.detach() for t in flatten(reference_output)
               if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() > 1]
    for i, t in enumerate(tensors):
        low, high = (float(v) for v in torch.aminmax(t))
        scale = max(abs(low), abs(high))
        if scale < 1e-6:
            return f"reference output {i} is near zero (max |x| = {scale:.3g})"
        if high - low <= 1e-6 * scale:
            return f"reference output {i} is near-constant ({float(t.mean(dtype=torch.float64)):.6g})"
    return None


def run(task, reference, candidate, device, options, weak=False) -> tuple[dict, str | None]:
    """The `extra_checks` stage object and the first failure message (or None). `weak`:
    the weak-task flag already taken from trial 0's reference output (None: not weak),
    else (False) the reference runs once more on trial 0's inputs to take it."""
    if weak is False:
        seed_all(options.seed)
        weak = weak_task(call_reference(reference, make_inputs(task, options.seed, device), device))
    entry, failure = signed_inputs(task, reference, candidate, device, options)
    checks = [entry]
    if failure is None:
        entry, failure = perturbed_sizes(task, type(candidate), device, options)
    else:
        entry = _not_run("perturbed_sizes", "signed_inputs failed first")
    checks.append(entry)
    data = {"status": "fail" if failure else "pass", "checks": checks, "weak_task": weak}
    return data, failure
