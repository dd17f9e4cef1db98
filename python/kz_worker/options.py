"""The `run` request and its `options`, parsed and validated.

Missing options take the defaults of docs/worker-protocol.md; a field of the wrong
type raises ProtocolError (answered with an error of kind `protocol`).
"""

from dataclasses import dataclass, field, fields

from .protocol import ProtocolError


@dataclass
class Options:
    """`options` of a run request; tolerances None mean the per-dtype defaults."""
    trials: int = 5
    seed: int = 42
    atol: float | None = None
    rtol: float | None = None
    rel_l2: float | None = None
    timing: bool = True
    warmup: int = 3
    min_calls: int = 30
    max_calls: int = 2000
    timing_budget_s: float = 10.0
    stable_rel: float = 0.01
    ci_rel: float = 0.0               # > 0: adaptive timing, stop once both medians' 95 %
                                      # intervals have half-width <= ci_rel x median
    gpu_mem_fraction: float | None = None
    policy: str = "strict"            # integrity policy: strict | kernelbench
    min_candidate_share: float = 0.5  # strict: candidate's share of compute kernel time
    integrity: bool = True            # False: no trace, dataflow, extra checks, timed recheck
                                      # or host cross-check (the baseline of bench/integrity)
    self_check: bool = False          # the task's Model is the candidate; no launch trace
    gate: bool = False                # share the GPU through the supervisor's GPU gate
                                      # (docs/throughput.md): shared before load, exclusive
                                      # for timing, released after it
    footprint_bytes: int = 0          # this sample's GPU footprint, for the gate's budget


_OPTIONAL = {"atol", "rtol", "rel_l2", "gpu_mem_fraction"}
_FLOATS = {"atol", "rtol", "rel_l2", "timing_budget_s", "stable_rel", "ci_rel", "gpu_mem_fraction",
           "min_candidate_share"}
POLICIES = ("strict", "kernelbench")


def _check(name: str, value):
    if value is None and name in _OPTIONAL:
        return None
    if name == "policy":
        if value not in POLICIES:
            raise ProtocolError(f"options.policy: expected strict or kernelbench, got {value!r}")
        return value
    if name in ("timing", "integrity", "self_check", "gate"):
        ok = isinstance(value, bool)
    elif name in _FLOATS:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        minimum = 1 if name == "trials" else 0
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    if ok and name == "gpu_mem_fraction":
        ok = 0 < value <= 1
    if ok and name == "min_candidate_share":
        ok = 0 <= value <= 1
    if not ok:
        raise ProtocolError(f"options.{name}: invalid value {value!r}")
    return float(value) if name in _FLOATS else value


def parse_options(raw) -> Options:
    """Build Options from the request's `options` object (unknown keys are ignored)."""
    if raw is None:
        return Options()
    if not isinstance(raw, dict):
        raise ProtocolError("options must be an object")
    known = {f.name for f in fields(Options)}
    return Options(**{k: _check(k, v) for k, v in raw.items() if k in known})


@dataclass
class RunRequest:
    """A validated `run` request."""
    task_path: str
    candidate_path: str
    backend: str
    device: str
    prebuilt: list = field(default_factory=list)
    options: Options = field(default_factory=Options)


def _string(request: dict, key: str, choices=None) -> str:
    value = request.get(key)
    if not isinstance(value, str) or (choices and value not in choices):
        expected = " or ".join(choices) if choices else "a string"
        raise ProtocolError(f"{key}: expected {expected}, got {value!r}")
    return value


def _prebuilt(raw) -> list:
    raw = [] if raw is None else raw
    if not isinstance(raw, list):
        raise ProtocolError("prebuilt must be a list")
    for entry in raw:
        if not isinstance(entry, dict) or not all(
                isinstance(entry.get(k), str) for k in ("digest", "name", "library")):
            raise ProtocolError(f"prebuilt entry needs digest, name, library: {entry!r}")
    return raw


def parse_run_request(request: dict) -> RunRequest:
    """Validate a `run` request; raises ProtocolError on a missing or malformed field."""
    return RunRequest(
        task_path=_string(request, "task_path"),
        candidate_path=_string(request, "candidate_path"),
        backend=_string(request, "backend", ("cuda", "triton")),
        device=_string(request, "device", ("cuda", "cpu")),
        prebuilt=_prebuilt(request.get("prebuilt")),
        options=parse_options(request.get("options")),
    )
