"""Op `validate`: stages 2 (runnable) and 3 (numerically stable) of the curriculum's
validation for many proposed modules, each in a fresh process (docs/curriculum.md,
"Validation"). The facts only: the C++ side (curriculum/validate_rules) decides.

One parent imports torch once, then forks a child per module (a fresh process with torch
already imported: ~1 s of import saved per module). The child leads its own process group,
has the protocol channel closed, stdout/stderr on /dev/null, an address-space limit of its
current size + `memory_bytes`, and `timeout_s` of wall time; the parent kills its group
when it ends or overruns. A child that dies without a result is reported with its end.

Request: {"op": "validate", "device": "cpu" | "cuda", "modules": [{"path": "/abs/m.py"}],
          "options": {"seed": 42, "timeout_s": 30, "memory_bytes": 4294967296,
                      "max_total_bytes": 1073741824}}
Result:  {"ok": true, "version": 1, "modules": [FACTS, ...]}; each also sent as an event
"module" as it is known. FACTS = {"path", "end": "result" | "timeout" | "crashed",
  "exit": str | None, "seconds", "load_error", "footprint": {"method", "total_bytes", ...},
  "skipped_run": None | "too_large", "run_error", "reference": run_reference's facts,
  "finite", "weak_task", "fp64": {"rel_l2", "max_abs"} | {"error"}}
"""

import json
import os
import resource
import select
import signal
import sys
import time

from ..protocol import ProtocolError

VERSION = 1
DEFAULTS = {"seed": 42, "timeout_s": 30, "memory_bytes": 4 << 30, "max_total_bytes": 1 << 30}


def _options(request: dict) -> dict:
    raw = request.get("options") or {}
    if not isinstance(raw, dict):
        raise ProtocolError("options must be an object")
    out = dict(DEFAULTS)
    for key in DEFAULTS:
        value = raw.get(key)
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                raise ProtocolError(f"options.{key}: invalid value {value!r}")
            out[key] = value
    return out


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _die_with_parent() -> None:
    """PR_SET_PDEATHSIG = SIGKILL: a child in its own process group is out of reach of the
    supervisor's group kill; if this parent dies (killed at its wall-time limit), the child
    dies with it instead of looping on unsupervised."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG


def _cuda_context() -> None:
    """Makes this child's CUDA context (the parent has none: it would not survive the fork).
    CUDA reserves tens of GiB of virtual address space when it starts, so the address-space
    limit is set after it, counting only what the module allocates on the host."""
    import torch
    torch.cuda.init()
    torch.empty(1, device="cuda")


def _child(path: str, device_name: str, options: dict, write_fd: int, channel_fd: int) -> None:
    """In the forked child: limits, then the facts as JSON on write_fd; never returns."""
    try:
        _die_with_parent()
        os.setpgid(0, 0)
        os.close(channel_fd)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child's life
        if device_name == "cuda":
            _cuda_context()  # before the limit: the driver reserves a large address space
        if int(options["memory_bytes"]) > 0:  # 0: no address-space limit
            limit = _address_space() + int(options["memory_bytes"])
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        from .validate_facts import module_facts
        facts = module_facts(path, device_name, options)
        data = json.dumps(facts, default=str).encode()
    except BaseException as exc:  # noqa: BLE001 - anything: reported, never raised
        data = json.dumps({"child_error": f"{type(exc).__name__}: {exc}"}).encode()
    try:
        os.write(write_fd, data)
    finally:
        os._exit(0)


def _read_until(fd: int, deadline: float) -> tuple:
    """(bytes, timed_out): everything written to fd until EOF or the deadline."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)


def _end(status: int) -> str:
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return f"exit {os.WEXITSTATUS(status)}"


def _one(path: str, device_name: str, options: dict, channel) -> dict:
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(path, device_name, options, write_fd, channel.fd)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also here: the group exists before any kill below
    except OSError:
        pass
    data, timed_out = _read_until(read_fd, start + float(options["timeout_s"]))
    os.close(read_fd)
    try:
        os.killpg(pid, signal.SIGKILL)  # its forks too; harmless when it already exited
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    facts = {"path": path, "seconds": round(time.monotonic() - start, 4), "exit": _end(status)}
    if timed_out:
        facts["end"] = "timeout"
        return facts
    try:
        facts.update(json.loads(data.decode()))
        facts["end"] = "result"
    except ValueError:
        facts["end"] = "crashed"
    return facts


def _warm_up(options: dict) -> None:
    """Import torch and check validate_warmup.py here, once, before the forks. Always on the
    CPU, also for device cuda: a CUDA context made here would be unusable in the forked
    children (each child makes its own)."""
    import torch  # noqa: F401

    from . import validate_facts
    path = os.path.join(os.path.dirname(__file__), "validate_warmup.py")
    try:
        validate_facts.module_facts(path, "cpu", options)
    except Exception:  # noqa: BLE001 - a warm-up only: the children meet any real problem
        pass


def validate_op(request: dict, channel) -> dict:
    modules = request.get("modules")
    if not isinstance(modules, list) or not all(isinstance(m, dict) and isinstance(m.get("path"), str)
                                                for m in modules):
        raise ProtocolError("modules: expected a list of {\"path\": str}")
    device_name = request.get("device", "cpu")
    if device_name not in ("cpu", "cuda"):
        raise ProtocolError(f"device: expected cuda or cpu, got {device_name!r}")
    options = _options(request)
    _warm_up(options)
    out = []
    for m in modules:
        facts = _one(m["path"], device_name, options, channel)
        channel.event("module", facts)
        out.append(facts)
    return {"type": "result", "ok": True, "version": VERSION, "modules": out}
