"""Op `baseline`: per-call times of a task's reference `Model`, eager and under
`torch.compile` (default mode), for `kz bench baseline` (docs/worker-protocol.md).

The method is the verifier's reference timing (run/op.py, run/timed.py, run/timing.py): the
model built right after seeding with `seed`, TF32 off, `torch.no_grad()`, the timed
input pool (POOL_SIZE sets made with seeds seed, seed + 1, ..., one per call in turn,
the last output of each slot kept alive), `warmup` calls, then blocks of timing.BLOCK
calls through the native kz_rt_* timer (CUDA events, device sync around each call, L2
flush before it). On the CPU each call is timed with time.perf_counter instead. Each
mode gets one untimed first call first (where torch.compile compiles). The raw per-call
times go back; the supervisor computes the statistics and owns the files.
"""

import time

import torch

from .. import loader
from ..failure import Failure, is_cuda_error, traceback_tail
from ..protocol import ProtocolError
from ..run import correctness
from ..run import timing as timing_module
from ..run.op import device_info, prepare_timing
from ..run.timed import POOL_SIZE

MODES = ("eager", "compile")
BLOCK = timing_module.BLOCK  # calls per timed block
CPU_METHOD = "cpu wall clock (time.perf_counter) per call"
DEFAULTS = {"seed": 42, "warmup": 3, "trials": 100, "budget_s": 60.0}


def parse_request(request: dict) -> tuple:
    """(task_path, device, modes, options); raises ProtocolError when malformed."""
    task_path, device, modes = request.get("task_path"), request.get("device"), request.get("modes")
    if not isinstance(task_path, str):
        raise ProtocolError(f"task_path: expected a string, got {task_path!r}")
    if device not in ("cuda", "cpu"):
        raise ProtocolError(f"device: expected cuda or cpu, got {device!r}")
    if not isinstance(modes, list) or not modes or any(m not in MODES for m in modes):
        raise ProtocolError(f"modes: expected a non-empty list of eager/compile, got {modes!r}")
    raw = request.get("options") or {}
    if not isinstance(raw, dict):
        raise ProtocolError("options must be an object")
    options = dict(DEFAULTS)
    for key, value in raw.items():
        if key not in DEFAULTS:
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or (key != "budget_s" and not isinstance(value, int)) or \
                value < (0 if key in ("seed", "warmup") else 1e-9):
            raise ProtocolError(f"options.{key}: invalid value {value!r}")
        options[key] = value
    return task_path, device, list(dict.fromkeys(modes)), options


class CpuTimer:
    """time_calls(fn, n) -> (ms, ms) with perf_counter, the native timer's interface."""
    method = CPU_METHOD

    @staticmethod
    def time_calls(fn, n):
        out = []
        for _ in range(n):
            start = time.perf_counter()
            fn()
            out.append((time.perf_counter() - start) * 1000.0)
        return out, out


class NativeTimer:
    """The verifier's native timer (loaded by run.prepare_timing before any task code)."""

    def __init__(self, timing):
        self.native = timing._STATE["native"]  # pylint: disable=protected-access
        self.native.ensure_init(timing._device_ordinal(), timing.FLUSH_BYTES)  # noqa: SLF001
        self.method = timing.METHOD

    def time_calls(self, fn, n):
        return self.native.time_calls(fn, n)


def rotating(model, pool):
    """A zero-argument forward over the next input set of `pool`, keeping the last output
    of each slot alive (as timed.py does for the verifier's timing)."""
    state, outputs = {"calls": 0}, {}

    def forward():
        slot = state["calls"] % len(pool)
        state["calls"] += 1
        outputs[slot] = model(*pool[slot])
    return forward


def time_calls(timer, fn, *, warmup, trials, budget_s, clock=time.monotonic) -> list:
    """`warmup` calls, then blocks of BLOCK timed calls until `trials` calls are timed or
    `budget_s` (counted from the warm-up) has passed after at least one block."""
    start = clock()
    if warmup:
        timer.time_calls(fn, warmup)
    ms = []
    while len(ms) < trials and (not ms or clock() - start < budget_s):
        ms += timer.time_calls(fn, min(BLOCK, trials - len(ms)))[0]
    return ms


