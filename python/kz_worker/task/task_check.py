"""Op `task_check`: the facts kz needs to tell whether it can judge a task on this device,
and what that costs (`kz task check`, docs/worker-protocol.md; its reference runs are reused
by the curriculum's validation). Facts only: kz builds the checks, flags and verdict
(src/verify/task_rules.h).

Steps, each only after the previous one completed:
1. load the task (`loader.load_task`); 2. its footprint, nothing allocated (`footprint.measure`);
3. the up-front rule (`footprint.budget`: 3 x (inputs + outputs) + 2 x params against the
   memory available: cuda, torch.cuda.mem_get_info's free; cpu, `footprint.host_memory`): the
   one rule applied here, since it must stop the child before any task tensor exists;
4. the reference on the device (`run_reference`): time and peak memory of a forward,
   determinism, input sensitivity, finite outputs, the weak-task text, the peak after them.
A failing step ends the facts with `stop` (where, and the failure's reason and error).

The facts' version is VERSION.
"""

import time
import types

import torch

from .. import loader
from ..failure import Failure
from ..protocol import ProtocolError
from ..run import inputs
from ..run.compare import tolerance
from ..run.correctness import call_reference, seed_all, synchronize
from . import footprint

VERSION = 2  # of the facts (docs/worker-protocol.md); the task_check object is built by kz
# "close": within the verifier's default tolerance for the dtype (docs/verdict.md), so the
# verifier would take the two outputs for the same (reduction order, atomics on a GPU).
_DEFAULT_TOLERANCES = types.SimpleNamespace(atol=None, rtol=None, rel_l2=None)
CHUNK = 1 << 24  # elements per comparison step: bounded temporaries on huge outputs
DEFAULTS = {"seed": 42, "host_limit_bytes": None}


def parse_request(request: dict) -> tuple:
    """(task_path, device, options); raises ProtocolError when malformed."""
    task_path, device = request.get("task_path"), request.get("device")
    if not isinstance(task_path, str):
        raise ProtocolError(f"task_path: expected a string, got {task_path!r}")
    if device not in ("cuda", "cpu"):
        raise ProtocolError(f"device: expected cuda or cpu, got {device!r}")
    raw = request.get("options") or {}
    if not isinstance(raw, dict):
        raise ProtocolError("options must be an object")
    options = dict(DEFAULTS)
    for key, value in ((k, raw.get(k)) for k in DEFAULTS if raw.get(k) is not None):
        if type(value) is not int or value < (0 if key == "seed" else 1):
            raise ProtocolError(f"options.{key}: invalid value {value!r}")
        options[key] = value
    return task_path, device, options


def device_facts(device: torch.device, options: dict) -> dict:
    """The result's `device` object: what the device is and the memory it has free."""
    from ..run.op import device_info
    from .baseline import cpu_name
    info = device_info(device)
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(0)
        info.update(free_bytes=free, total_bytes=total, available_bytes=free,
                    available_source="cuda_free")
    else:
        info.update(name=cpu_name(), **footprint.host_memory(options["host_limit_bytes"]))
    return info


class InputMaker:
    """Seeded input sets made as the verifier makes them (`inputs.generate`: on a GPU under
    `with torch.device(device)`, nothing of that size on the host; a host generation and copy
    when get_inputs fails there, decided once per task). `where` and `fallback_reason` say
    which was used."""

    def __init__(self, task, device: torch.device):
        self.task, self.device = task, device

    def __call__(self, seed: int) -> list:
        return inputs.generate(self.task, seed, self.device, seed_all)

    @property
    def where(self) -> str:
        return inputs.origin(self.task, self.device)["where"]

    @property
    def fallback_reason(self):
        origin = inputs.origin(self.task, self.device)
        return origin["reason"] if self.device.type == "cuda" and origin["where"] == "host" else None


def _tensors(value) -> list:
    return [t for t in footprint.leaves(value) if isinstance(t, torch.Tensor)]


