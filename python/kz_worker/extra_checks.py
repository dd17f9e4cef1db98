"""Checks beyond the task's own inputs, run after the normal trials pass
(docs/verdict.md, `stages.extra_checks`).

- `signed_inputs`: when every floating input `get_inputs()` draws is non-negative, two more
  trials run with each floating input multiplied by random signs (seeded). Kernels that
  only work for positive values (a ReLU that returns x, a log trick) fail here. Skipped,
  with the reason, when the reference itself is not finite on signed inputs.
- `perturbed_sizes`: module-level integer size constants of the task that are multiples of
  8 are nudged down by 3 (1024 -> 1021), both models are rebuilt from the new init inputs
  (the reference's parameters copied in again) and one trial compares them: kernels that
  hard-code the shape or drop the tail fail. Skipped when the task has no such constants
  or the reference does not accept the new sizes.
- `weak_task`: a flag, not a failure: the reference output of trial 0 is near-constant or
  near zero, so matching it says little (an all-zeros output would pass).
"""

import torch

from .compare import compare_outputs, flatten
from .correctness import call_candidate, call_reference, clone, make_inputs, seed_all

SIGNED_TRIALS = 2


def _floats(values) -> list:
    return [v for v in values if isinstance(v, torch.Tensor) and v.is_floating_point()]


def _signed(inputs: list, seed: int) -> list:
    gen = torch.Generator().manual_seed(seed)
    out = []
    for v in inputs:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            signs = torch.randint(0, 2, v.shape, generator=gen).to(v.device, v.dtype) * 2 - 1
            v = v * signs
        out.append(v)
    return out


def _finite(output) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in flatten(output)
               if isinstance(t, torch.Tensor) and t.is_floating_point())


def signed_inputs(task, reference, candidate, device, options) -> tuple[dict, str | None]:
    """Run the signed-input trials; return (check entry, failure message or None)."""
    base = make_inputs(task, options.seed, device)
    floats = _floats(base)
    if not floats or any(bool((t < 0).any()) for t in floats):
        return {"check": "signed_inputs", "ran": False,
                "reason": "get_inputs already draws negative values" if floats else "no floating inputs"}, None
    for k in range(SIGNED_TRIALS):
        seed = options.seed + 1000 + k
        inputs = _signed(make_inputs(task, seed, device), seed)
        seed_all(seed)
        ref = call_reference(reference, clone(inputs), device)
        if not _finite(ref):
            return {"check": "signed_inputs", "ran": False,
                    "reason": "the reference is not finite on signed inputs"}, None
        seed_all(seed)
        out = call_candidate(candidate, clone(inputs), device)
        _, failure = compare_outputs(k, ref, out, options)
        if failure:
            return ({"check": "signed_inputs", "ran": True, "pass": False},
                    "correctness.signed_inputs: signed inputs (get_inputs draws only "
                    f"non-negative values): {failure}")
    return {"check": "signed_inputs", "ran": True, "pass": True, "trials": SIGNED_TRIALS}, None


def _namespace(task) -> dict:
    """The globals that `get_inputs` and `Model` read: the task module's (a loader.Task
    carries them; a plain module is its own namespace)."""
    namespace = getattr(task, "namespace", None)
    return namespace if isinstance(namespace, dict) else vars(task)


def _size_constants(task) -> dict:
    return {name: value for name, value in _namespace(task).items()
            if not name.startswith("_") and type(value) is int and value >= 8 and value % 8 == 0}


def _rebuild(task, model_class, device):
    from .params import match_parameters
    init = list(task.get_init_inputs())
    model = getattr(task, "model", None) or getattr(task, "Model")
    ref = model(*init).to(device)
    cand = model_class(*init).to(device)
    match_parameters(ref, cand)
    return ref, cand


def perturbed_sizes(task, model_class, device, options) -> tuple[dict, str | None]:
    """Run one trial with the task's size constants nudged off multiples of 8."""
    sizes = _size_constants(task)
    if not sizes:
        return {"check": "perturbed_sizes", "ran": False, "reason": "no size constants"}, None
    nudged = {k: v - 3 for k, v in sizes.items()}
    try:
        _namespace(task).update(nudged)
        seed_all(options.seed)
        try:
            ref_model, cand_model = _rebuild(task, model_class, device)
            inputs = make_inputs(task, options.seed + 2000, device)
            ref = call_reference(ref_model, clone(inputs), device)
        except Exception as exc:  # the task does not allow these sizes
            return {"check": "perturbed_sizes", "ran": False,
                    "reason": f"the reference does not accept {nudged}: {type(exc).__name__}"}, None
        out = call_candidate(cand_model, clone(inputs), device)
        _, failure = compare_outputs(0, ref, out, options)
    finally:
        _namespace(task).update(sizes)
    entry = {"check": "perturbed_sizes", "ran": True, "pass": failure is None, "sizes": nudged}
    message = f"correctness.perturbed_sizes: perturbed sizes {nudged}: {failure}"
    return entry, (message if failure else None)


def weak_task(reference_output) -> str | None:
    """Why the reference output is too weak to judge by, or None."""
    tensors = [t.detach().double() for t in flatten(reference_output)
               if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() > 1]
    for i, t in enumerate(tensors):
        scale = float(t.abs().max())
        if scale < 1e-6:
            return f"reference output {i} is near zero (max |x| = {scale:.3g})"
        if float(t.max() - t.min()) <= 1e-6 * scale:
            return f"reference output {i} is near-constant ({float(t.mean()):.6g})"
    return None


def run(task, reference, candidate, device, options) -> tuple[dict, str | None]:
    """The `extra_checks` stage object and the first failure message (or None)."""
    seed_all(options.seed)
    ref0 = call_reference(reference, make_inputs(task, options.seed, device), device)
    weak = weak_task(ref0)
    entry, failure = signed_inputs(task, reference, candidate, device, options)
    checks = [entry]
    if failure is None:
        entry, failure = perturbed_sizes(task, type(candidate), device, options)
        checks.append(entry)
    data = {"status": "fail" if failure else "pass", "checks": checks, "weak_task": weak}
    return data, failure
