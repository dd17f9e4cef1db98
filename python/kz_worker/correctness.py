"""Correctness trials (docs/verdict.md, `stages.correctness`).

Trial t uses seed = options.seed + t: the RNGs are seeded, `get_inputs()` is called,
tensors are moved to the device, and the reference and the candidate each get their
own clone (each forward runs right after re-seeding with the same seed). After the
candidate's call its inputs are compared with the originals: a change fails the trial.

Reference problems raise Failure(invalid_task); a candidate that raises (or a CUDA
error) raises Failure(runtime_error); `run_trials` turns those into stage status "error".
"""

import contextlib
import random

import torch

from . import dataflow
from .compare import compare_outputs, flatten, tolerance
from .failure import Failure, candidate_failure, describe, is_cuda_error


def seed_all(seed: int) -> None:
    """Seed torch (CPU and CUDA), Python's `random` and numpy (if installed)."""
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work so that asynchronous errors surface here."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def to_device(value, device):
    """Move tensors in (nested lists/tuples of) `value` to `device`."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(v, device) for v in value)
    return value


def clone(value):
    """Clone tensors in (nested lists/tuples of) `value`; other values are shared."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(clone(v) for v in value)
    return value


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point() or a.is_complex():
            nan = torch.isnan(a)
            return torch.equal(nan, torch.isnan(b)) and torch.equal(a[~nan], b[~nan])
        return torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_same, a, b))
    return True


def modified_input(originals: list, used: list):
    """Index of the first input that differs from its original after a call, or None."""
    return next((i for i, (a, b) in enumerate(zip(originals, used)) if not _same(a, b)), None)


def make_inputs(task, seed: int, device: torch.device) -> list:
    """Seed, call `get_inputs()` and move the tensors to `device`; invalid_task on failure."""
    seed_all(seed)
    try:
        inputs = task.get_inputs()
    except BaseException as exc:
        raise Failure.from_exception("invalid_task", "invalid_task", "task: get_inputs()",
                                     exc) from None
    if not isinstance(inputs, (list, tuple)):
        raise Failure("invalid_task", "invalid_task",
                      f"task: get_inputs() returned {type(inputs).__name__}, not a list")
    return to_device(list(inputs), device)


def input_pool(task, seed: int, device: torch.device, count: int) -> list:
    """`count` input sets on `device`, made with seeds seed, seed + 1, ..."""
    return [make_inputs(task, seed + k, device) for k in range(count)]


def call_reference(model, inputs, device):
    """Run the reference forward; invalid_task if it raises or returns no tensor."""
    try:
        output = model(*inputs)
        synchronize(device)
    except BaseException as exc:
        raise Failure.from_exception("invalid_task", "invalid_task", "task: Model forward",
                                     exc) from None
    if not isinstance(output, (torch.Tensor, tuple, list)) or not any(
            isinstance(leaf, torch.Tensor) for leaf in flatten(output)):
        raise Failure("invalid_task", "invalid_task",
                      f"task: Model output is {type(output).__name__}, not a tensor")
    return output


def call_candidate(model, inputs, device, window=None):
    """Run the candidate forward; runtime_error (see `candidate_failure`) if it raises.
    `window` (a `trace.Tracer.window`, or None) is a context manager around the call
    that traces it (it synchronises; a CUDA error it surfaces is the candidate's)."""
    try:
        with window if window is not None else contextlib.nullcontext():
            output = model(*inputs)
        synchronize(device)
    except BaseException as exc:
        raise candidate_failure(exc, "forward", "runtime_error", "runtime") from None
    return output


def _compare(t: int, ref_output, cand_output, options):
    """compare_outputs, where an output that cannot even be compared (a meta tensor, a
    broken tensor subclass) fails the trial; a CUDA error is the candidate's runtime_error."""
    try:
        return compare_outputs(t, ref_output, cand_output, options)
    except Exception as exc:
        if is_cuda_error(exc):
            raise candidate_failure(exc, "output", "runtime_error", "runtime") from None
        return [], f"trial {t}: outputs cannot be compared: {describe(exc)}"