def compare(a, b) -> tuple:
    """("equal" | "close" | "differ", max |a - b| over floating leaves or None), chunk by
    chunk (temporaries of at most CHUNK elements). NaN in the same place counts as equal;
    "close": every element within the verifier's default atol + rtol * |b| for its dtype."""
    ta, tb = _tensors(a), _tensors(b)
    if len(ta) != len(tb) or any(x.shape != y.shape or x.dtype != y.dtype for x, y in zip(ta, tb)):
        return "differ", None
    verdict, worst = "equal", 0.0
    for x, y in zip(ta, tb):
        x, y = x.detach().reshape(-1), y.detach().reshape(-1)
        for lo in range(0, x.numel(), CHUNK):
            cx, cy = x[lo:lo + CHUNK], y[lo:lo + CHUNK]
            if torch.equal(cx, cy):
                continue
            if not (cx.is_floating_point() or cx.is_complex()):
                return "differ", None
            if bool(((cx == cy) | (torch.isnan(cx) & torch.isnan(cy))).all()):
                continue  # equal but for NaNs in the same places
            tol = tolerance(cx.dtype, _DEFAULT_TOLERANCES)
            if not bool(torch.isclose(cx, cy, tol["rtol"], tol["atol"], equal_nan=True).all()):
                verdict = "differ"
            elif verdict == "equal":
                verdict = "close"
            finite = torch.isfinite(cx) & torch.isfinite(cy)
            if bool(finite.any()):
                worst = max(worst, float((cx[finite] - cy[finite]).abs().max()))
    return verdict, (worst if verdict != "equal" else 0.0)


def _finite(output) -> bool:
    return all(bool(torch.isfinite(t[lo:lo + CHUNK]).all())
               for t in (x.detach().reshape(-1) for x in _tensors(output)
                         if x.is_floating_point() or x.is_complex())
               for lo in range(0, t.numel(), CHUNK))


def _forward(model, values, device) -> tuple:
    synchronize(device)
    start = time.perf_counter()
    output = call_reference(model, values, device)  # synchronizes; invalid_task on failure
    return output, time.perf_counter() - start


def run_reference(model, make, seed: int, device, meter) -> dict:
    """The reference's facts (result `reference`, less `weak_task`/`finite`), and keeps
    `output` (run A's) for the caller. At most one input set and two outputs live at once.
    A: seed, inputs, re-seed, forward (first-call time, peak memory). B: the same inputs,
    forward after seeding with another seed (warm time; equal to A unless the forward draws
    random numbers or is not reproducible). C (only if B differs): A again, re-seeded.
    D: inputs of seed + 1 (the output must change)."""
    values = make(seed)
    before = inputs.fingerprint(values)
    seed_all(seed)
    output, first_s = _forward(model, values, device)
    facts = {"first_call_s": round(first_s, 6), "peak_bytes": meter.peak(),
             "peak_method": meter.method, "inputs_generated": make.where,
             "inputs_fallback_reason": make.fallback_reason,
             "inputs": {"count": len(_tensors(values)), "bytes": _nbytes(values)},
             "outputs": {"count": len(_tensors(output)), "bytes": _nbytes(output)},
             "writes_inputs": inputs.fingerprint(values) != before}
    del values
    again = make(seed)
    facts["inputs_reproducible"] = inputs.fingerprint(again) == before
    seed_all(seed + 7919)
    repeat, warm_s = _forward(model, again, device)
    facts["seconds"] = round(warm_s, 6)
    facts["repeat"], facts["max_abs_diff"] = compare(output, repeat)
    del again, repeat
    facts["reseeded"] = None
    if facts["repeat"] == "differ":
        again = make(seed)
        seed_all(seed)
        facts["reseeded"] = compare(output, _forward(model, again, device)[0])[0]
        del again
    facts["deterministic"] = facts["repeat"] != "differ"
    other = make(seed + 1)
    facts["inputs_vary"] = inputs.fingerprint(other) != before
    seed_all(seed + 1)
    verdict, diff = compare(output, _forward(model, other, device)[0])
    facts["input_sensitive"], facts["sensitivity_max_abs_diff"] = verdict == "differ", diff
    facts["output"] = output
    return facts


