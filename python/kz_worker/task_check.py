"""Op `task_check`: can kz judge this task on this device, and what does it cost?
(`kz task check`, docs/worker-protocol.md; reused by the curriculum's validation.)

Steps, each only after the previous one passed (a failing check makes the status
`invalid_task`; warnings only add flags):
1. load the task (`loader.load_task`); 2. its footprint, nothing allocated (`footprint.measure`);
3. the up-front rule (`footprint.budget`: 3 x (inputs + outputs) + 2 x params) must fit the
   memory available (cuda: torch.cuda.mem_get_info's free; cpu: `footprint.host_memory`),
   else refused before any task tensor exists;
4. the reference on the device (`run_reference`): time and peak memory of a forward,
   determinism, input sensitivity, finite outputs, the weak-task flag, and the measured rule
   (reference peak + 2 x (inputs + outputs) + params).

The result object's version is VERSION; fields are documented in docs/worker-protocol.md.
"""

import time
import types

import torch

from . import footprint, inputs, loader
from .compare import tolerance
from .correctness import call_reference, seed_all, synchronize
from .failure import Failure
from .footprint import RULE, human_bytes
from .protocol import ProtocolError

VERSION = 1
MEASURED_RULE = "reference peak + 2 x (inputs + outputs) + params"
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
    from .baseline import cpu_name
    from .run import device_info
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


def _num(x) -> str:
    return "?" if x is None else f"{x:.3g}"


def _nbytes(value) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(value))


class _State:
    """The result being built: checks in order; the first failing one decides."""

    def __init__(self, task_path: str):
        self.task_path = task_path
        self.checks, self.flags = [], []
        self.footprint = self.budget = self.reference = None
        self.device = {}
        self.status, self.reason, self.error = "ok", None, None

    def add(self, name: str, status: str, detail: str, flag: str | None = None) -> None:
        self.checks.append({"check": name, "status": status, "detail": detail})
        if flag:
            self.flags.append(flag)

    def refuse(self, name: str, detail: str, flag: str | None = None):
        """Record a failing check and stop: status invalid_task, reason `detail`."""
        self.add(name, "fail", detail, flag)
        raise Failure("invalid_task", None, f"{name}: {detail}")

    def result(self, seconds: float) -> dict:
        return {"version": VERSION, "status": self.status, "reason": self.reason,
                "task": {"path": self.task_path}, "footprint": self.footprint,
                "budget": self.budget, "device": self.device, "reference": self.reference,
                "checks": self.checks, "flags": self.flags, "error": self.error,
                "seconds": round(seconds, 6)}


def _load(state: _State):
    try:
        task = loader.load_task(state.task_path)
    except Failure as failure:
        state.add("load", "fail", failure.reason)
        raise
    state.add("load", "pass", "Model, get_inputs and get_init_inputs defined")
    return task


def _footprint_checks(state: _State, fp: dict) -> None:
    """Checks `footprint` and `fits` (the up-front rule); refuses a task that cannot fit."""
    b, dev = state.budget, state.device
    if fp["method"] == "unknown":
        state.add("footprint", "warn", f"not measurable before allocation: {fp['reason']}",
                  "footprint_unknown")
    else:
        sizes = ", ".join(f"{k} {human_bytes(fp[k]['bytes'])}"
                          for k in ("inputs", "params", "outputs"))
        state.add("footprint", "pass", f"{fp['method']}: {sizes}")
    where = f"{human_bytes(b['available_bytes'])} available ({dev.get('available_source')})"
    numbers = f"needs {human_bytes(b['need_bytes'])} = {RULE}"
    if b["fits"] is False:
        lower = "" if b["complete"] else " (a lower bound: outputs unknown)"
        state.refuse("fits", f"{numbers}{lower}, more than the {where}", "too_large")
    if b["fits"] is None:
        state.add("fits", "skip", f"footprint incomplete ({numbers} known so far); the run's own "
                  "limits apply")
    else:
        state.add("fits", "pass", f"{numbers}, {where}")


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


def _determinism_checks(state: _State, facts: dict) -> None:
    """Checks `reference_runs`, `inputs_reproducible`, `deterministic`, `input_sensitive`;
    refuses a reference whose inputs or output depend on more than the seed."""
    note = f"inputs made on the {facts['inputs_generated']}"
    if facts["inputs_fallback_reason"]:
        note += f" ({facts['inputs_fallback_reason']})"
    state.add("reference_runs", "pass", f"{facts['seconds'] * 1e3:.4g} ms a call (first "
              f"{facts['first_call_s'] * 1e3:.4g} ms), peak {human_bytes(facts['peak_bytes'])}; "
              f"{note}")
    if not facts["inputs_reproducible"]:
        state.refuse("inputs_reproducible", "get_inputs() gives other inputs under the same seed",
                     "nondeterministic")
    repeat, diff = facts["repeat"], facts["max_abs_diff"]
    if repeat == "differ":
        why = ("the forward draws random numbers (dropout in training mode, randperm, ...): "
               "its output changes with the RNG state") if facts["reseeded"] == "equal" else \
            "two calls on the same inputs, even re-seeded, give different outputs"
        state.refuse("deterministic", f"{why} (max |diff| {_num(diff)})", "nondeterministic")
    if repeat == "close":
        state.add("deterministic", "warn", f"not bitwise reproducible, within the verifier's "
                  f"tolerance (max |diff| {diff:.3g}; reduction order or atomics)",
                  "not_bitwise_reproducible")
    else:
        state.add("deterministic", "pass",
                  "the same inputs give the same output under any RNG state")
    if facts["input_sensitive"]:
        state.add("input_sensitive", "pass", "another seed gives another output")
        return
    diff = facts["sensitivity_max_abs_diff"]
    same = "identical" if diff == 0 else \
        f"within the verifier's tolerance (max |diff| {_num(diff)})"
    why = "the output does not depend on the inputs" if facts["inputs_vary"] else \
        "get_inputs gives the same inputs for every seed"
    state.add("input_sensitive", "warn", f"{why}: outputs for two seeds are {same}",
              "input_insensitive")


