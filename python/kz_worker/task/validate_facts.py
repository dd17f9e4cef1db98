"""The facts of one proposed module for validation stages 2 and 3, measured as
`kz task check` measures a task (task_check.py: load, footprint before allocation, the
reference's runs, determinism, input sensitivity, finite and weak outputs), plus an fp64 run
of the same module on the same inputs (docs/curriculum.md, "Validation"). Runs inside the
forked child of validate.py; the C++ side turns the facts into a verdict."""

import copy

import torch

from .. import loader
from ..failure import Failure
from ..run.extra_checks import weak_task
from . import footprint
from .task_check import InputMaker, _build, _finite, _tensors, run_reference


def _double(value):
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_double(v) for v in value)
    return value


def fp64_facts(model, make, seed: int, output) -> dict:
    """Relative L2 and max |diff| of the fp32 output against the same module in float64 on
    the same inputs (made in fp32, then widened)."""
    try:
        wide = copy.deepcopy(model).double()
        values = _double(make(seed))
        from ..run.correctness import seed_all
        seed_all(seed)
        ref = wide(*values)
    except Exception as exc:  # noqa: BLE001 - an op without float64: no comparison
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    num = den = worst = 0.0
    for a, b in zip(_tensors(output), _tensors(ref)):
        if not (a.is_floating_point() and b.is_floating_point()) or a.shape != b.shape:
            continue
        diff = (a.double() - b).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
        num += float((diff * diff).sum())
        den += float((b.nan_to_num(nan=0.0, posinf=0.0, neginf=0.0) ** 2).sum())
        worst = max(worst, float(diff.abs().max())) if diff.numel() else worst
    return {"rel_l2": (num ** 0.5) / max(den ** 0.5, 1e-300), "max_abs": worst}


def _run(task, device, options: dict, facts: dict) -> None:
    meter = footprint.PeakMeter(device)
    meter.start()
    model = _build(task, device, int(options["seed"]))
    make = InputMaker(task, device)
    ref = run_reference(model, make, int(options["seed"]), device, meter)
    output = ref.pop("output")
    facts["reference"] = ref
    facts["finite"] = _finite(output)
    facts["weak_task"] = weak_task(output)
    facts["fp64"] = fp64_facts(model, make, int(options["seed"]), output)


def module_facts(path: str, device_name: str, options: dict) -> dict:
    torch.set_num_threads(1)
    device = torch.device("cuda:0" if device_name == "cuda" else "cpu")
    if device.type == "cuda":  # as task_check: fp32 compared against fp64 must be real fp32
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    facts = {"load_error": None, "footprint": None, "skipped_run": None, "run_error": None}
    try:
        task = loader.load_task(path)
    except Failure as failure:
        facts["load_error"] = failure.reason
        return facts
    fp = footprint.measure(task)
    facts["footprint"] = {k: fp.get(k) for k in ("method", "reason", "total_bytes", "known_bytes")}
    total = fp.get("total_bytes") if fp.get("total_bytes") is not None else fp.get("known_bytes")
    if total is not None and total > options["max_total_bytes"]:
        facts["skipped_run"] = "too_large"
        return facts
    try:
        with torch.no_grad():
            _run(task, device, options, facts)
    except Failure as failure:
        facts["run_error"] = failure.reason
    except MemoryError as exc:
        facts["run_error"] = f"MemoryError: {exc}"
    return facts
