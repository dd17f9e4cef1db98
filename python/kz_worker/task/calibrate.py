"""Op `calibrate`: the roofline's ceilings measured on this device (docs/optimize.md,
"Roofline").

Request: {"op": "calibrate", "device": "cuda" | "cpu", "copy_bytes": int (optional),
"matmul_n": int (optional)}. Result: {"ok": true, "ceilings": {...}} with

- `copy_gbps`: device-to-device copy bandwidth, bytes read + bytes written per second / 1e9
  (`dst.copy_(src)` of `copy_bytes`, default 1 GiB on a GPU, 64 MiB on the CPU);
- `fp32_tflops`, `bf16_tflops`: the rate of an n x n x n matmul (2 n^3 FLOPs; default n 8192
  on a GPU, 512 on the CPU), fp32 with TF32 off (the verifier's own setting);
- `device`: name, `capability`, `torch`, `cuda` (the facts the control plane keys its cache
  by), `method`, `reps` and `seconds`.

Each figure is the median of `reps` timed repetitions after warm-up (CUDA events on a GPU, the
monotonic clock on the CPU). Measured, not datasheet peaks: what a kernel can attain here.
The control plane caches the result per device (src/optimize/roofline.h); this op holds no
cache and no policy. Errors: {"ok": false, "error": {"kind": "calibrate", "message"}}.
"""

import statistics
import time

import torch

from ..protocol import ProtocolError

REPS = 10
WARMUP = 3


def _positive(request: dict, key: str, default: int) -> int:
    value = request.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ProtocolError(f"{key}: expected a positive integer")
    return value


def _timed(fn, device: torch.device) -> float:
    """Median seconds of one call of `fn` over REPS repetitions."""
    for _ in range(WARMUP):
        fn()
    samples = []
    for _ in range(REPS):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
    return max(statistics.median(samples), 1e-9)


def _matmul_tflops(n: int, dtype, device: torch.device) -> float:
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    seconds = _timed(lambda: torch.mm(a, b, out=out), device)
    return 2.0 * n ** 3 / seconds / 1e12


def _copy_gbps(copy_bytes: int, device: torch.device) -> float:
    """Bytes read + written per second / 1e9 (the buffers are freed on return)."""
    src = torch.empty(copy_bytes, dtype=torch.uint8, device=device)
    src.random_(0, 256)
    dst = torch.empty_like(src)
    return 2.0 * copy_bytes / _timed(lambda: dst.copy_(src), device) / 1e9


def measure(device: torch.device, copy_bytes: int, matmul_n: int) -> dict:
    start = time.monotonic()
    copy_gbps = _copy_gbps(copy_bytes, device)
    info = {"kind": device.type, "torch": torch.__version__, "cuda": torch.version.cuda}
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        major, minor = torch.cuda.get_device_capability(device)
        info.update(name=torch.cuda.get_device_name(device), capability=f"{major}.{minor}")
    fp32 = _matmul_tflops(matmul_n, torch.float32, device)
    bf16 = _matmul_tflops(matmul_n, torch.bfloat16, device)
    return {"version": 1, "device": info, "copy_gbps": copy_gbps,
            "fp32_tflops": fp32, "bf16_tflops": bf16, "copy_bytes": copy_bytes, "matmul_n": matmul_n,
            "reps": REPS, "method": "median of timed repetitions after warm-up; copy counts read + write",
            "seconds": round(time.monotonic() - start, 3)}


def calibrate_op(request: dict) -> dict:
    kind = request.get("device", "cuda")
    if kind not in ("cuda", "cpu"):
        raise ProtocolError("device: expected \"cuda\" or \"cpu\"")
    on_gpu = kind == "cuda"
    copy_bytes = _positive(request, "copy_bytes", (1 << 30) if on_gpu else (64 << 20))
    matmul_n = _positive(request, "matmul_n", 8192 if on_gpu else 512)
    if on_gpu and not torch.cuda.is_available():
        return {"type": "result", "ok": False,
                "error": {"kind": "calibrate", "message": "no CUDA device is visible to torch"}}
    try:
        ceilings = measure(torch.device("cuda:0" if on_gpu else "cpu"), copy_bytes, matmul_n)
    except (RuntimeError, MemoryError) as exc:  # out of memory, a device fault
        return {"type": "result", "ok": False, "error": {"kind": "calibrate", "message": str(exc)[:500]}}
    return {"type": "result", "ok": True, "ceilings": ceilings}
