"""A task's memory footprint, measured before anything real is allocated.

`measure(task)` runs the task's `get_init_inputs()`, `Model(...)`, `get_inputs()` and the
forward with tensors that carry shapes and dtypes but no storage, and counts the bytes of
the inputs, the parameters and buffers, and the outputs. Two methods, in order:

1. `meta`: everything under a function mode that works as `with torch.device("meta")`
   (factory functions without an explicit device make meta tensors) and also refuses any
   factory call with an explicit non-meta device (`torch.randn(n, device="cpu")`) and any
   move to a real device (`.cuda()`, `.to("cpu")`) before it allocates; the attempt then
   fails and the next method runs.
2. `fake`: the same under `FakeTensorMode` (no fallback kernels), which intercepts every
   tensor creation, explicit devices included.

When both fail (data-dependent shapes: `.item()`, `int(t)`, `nonzero`, `torch.unique`;
an op without a meta kernel; task code that raises) the method is `unknown`, with the
reason, and the groups measured before the failure are kept (e.g. the inputs of a task
whose forward calls `nonzero`). It never raises for task problems.

Contract: takes a `loader.Task` (or any object with `model`/`Model`, `get_inputs`,
`get_init_inputs`); imports no candidate code; allocates none of the task's tensors
(memory a task makes outside torch, e.g. with numpy, cannot be intercepted); restores
torch's CPU RNG state and Python's and numpy's RNG states afterwards; importing this module
has no side effects (FakeTensorMode is imported only when needed). Cost: well under 1 s for
a KernelBench level-1 task (meta); the fake fallback adds ~1 s once per process.

Return value (JSON-serialisable; `version` 1):

    {"version": 1,
     "method": "meta" | "fake" | "unknown",
     "reason": None | str,          # unknown: why neither method worked; fake: why not meta
     "attempts": [{"method": "meta", "stage": "get_inputs", "error": "RuntimeError: ..."}],
     "seconds": float,
     "inputs":  GROUP | None,       # get_inputs(), flattened
     "params":  GROUP | None,       # parameters + buffers of Model(*get_init_inputs())
     "outputs": GROUP | None,       # the forward's result, flattened
     "total_bytes": int | None,     # inputs + params + outputs; None unless all three known
     "known_bytes": int,            # the sum over the groups that are known (a lower bound)
     "flops": int | None,           # the forward's FLOPs by torch's FlopCounterMode (matmul,
                                    # conv, attention families: elementwise work counts 0, so
                                    # an intensity from it is a lower bound); None: not run
     "flops_by_op": {"aten.mm": int, ...}}   # version 2 added the two flops fields

    GROUP = {"count": int,          # tensors
             "non_tensors": int,    # other leaves (ints, floats, None)
             "bytes": int,          # sum of numel * element_size (logical size: an
                                    # expanded view counts at its full size, as a clone would)
             "numel": int,
             "dtypes": {"float32": bytes, ...},
             "tensors": [{"index" | "name", "shape": [...], "dtype": str, "numel", "bytes"}],
             "truncated": bool}     # True when more than MAX_LISTED tensors exist
    params GROUP also has "parameters_bytes" and "buffers_bytes"; its entries have "name".

Leaves are flattened through tuples, lists and dict values, in order.
"""

import contextlib
import random
import resource
import sys
import time

import torch
from torch.overrides import TorchFunctionMode

VERSION = 2
MAX_LISTED = 64  # tensor entries listed per group; the totals always cover every tensor
STAGES = ("get_init_inputs", "Model constructor", "get_inputs", "forward")


class RealAllocation(RuntimeError):
    """Task code asked for a real (non-meta) device under the meta attempt."""


def _device_type(device):
    if isinstance(device, torch.Tensor):
        return device.device.type
    if isinstance(device, int) and not isinstance(device, bool):
        return "cuda"  # .to(0)
    return torch.device(device).type


def _move_target(func, args, kwargs):
    """The device type that Tensor.to/.cuda/.cpu is asked to move to, or None."""
    if func is torch.Tensor.cuda:
        return "cuda"
    if func is torch.Tensor.cpu:
        return "cpu"
    if kwargs.get("device") is not None:
        return _device_type(kwargs["device"])
    for value in args[1:2]:  # .to(device), .to(other), .to(dtype)
        if isinstance(value, (str, torch.device, torch.Tensor)) or type(value) is int:
            return _device_type(value)
    return None