def _error(kind: str, what: str, exc: BaseException) -> dict:
    """A mode's error; the message keeps every line of the exception's text (inductor's
    first line alone says little), joined, at most 1000 characters."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    message = f"{what} raised {type(exc).__name__}" + (f": {text[:1000]}" if text else "")
    return {"status": "error", "error": {"kind": kind, "message": message,
                                         "traceback": traceback_tail(exc)}}


def time_mode(mode, model, task, device, options, timer) -> dict:
    """One mode's times: {"status": "ok", "ms": [...], "method", "first_call_s",
    "seconds"}, or {"status": "error", "error": {"kind", "message", "traceback"}} with
    kind compile_error (torch.compile's first call raised), runtime_error, or timing."""
    start = time.monotonic()
    pool = correctness.input_pool(task, options["seed"], device, POOL_SIZE)
    fn = model
    try:
        if mode == "compile":
            fn = torch.compile(model)
        forward = rotating(fn, pool)
        forward()
        correctness.synchronize(device)
    except Exception as exc:  # noqa: BLE001 - classified and reported
        return _error("compile_error" if mode == "compile" else "runtime_error",
                      f"{mode}: first call", exc)
    first_call_s = time.monotonic() - start
    try:
        ms = time_calls(timer, forward, warmup=options["warmup"], trials=options["trials"],
                        budget_s=options["budget_s"])
    except Exception as exc:  # noqa: BLE001
        harness = isinstance(exc, timing_module.TimingError) and exc.__cause__ is None
        return _error("timing" if harness and not is_cuda_error(exc) else "runtime_error",
                      f"{mode}: timed calls", exc.__cause__ or exc)
    return {"status": "ok", "ms": [round(x, 6) for x in ms], "method": timer.method,
            "first_call_s": round(first_call_s, 3), "seconds": round(time.monotonic() - start, 3)}


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo ("cpu" when unknown)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def baseline_op(request: dict, channel) -> dict:
    """Handle a `baseline` request: an `event` (stage = the mode) as each mode ends, then
    {"ok": true, "modes": {mode: ...}, "device": {...}}; a task that cannot be loaded or
    built gives {"ok": false, "error": {"kind": "invalid_task", ...}}."""
    task_path, device_name, modes, options = parse_request(request)
    timing, reason = prepare_timing(device_name)  # before any task code, as run/op.py
    device = torch.device("cuda:0" if device_name == "cuda" else "cpu")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            return {"type": "result", "ok": False,
                    "error": {"kind": "not_run", "message": "device cuda requested but no GPU is visible"}}
        if timing is None:
            return {"type": "result", "ok": False, "error": {"kind": "timing", "message": reason}}
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    info = device_info(device)
    info["hardware"] = info.get("name") or cpu_name()
    info["device"] = str(device)
    results = {}
    try:
        with torch.no_grad():
            task = loader.load_task(task_path)
            correctness.seed_all(options["seed"])
            inputs = loader.init_inputs(task)
            correctness.seed_all(options["seed"])
            model = loader.construct_reference(task, inputs)
            try:
                model.to(device)
            except Exception as exc:  # noqa: BLE001
                raise Failure.from_exception("invalid_task", "invalid_task",
                                             "task: moving Model to the device", exc) from None
            try:
                timer = NativeTimer(timing) if device.type == "cuda" else CpuTimer()
            except Exception as exc:  # noqa: BLE001
                raise Failure.from_exception("error", "timing", "timing runtime", exc) from None
            for mode in modes:
                results[mode] = time_mode(mode, model, task, device, options, timer)
                channel.event(mode, results[mode])
    except Failure as failure:
        return {"type": "result", "ok": False, "modes": results, "device": info,
                "error": failure.error() or {"kind": failure.status, "message": failure.reason}}
    return {"type": "result", "ok": True, "modes": results, "device": info}
