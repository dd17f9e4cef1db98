"""Task inputs: generated where they are used, and fingerprinted (docs/memory.md).

`generate(task, seed, device)` seeds every RNG and calls `get_inputs()` under
`torch.device(device)`, so that tensor factories (`torch.randn`, `torch.rand`, ...) allocate
straight on the GPU: a 6 GB input set is never built on the host and copied. The values
differ from a host-generated set with the same seed but follow the same distribution, and
two calls with the same seed on the same device give identical tensors. A task whose
`get_inputs` fails under the device context (host-only code such as numpy) falls back to
host generation and a copy, decided once per task and reported by `origin(task, device)`.

`fingerprint(inputs)` is an exact-match digest of an input set that costs no copy of it:
per tensor, two 64-bit sums of its raw bits (one position-weighted), chunk by chunk on
its device. A change of any element is caught unless it preserves both sums.
"""

import torch

from ..failure import Failure
from .compare import chunks

_ORIGIN = {}  # (id(get_inputs), device type) -> {"where": "device"|"host", "reason": str}
_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_WEIGHT_MOD = 65521  # position weights 1..65521 (a prime: shifts change the weighted sum)


def to_device(value, device):
    """Move tensors in (nested lists/tuples of) `value` to `device`."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(v, device) for v in value)
    return value


def _call(task, on_device):
    if on_device is None:
        return task.get_inputs()
    with on_device:
        return task.get_inputs()


def _get_inputs(task, device: torch.device):
    """get_inputs() under the device context (host fallback, remembered per task)."""
    key = (id(task.get_inputs), device.type)
    origin = _ORIGIN.get(key)
    if device.type == "cpu" or (origin and origin["where"] == "host"):
        return _call(task, None)
    if origin is not None:
        return _call(task, torch.device(device))
    try:
        inputs = _call(task, torch.device(device))
        _ORIGIN[key] = {"where": "device", "reason": "get_inputs() ran under torch.device"}
        return inputs
    except Exception as exc:  # host-only code: generate there, then copy
        _ORIGIN[key] = {"where": "host", "reason": f"get_inputs() failed under torch.device "
                        f"({type(exc).__name__}: {str(exc)[:200]}); generated on the host"}
        return None


def generate(task, seed: int, device: torch.device, seed_all) -> list:
    """Seed (`seed_all(seed)`), call get_inputs() and return the inputs on `device`;
    Failure(invalid_task) when get_inputs raises or returns no list."""
    seed_all(seed)
    try:
        inputs = _get_inputs(task, device)
        if inputs is None:  # the device attempt failed: host generation, seeded again
            seed_all(seed)
            inputs = _call(task, None)
    except BaseException as exc:
        raise Failure.from_exception("invalid_task", "invalid_task", "task: get_inputs()",
                                     exc) from None
    if not isinstance(inputs, (list, tuple)):
        raise Failure("invalid_task", "invalid_task",
                      f"task: get_inputs() returned {type(inputs).__name__}, not a list")
    return to_device(list(inputs), device)


def origin(task, device: torch.device) -> dict:
    """Where this task's inputs were generated ({"where", "reason"})."""
    if device.type == "cpu":
        return {"where": "host", "reason": "CPU run"}
    return dict(_ORIGIN.get((id(task.get_inputs), device.type),
                            {"where": "unknown", "reason": "no input generated yet"}))


def _tensor_digest(t: torch.Tensor) -> tuple:
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    size = t.element_size()
    bits = t.view(_INT_VIEW[size]) if size in _INT_VIEW and t.dtype != torch.bool \
        else t.to(torch.uint8)
    s1 = s2 = torch.zeros((), dtype=torch.int64, device=t.device)
    for offset, (piece,) in chunks([bits]):
        wide = piece.to(torch.int64)
        weights = torch.arange(offset, offset + wide.numel(), device=t.device) % _WEIGHT_MOD + 1
        s1 = s1 + wide.sum()
        s2 = s2 + (wide * weights).sum()
    return (str(t.dtype), tuple(t.shape), int(s1), int(s2))


def fingerprint(inputs) -> list:
    """One digest per element of `inputs` (tensors: dtype, shape and two bit sums; other
    values: their type and repr)."""
    out = []
    for value in inputs:
        if isinstance(value, torch.Tensor):
            out.append(_tensor_digest(value))
        elif isinstance(value, (list, tuple)):
            out.append(tuple(fingerprint(value)))
        else:
            out.append((type(value).__name__, repr(value)))
    return out


def first_difference(a: list, b: list):
    """Index of the first element whose digest differs between two fingerprints, or None."""
    if len(a) != len(b):
        return min(len(a), len(b))
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def nbytes(value) -> int:
    """Bytes of the tensors in (nested lists/tuples of) `value`."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    return 0