class _MetaDefault(TorchFunctionMode):
    """Like `with torch.device("meta")` (factory functions without a device make meta
    tensors), and refuses, before it allocates, any factory call with an explicit
    non-meta device and any move of a tensor to a real device. A function mode, not a
    dispatch mode: a dispatch mode would import torch._dynamo (~1 s) on first use."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _constructors():
            device = kwargs.get("device")
            if device is None and not (func is torch.normal and any(
                    isinstance(a, torch.Tensor) for a in args)):
                kwargs["device"] = "meta"
            elif device is not None and _device_type(device) != "meta":
                raise RealAllocation(f"{_name(func)}(device={device!r}): an explicit device "
                                     "(not measurable on meta)")
        elif func in (torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu):
            target = _move_target(func, args, kwargs)
            if target not in (None, "meta"):
                raise RealAllocation(f"{_name(func)} to {target} (not measurable on meta)")
        return func(*args, **kwargs)


def _name(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", str(func))


def _constructors() -> set:
    """The factory functions `torch.device(...)` as a context redirects, and torch.normal
    (its size-only form also allocates on the default device)."""
    global _CONSTRUCTORS  # pylint: disable=global-statement
    if _CONSTRUCTORS is None:
        from torch.utils._device import _device_constructors
        _CONSTRUCTORS = set(_device_constructors()) | {torch.normal}
    return _CONSTRUCTORS


_CONSTRUCTORS = None


def leaves(value) -> list:
    """The leaves of `value` through tuples, lists and dict values, in order."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in leaves(item)]
    return [value]


def _dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _entry(tensor, key, label) -> dict:
    numel = tensor.numel()
    return {key: label, "shape": list(tensor.shape), "dtype": _dtype_name(tensor.dtype),
            "numel": numel, "bytes": numel * tensor.element_size()}


def group(labelled, key="index", non_tensors=0) -> dict:
    """A GROUP (see the module docstring) over (label, tensor) pairs."""
    out = {"count": 0, "non_tensors": non_tensors, "bytes": 0, "numel": 0, "dtypes": {},
           "tensors": [], "truncated": False}
    for label, tensor in labelled:
        entry = _entry(tensor, key, label)
        out["count"] += 1
        out["bytes"] += entry["bytes"]
        out["numel"] += entry["numel"]
        out["dtypes"][entry["dtype"]] = out["dtypes"].get(entry["dtype"], 0) + entry["bytes"]
        if len(out["tensors"]) < MAX_LISTED:
            out["tensors"].append(entry)
        else:
            out["truncated"] = True
    return out


def leaves_group(value) -> dict:
    """GROUP of the tensor leaves of `value` (indices are positions among all leaves)."""
    all_leaves = leaves(value)
    tensors = [(i, t) for i, t in enumerate(all_leaves) if isinstance(t, torch.Tensor)]
    return group(tensors, "index", len(all_leaves) - len(tensors))


def params_group(model) -> dict:
    """GROUP of `model`'s parameters and buffers (each shared tensor once)."""
    params = list(model.named_parameters())
    buffers = [(n, b) for n, b in model.named_buffers() if b is not None]
    out = group(params + buffers, "name")
    out["parameters_bytes"] = sum(p.numel() * p.element_size() for _, p in params)
    out["buffers_bytes"] = sum(b.numel() * b.element_size() for _, b in buffers)
    return out


@contextlib.contextmanager
def _rng_kept():
    """Restore torch's CPU RNG and Python's (and numpy's, if imported) afterwards."""
    torch_state, py_state = torch.random.get_rng_state(), random.getstate()
    numpy = sys.modules.get("numpy")
    np_state = numpy.random.get_state() if numpy is not None else None
    try:
        yield
    finally:
        torch.random.set_rng_state(torch_state)
        random.setstate(py_state)
        if np_state is not None:
            numpy.random.set_state(np_state)