def _build(task, device, seed: int):
    """Model(*get_init_inputs()) as the verifier builds it: seeded, on a GPU under
    `torch.device(device)` (parameters made there), on the host when that raises; moved."""
    def build():
        seed_all(seed)
        return loader.construct_reference(task, loader.init_inputs(task))
    model = None
    if device.type == "cuda":
        try:
            with torch.device(device):
                model = build()
        except Exception:  # noqa: BLE001 - host-only constructor code: retried on the host
            model = None
    model = build() if model is None else model
    try:
        return model.to(device)
    except Exception as exc:  # noqa: BLE001
        raise Failure.from_exception("invalid_task", "invalid_task",
                                     "task: moving Model to the device", exc) from None


def _nbytes(value) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(value))


def _stop(at: str, failure: Failure | None = None, oom: bool = False) -> dict:
    """The facts' `stop`: where the child stopped, the failure's reason and error."""
    if failure is None:
        return {"at": at}
    out = {"at": at, "reason": failure.reason, "error": failure.error()}
    return {**out, "out_of_memory": oom} if at == "reference" else out


def _reference(task, device, options: dict, facts: dict) -> None:
    """The reference's facts, with the finite and weak outputs and the peak after them."""
    from ..run.extra_checks import weak_task
    meter = footprint.PeakMeter(device)
    meter.start()
    try:
        model = _build(task, device, options["seed"])
        ref = run_reference(model, InputMaker(task, device), options["seed"], device, meter)
    except Failure as failure:
        oom = "OutOfMemoryError" in failure.reason or "can't allocate memory" in failure.reason
        facts["stop"] = _stop("reference", failure, oom)
        return
    output = ref.pop("output")
    ref["finite"], ref["weak_task"] = _finite(output), weak_task(output)
    del output
    ref["check_peak_bytes"] = meter.peak()
    facts["reference"] = ref


def _execute(task_path: str, device, options: dict, channel, facts: dict) -> None:
    try:
        task = loader.load_task(task_path)
    except Failure as failure:
        facts["stop"] = _stop("load", failure)
        return
    fp = facts["footprint"] = footprint.measure(task)
    facts["device"] = device_facts(device, options)
    facts["budget"] = footprint.budget(fp, facts["device"].get("available_bytes"))
    if facts["budget"]["fits"] is False:  # the up-front rule: stop before any task tensor exists
        facts["stop"] = _stop("fits")
        return
    channel.event("footprint", {k: facts[k] for k in ("footprint", "budget", "device")})
    _reference(task, device, options, facts)
    if facts["reference"] is not None:
        channel.event("reference", facts["reference"])


def task_check_op(request: dict, channel) -> dict:
    """Handle a `task_check` request: events `footprint` and `reference` as they are
    known, then {"ok": true, "task_facts": {...}} (docs/worker-protocol.md); ok false only
    for a cuda request without a visible GPU (kind not_run)."""
    task_path, device_name, options = parse_request(request)
    start = time.monotonic()
    device = torch.device("cuda:0" if device_name == "cuda" else "cpu")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            return {"type": "result", "ok": False, "error": {
                "kind": "not_run", "message": "device cuda requested but no GPU is visible"}}
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    facts = {"version": VERSION, "stop": None, "footprint": None, "budget": None, "device": {},
             "reference": None}
    with torch.no_grad():
        _execute(task_path, device, options, channel, facts)
    facts["seconds"] = round(time.monotonic() - start, 6)
    return {"type": "result", "ok": True, "task_facts": facts}