def _output_checks(state: _State, facts: dict, output) -> None:
    """Checks `finite` and `weak_task` (warnings: kz can judge, but says little)."""
    from .extra_checks import weak_task
    facts["finite"] = _finite(output)
    if facts["finite"]:
        state.add("finite", "pass", "every output is finite")
    else:
        state.add("finite", "warn", "the output holds NaN or Inf", "non_finite")
    facts["weak_task"] = weak_task(output)
    if facts["weak_task"]:
        state.add("weak_task", "warn", facts["weak_task"], "weak_task")
    else:
        state.add("weak_task", "pass", "the output is neither near zero nor near-constant")


def _measured_checks(state: _State, facts: dict, fp: dict) -> None:
    """Checks `fits_measured` (the reference's peak plus the candidate's copies must fit)
    and `footprint_matches` (the real sizes are the measured ones)."""
    params = (fp.get("params") or {}).get("bytes", 0)
    need = facts["peak_bytes"] + 2 * (facts["inputs"]["bytes"] + facts["outputs"]["bytes"]) + params
    available = state.budget["available_bytes"]
    state.budget.update(measured_rule=MEASURED_RULE, measured_need_bytes=need)
    detail = f"needs {human_bytes(need)} = {MEASURED_RULE}, {human_bytes(available)} available"
    if available is not None and need > available:
        state.refuse("fits_measured", detail, "too_large")
    state.add("fits_measured", "pass" if available is not None else "skip", detail)
    if fp["method"] == "unknown":
        return
    for key in ("inputs", "outputs"):
        group, real = fp[key], facts[key]
        if (group["count"], group["bytes"]) != (real["count"], real["bytes"]):
            state.add("footprint_matches", "warn", f"{key}: footprint {group['count']} tensors, "
                      f"{human_bytes(group['bytes'])}; real {real['count']}, "
                      f"{human_bytes(real['bytes'])}", "footprint_mismatch")
            return
    state.add("footprint_matches", "pass", "the real inputs and outputs have the measured sizes")


def _execute(state: _State, device, options: dict, channel) -> None:
    task = _load(state)
    fp = state.footprint = footprint.measure(task)
    state.device = device_facts(device, options)
    state.budget = footprint.budget(fp, state.device.get("available_bytes"))
    _footprint_checks(state, fp)  # may refuse: then the result frame carries it all
    channel.event("footprint", {"footprint": fp, "budget": state.budget, "device": state.device,
                                "checks": list(state.checks), "flags": list(state.flags)})
    meter = footprint.PeakMeter(device)
    meter.start()
    try:
        model = _build(task, device, options["seed"])
        facts = run_reference(model, InputMaker(task, device), options["seed"], device, meter)
    except Failure as failure:
        oom = "OutOfMemoryError" in failure.reason or "can't allocate memory" in failure.reason
        state.add("reference_runs", "fail", failure.reason, "too_large" if oom else None)
        raise
    output = facts.pop("output")
    state.reference = facts
    _determinism_checks(state, facts)
    _output_checks(state, facts, output)
    del output
    facts["check_peak_bytes"] = meter.peak()
    _measured_checks(state, facts, fp)
    channel.event("reference", facts)


def _summary(state: _State) -> str:
    ref, b = state.reference, state.budget
    text = (f"kz can judge this task on {state.device.get('name') or state.device.get('kind')}: "
            f"{ref['seconds'] * 1e3:.4g} ms a call, peak {human_bytes(ref['peak_bytes'])}, "
            f"needs {human_bytes(b.get('measured_need_bytes'))} of "
            f"{human_bytes(b['available_bytes'])}")
    return text + (f"; flags: {', '.join(state.flags)}" if state.flags else "")


def task_check_op(request: dict, channel) -> dict:
    """Handle a `task_check` request: events `footprint` and `reference` as they are
    known, then {"ok": true, "task_check": {...}} (docs/worker-protocol.md); ok false only
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
    state = _State(task_path)
    try:
        with torch.no_grad():
            _execute(state, device, options, channel)
        state.reason = _summary(state)
    except Failure as failure:
        state.status, state.reason, state.error = "invalid_task", failure.reason, failure.error()
    return {"type": "result", "ok": True, "task_check": state.result(time.monotonic() - start)}