def _describe(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    first = lines[0][:300] if lines else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _model_class(task):
    return getattr(task, "model", None) or task.Model


class _StageError(Exception):
    """Task code raised `exc` in `stage` of an attempt."""

    def __init__(self, stage, exc):
        super().__init__(stage)
        self.stage, self.exc = stage, exc


def _flop_counter():
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:  # an older torch: no FLOPs, nothing else lost
        return contextlib.nullcontext(None)
    return FlopCounterMode(display=False)


def _attempt(task, context, groups: dict, flops: dict) -> None:
    """Run the four stages under `context`, filling `groups` (and `flops` from the forward);
    raises (stage, exc)."""
    stage = STAGES[0]
    try:
        with context, torch.no_grad():
            init = task.get_init_inputs()
            stage = STAGES[1]
            model = _model_class(task)(*list(init))
            groups["params"] = params_group(model)
            stage = STAGES[2]
            inputs = task.get_inputs()
            groups["inputs"] = leaves_group(inputs)
            stage = STAGES[3]
            with _flop_counter() as counter:
                out = model(*list(inputs))
            groups["outputs"] = leaves_group(out)
            if counter is not None:
                flops["flops"] = int(counter.get_total_flops())
                flops["flops_by_op"] = {str(k): int(v) for k, v in counter.get_flop_counts().get("Global", {}).items()}
    except BaseException as exc:  # task code may raise anything
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _StageError(stage, exc) from None


def _meta_context():
    return _MetaDefault()


def _fake_context():
    from torch._subclasses.fake_tensor import FakeTensorMode
    return FakeTensorMode(allow_non_fake_inputs=True, allow_fallback_kernels=False)


def _known(groups: dict) -> int:
    return sum(g is not None for g in groups.values())


def _known_bytes(groups: dict) -> int:
    return sum(g["bytes"] for g in groups.values() if g is not None)


def measure(task) -> dict:
    """The footprint of `task` (see the module docstring for the returned object)."""
    start = time.monotonic()
    attempts, best = [], {}
    method, flops = "unknown", {"flops": None, "flops_by_op": {}}
    for name, make in (("meta", _meta_context), ("fake", _fake_context)):
        groups = {"inputs": None, "params": None, "outputs": None}
        counted = {"flops": None, "flops_by_op": {}}
        try:
            with _rng_kept():
                _attempt(task, make(), groups, counted)
        except _StageError as err:
            attempts.append({"method": name, "stage": err.stage, "error": _describe(err.exc)})
            if _known(groups) > _known(best):
                best = groups
            continue
        except Exception as exc:  # noqa: BLE001 - e.g. FakeTensorMode unavailable
            attempts.append({"method": name, "stage": "setup", "error": _describe(exc)})
            continue
        method, best, flops = name, groups, counted
        break
    best = {k: best.get(k) for k in ("inputs", "params", "outputs")}
    reason = None
    if attempts:
        reason = "; ".join(f"{a['method']}: {a['stage']} raised {a['error']}" for a in attempts)
    complete = all(g is not None for g in best.values())
    return {"version": VERSION, "method": method, "reason": reason, "attempts": attempts,
            "seconds": round(time.monotonic() - start, 6), **best,
            "total_bytes": _known_bytes(best) if complete else None,
            "known_bytes": _known_bytes(best), **flops}


# The up-front rule and the memory of real runs (used by task_check; no task code).

# NEED = IO_FACTOR x (inputs + outputs) + PARAM_FACTOR x params. 3: the verifier holds the
# reference's and the candidate's inputs and outputs plus one extra copy (a comparison's
# temporaries, a timing pool); 2: the reference and ModelNew each hold the parameters.
IO_FACTOR = 3
PARAM_FACTOR = 2
RULE = f"{IO_FACTOR} x (inputs + outputs) + {PARAM_FACTOR} x params"


def budget(fp: dict, available) -> dict:
    """The up-front rule over the footprint's known groups (a lower bound if incomplete)."""
    size = {k: (fp.get(k) or {}).get("bytes", 0) for k in ("inputs", "outputs", "params")}
    need = IO_FACTOR * (size["inputs"] + size["outputs"]) + PARAM_FACTOR * size["params"]
    complete = fp.get("total_bytes") is not None
    fits = None if available is None else need <= available
    if fits and not complete:
        fits = None  # a lower bound that fits proves nothing
    return {"rule": RULE, "need_bytes": need, "available_bytes": available,
            "complete": complete, "fits": fits}


def _kib_field(path: str, key: str):
    """Bytes of the `key: N kB` line of a /proc file (meminfo, self/status), or None."""
    try:
        with open(path, encoding="ascii") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _meminfo(key: str):
    return _kib_field("/proc/meminfo", key)


def _read_int(path: str):
    try:
        with open(path, encoding="ascii") as handle:
            text = handle.read().strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError):
        return None


def _status_bytes(key: str):
    """VmRSS / VmHWM of this process, bytes."""
    return _kib_field("/proc/self/status", key)


def host_memory(limit_bytes) -> dict:
    """The `device` memory fields on the CPU: what this child may still allocate."""
    rss = _status_bytes("VmRSS") or 0
    sources = {"mem_available": _meminfo("MemAvailable")}
    cg_max = _read_int("/sys/fs/cgroup/memory.max")
    cg_cur = _read_int("/sys/fs/cgroup/memory.current")
    if cg_max is not None and cg_cur is not None:
        sources["cgroup"] = max(0, cg_max - cg_cur)
    if limit_bytes:
        sources["host_limit"] = max(0, limit_bytes - rss)
    known = {k: v for k, v in sources.items() if v is not None}
    source = min(known, key=known.get) if known else None
    return {"available_bytes": known.get(source), "available_source": source,
            "mem_available_bytes": sources["mem_available"], "host_limit_bytes": limit_bytes,
            "rss_bytes": rss}


class PeakMeter:
    """Peak memory from `start()`: cuda: torch.cuda.max_memory_allocated after
    reset_peak_memory_stats (bytes held by tensors); cpu: the rise of the peak resident set
    (VmHWM, reset through /proc/self/clear_refs where allowed, else ru_maxrss) over the
    resident set at start."""

    def __init__(self, device: torch.device):
        self.device = device
        self.method = "torch.cuda.max_memory_allocated" if device.type == "cuda" else None
        self.base = 0

    def start(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            return
        self.base = _status_bytes("VmRSS") or 0
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
                handle.write("5")
            self.method = "VmHWM - VmRSS at start (high-water mark reset)"
        except OSError:
            self.base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            self.method = "ru_maxrss rise (a lower bound)"

    def peak(self) -> int:
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            return int(torch.cuda.max_memory_allocated())
        if self.method.startswith("VmHWM"):
            return max(0, (_status_bytes("VmHWM") or 0) - self.base)
        return max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - self.base)
