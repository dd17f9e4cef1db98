"""Correctness trials (docs/verdict.md, `stages.correctness`).

Trial t uses seed = options.seed + t: the reference and the candidate each get their own
input set, generated from that seed on the device (`inputs.generate`: two calls give
identical tensors, which their fingerprints confirm; a task whose get_inputs is not
deterministic under a seed is invalid), and each forward runs right after re-seeding with
the same seed. The candidate's inputs are fingerprinted before and after its call: a change
fails the trial. No third copy is kept and each side's inputs are released once its call
is done, so a trial holds at most the reference's own peak plus one input set and two
outputs (docs/memory.md).

Reference problems raise Failure(invalid_task); a candidate that raises (or a CUDA
error) raises Failure(runtime_error); `run_trials` turns those into stage status "error".
"""

import contextlib
import random

import torch

from ..failure import Failure, candidate_failure, describe, is_cuda_error
from . import dataflow, inputs
from .compare import compare_outputs, flatten, tolerance


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


def clone(value):
    """Clone tensors in (nested lists/tuples of) `value`; other values are shared."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(clone(v) for v in value)
    return value


to_device = inputs.to_device


def make_inputs(task, seed: int, device: torch.device) -> list:
    """Seed, call `get_inputs()` on `device` (`inputs.generate`); invalid_task on failure."""
    return inputs.generate(task, seed, device, seed_all)


def _fresh(task, seed: int, device: torch.device, expected=None) -> tuple:
    """An input set for one side of a trial and its fingerprint; invalid_task when it
    differs from `expected` (the other side's, same seed)."""
    values = make_inputs(task, seed, device)
    digest = inputs.fingerprint(values)
    if expected is not None:
        index = inputs.first_difference(expected, digest)
        if index is not None:
            raise Failure("invalid_task", "invalid_task",
                          f"task: get_inputs() is not deterministic under a fixed seed "
                          f"(input {index} differs between two calls with seed {seed})")
    return values, digest


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


def _dataflow_problems(cand_output, cand_inputs, earlier) -> dict:
    """The candidate output's dataflow problem (module `dataflow`) for both answers to
    "may outputs share memory with inputs" (known only once the reference has run), taken
    while the candidate's inputs are alive; plain span arithmetic, no tensor work."""
    return {may: dataflow.check(cand_output, cand_inputs, earlier, may) for may in (False, True)}


class _Side:
    """One side's call of a trial: its inputs (released after use), output and facts."""

    def __init__(self, task, seed, device, expected=None):
        self.inputs, self.digest = _fresh(task, seed, device, expected)
        self.output, self.facts = None, None
        self.nbytes = inputs.nbytes(self.inputs)

    def run_reference(self, model, device, seed, check_writes=False):
        """`check_writes`: also fingerprint the inputs after the call (trial 0 only: the
        memory plan's one question, whether the reference writes its inputs)."""
        seed_all(seed)
        self.output = call_reference(model, self.inputs, device)
        self.facts = dataflow.aliases_input(self.output, self.inputs)  # a view task?
        self.writes = (inputs.first_difference(self.digest, inputs.fingerprint(self.inputs))
                       if check_writes else None)
        self.inputs = None  # released: the candidate side never needs them

    def run_candidate(self, model, device, seed, window, earlier):
        seed_all(seed)
        self.output = call_candidate(model, self.inputs, device, window)
        after = inputs.fingerprint(self.inputs)
        self.facts = {"changed": inputs.first_difference(self.digest, after),
                      "dataflow": _dataflow_problems(self.output, self.inputs, earlier)}
        self.inputs = None


def run_trial(t: int, task, reference, candidate, device, options, earlier=(),
              tracer=None) -> tuple:
    """Run trial `t`; return (its entry of `trials`, the tolerance of its first tensor
    output, the candidate's output). `earlier` are storage spans of outputs of earlier
    calls, still alive; `tracer` (or None) traces the candidate's call as window
    "trial t". Raises Failure when the task or the candidate raises, and a
    `rejected` Failure on a dataflow problem (module `dataflow`)."""
    seed = options.seed + t
    # Even trials run the candidate first: no reference output exists yet for it to find
    # (frame walking) or to inherit through freed memory. Odd trials run the reference first.
    candidate_first = t % 2 == 0
    window = tracer.window(f"trial {t}", device) if tracer is not None else None
    first_side = _Side(task, seed, device)
    if candidate_first:
        cand = first_side
        cand.run_candidate(candidate, device, seed, window, list(earlier))
        ref = _Side(task, seed, device, cand.digest)
        ref.run_reference(reference, device, seed, check_writes=t == 0)
    else:
        ref = first_side
        ref.run_reference(reference, device, seed, check_writes=t == 0)
        cand = _Side(task, seed, device, ref.digest)
        cand.run_candidate(candidate, device, seed, window, list(earlier))
    outputs, failure = _compare(t, ref.output, cand.output, options)
    changed = cand.facts["changed"]
    if failure is None and changed is not None:
        failure = f"trial {t}: candidate modified input {changed}"
    problem = cand.facts["dataflow"][ref.facts]
    if failure is None and options.integrity and problem:  # right values: how was it made
        rule, message = problem
        raise Failure("rejected", "dataflow", f"{rule}: trial {t}: {message}")
    first = next(leaf for leaf in flatten(ref.output) if isinstance(leaf, torch.Tensor))
    trial = {"seed": seed, "pass": failure is None, "outputs": outputs,
             "order": "candidate_first" if candidate_first else "reference_first",
             "inputs_modified": changed is not None, "failure": failure,
             "_bytes": {"inputs": ref.nbytes, "outputs": inputs.nbytes(ref.output),
                        "reference_writes_inputs": ref.writes is not None}}
    if t == 0:  # the weak-task flag from this output: no extra reference call later
        from .extra_checks import weak_task
        trial["_weak"] = weak_task(ref.output)
    return trial, tolerance(first.dtype, options), cand.output


def run_trials(task, reference, candidate, device, options, tracer=None, facts=None):
    """Run `options.trials` trials; return (stages.correctness object, Failure or None).
    `tracer` (or None) traces each candidate call (`trace.Tracer.window`); `facts` (a
    dict, or None) receives "weak_task" (extra_checks.weak_task of trial 0's reference
    output). `bytes` of the stage: inputs and outputs of one call (trial 0).

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
        stage.setdefault("bytes", trial.pop("_bytes"))  # of trial 0: the memory plan's sizes
        trial.pop("_bytes", None)
        if "_weak" in trial and facts is not None:
            facts["weak_task"] = trial.pop("_weak")
        trial.pop("_weak", None)
        stage["trials"].append(trial)
        stage["trials_run"] += 1
        stage["trials_passed"] += trial["pass"]
        if not trial["pass"]:
            stage["status"] = "fail"
    return stage, None


def first_failure(stage: dict) -> str:
    """The failure message of the first failed trial of a "fail" stage."""
    return next(t["failure"] for t in stage["trials"] if not t["pass"])