def _check_dataflow(t, cand_output, cand_inputs, ref_output, ref_inputs, earlier):
    """Raise a `rejected` Failure naming the dataflow rule a candidate output breaks."""
    may_alias = dataflow.aliases_input(ref_output, ref_inputs)
    problem = dataflow.check(cand_output, cand_inputs, earlier, may_alias)
    if problem:
        rule, message = problem
        raise Failure("rejected", "dataflow", f"{rule}: trial {t}: {message}")


def run_trial(t: int, task, reference, candidate, device, options, earlier=(),
              tracer=None) -> tuple:
    """Run trial `t`; return (its entry of `trials`, the tolerance of its first tensor
    output, the candidate's output). `earlier` are storage spans of outputs of earlier
    calls, still alive; `tracer` (or None) traces the candidate's call as window
    "trial t". Raises Failure when the task or the candidate raises, and a
    `rejected` Failure on a dataflow problem (module `dataflow`)."""
    seed = options.seed + t
    inputs = make_inputs(task, seed, device)
    cand_inputs = clone(inputs)
    # Even trials run the candidate first: no reference output exists yet for it to find
    # (frame walking) or to inherit through freed memory. Odd trials run the reference first.
    candidate_first = t % 2 == 0
    window = tracer.window(f"trial {t}", device) if tracer is not None else None
    if candidate_first:
        seed_all(seed)
        cand_output = call_candidate(candidate, cand_inputs, device, window)
    seed_all(seed)
    ref_inputs = clone(inputs)
    ref_output = call_reference(reference, ref_inputs, device)
    if not candidate_first:
        seed_all(seed)
        cand_output = call_candidate(candidate, cand_inputs, device, window)
    outputs, failure = _compare(t, ref_output, cand_output, options)
    changed = modified_input(inputs, cand_inputs)
    if failure is None and changed is not None:
        failure = f"trial {t}: candidate modified input {changed}"
    if failure is None and options.integrity:  # right values, inputs untouched: how was it made
        _check_dataflow(t, cand_output, cand_inputs, ref_output, ref_inputs, list(earlier))
    first = next(leaf for leaf in flatten(ref_output) if isinstance(leaf, torch.Tensor))
    trial = {"seed": seed, "pass": failure is None, "outputs": outputs,
             "order": "candidate_first" if candidate_first else "reference_first",
             "inputs_modified": changed is not None, "failure": failure}
    return trial, tolerance(first.dtype, options), cand_output


def run_trials(task, reference, candidate, device, options, tracer=None):
    """Run `options.trials` trials; return (stages.correctness object, Failure or None).
    `tracer` (or None) traces each candidate call (`trace.Tracer.window`).

    Status is "pass" when every trial passed, "fail" when one did not, and "error"
    (with the Failure returned) when a trial raised. `tolerance` is that of the first
    tensor output of trial 0.
    """
    stage = {"status": "pass", "trials_run": 0, "trials_passed": 0, "tolerance": None,
             "trials": []}
    kept = None  # the previous trial's candidate output, alive for the aliasing check
    for t in range(options.trials):
        try:
            earlier = dataflow.spans(kept) if kept is not None else []
            trial, tol, kept = run_trial(t, task, reference, candidate, device, options,
                                         earlier, tracer)
        except Failure as failure:
            stage["status"] = "error"
            return stage, failure
        stage["tolerance"] = stage["tolerance"] or tol
        stage["trials"].append(trial)
        stage["trials_run"] += 1
        stage["trials_passed"] += trial["pass"]
        if not trial["pass"]:
            stage["status"] = "fail"
    return stage, None


def first_failure(stage: dict) -> str:
    """The failure message of the first failed trial of a "fail" stage."""
    return next(t["failure"] for t in stage["trials"] if not t["pass"])
