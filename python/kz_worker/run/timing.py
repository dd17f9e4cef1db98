"""Interleaved reference/candidate timing through libkz_runtime.so (ctypes).

Contracts:
- load_runtime() must run before any candidate code is imported. It loads the
  library named by KZ_RUNTIME_LIB, binds its entry points and probes the driver
  (dlopen libcuda.so.1 + cuInit, no context), keeping everything in module-private
  state captured at that moment. It never raises.
- time_interleaved() initialises the native runtime lazily (it retains torch's
  primary context, so torch.cuda must be usable) and must be called from the
  thread that will keep calling it (the native runtime is bound to that thread).
- The stopping rule (stop_decision, with quantile and ci_half_width) is a control
  decision of the loop and stays here; the verdict's statistics (medians, intervals,
  speedup, the host cross-check) are the supervisor's (src/verify/timing_stats.h): the
  loop returns raw per-call times (`raw_result`).
"""
from __future__ import annotations

import ctypes
import math
import os
import time

METHOD = "cuda-events, device sync around each call, L2 flush"
FLUSH_BYTES = 256 << 20  # L2-flush buffer (H200 L2 is 60 MiB)
BLOCK = 10               # calls per block; blocks alternate reference/candidate

_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_CALLBACK_FAILED = -2


class TimingError(RuntimeError):
    """Timing could not complete: a callback raised (chained as __cause__), the
    native runtime reported an error, or the runtime is not loaded."""


# ---------------------------------------------------------------- native binding

class _Native:
    """Entry points of one loaded libkz_runtime.so, bound once at load time.
    `lib` is a ctypes.CDLL (or, in tests, any object with the same kz_rt_* callables)."""

    def __init__(self, lib):
        sig = {
            "kz_rt_probe": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int)]),
            "kz_rt_init": (ctypes.c_int, [ctypes.c_int, ctypes.c_size_t]),
            "kz_rt_time_calls": (ctypes.c_int, [
                _CALLBACK, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]),
            "kz_rt_flush_bytes": (ctypes.c_size_t, []),
            "kz_rt_last_error": (ctypes.c_char_p, []),
            "kz_rt_shutdown": (None, []),
        }
        for name, (restype, argtypes) in sig.items():
            fn = getattr(lib, name)  # AttributeError if the symbol is missing
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, "_" + name[len("kz_rt_"):], fn)
        self.lib = lib  # keeps the CDLL (and so the function pointers) alive
        self.initialised = False

    def last_error(self) -> str:
        msg = self._last_error()
        return msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg or "")

    def probe(self) -> tuple[int, str]:
        count = ctypes.c_int(0)
        rc = self._probe(ctypes.byref(count))
        return rc, (self.last_error() if rc else f"{count.value} CUDA device(s)")

    def ensure_init(self, ordinal: int, flush_bytes: int) -> None:
        if self.initialised:
            return
        rc = self._init(ordinal, flush_bytes)
        if rc != 0:
            raise TimingError(f"kz_rt_init failed ({rc}): {self.last_error()}")
        self.initialised = True

    @property
    def flush_bytes(self) -> int:
        return int(self._flush_bytes())

    def time_calls(self, fn, n: int) -> tuple[list[float], list[float]]:
        """Times n calls of fn() with L2 flush; returns (device_ms, host_ms).
        An exception from fn stops the loop and is re-raised as TimingError."""
        caught: list[BaseException] = []

        def trampoline(_user):
            try:
                fn()
                return 0
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                caught.append(exc)
                return 1

        cb = _CALLBACK(trampoline)  # referenced until the call returns
        dev, host = (ctypes.c_float * n)(), (ctypes.c_float * n)()
        rc = self._time_calls(cb, None, n, 1, dev, host)
        if caught:
            exc = caught[0]
            if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit
                raise exc
            raise TimingError(f"{type(exc).__name__}: {exc}") from exc
        if rc != 0:
            raise TimingError(f"native timing failed ({rc}): {self.last_error()}")
        return list(dev), list(host)


_STATE: dict = {}  # {"native": _Native, "path": str, "reason": str} once loaded


def load_runtime() -> tuple[bool, str]:
    """Loads $KZ_RUNTIME_LIB and probes the driver. Returns (ok, reason); never
    raises. A second call returns the first successful result unchanged."""
    if "native" in _STATE:
        return True, _STATE["reason"]
    try:
        path = os.environ.get("KZ_RUNTIME_LIB")
        if not path:
            return False, "KZ_RUNTIME_LIB is not set"
        if not os.path.isfile(path):
            return False, f"KZ_RUNTIME_LIB={path}: no such file"
        native = _Native(ctypes.CDLL(path))
        rc, reason = native.probe()
        if rc != 0:
            return False, reason
        _STATE.update(native=native, path=path, reason=f"{path}: {reason}")
        return True, _STATE["reason"]
    except Exception as exc:  # noqa: BLE001 - contract: never raises
        return False, f"cannot load KZ_RUNTIME_LIB: {type(exc).__name__}: {exc}"


def _device_ordinal() -> int:
    """The torch device the runtime must share (initialises torch.cuda)."""
    import torch  # deferred: this module must import without torch

    if not torch.cuda.is_available():
        raise TimingError("torch sees no CUDA device")
    torch.cuda.init()
    return torch.cuda.current_device()


# ---------------------------------------------------------------- the stopping rule

def quantile(sorted_xs: list[float], q: float) -> float:
    """q-quantile of an ascending non-empty list, linear interpolation (numpy's
    default): position q*(n-1) between the two nearest ranks."""
    if not sorted_xs:
        raise ValueError("quantile of an empty list")
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


Z95 = 1.959964  # two-sided 95 % normal quantile


def median_ci(sorted_xs: list[float], z: float = Z95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median of an ascending non-empty list:
    the order statistics of ranks n/2 -/+ z*sqrt(n)/2 (the binomial's normal approximation;
    about 95 % coverage for n >= 10 whatever the distribution), clamped to the sample."""
    if not sorted_xs:
        raise ValueError("median_ci of an empty list")
    n = len(sorted_xs)
    half = z * math.sqrt(n) / 2
    lo = max(math.floor(n / 2 - half) - 1, 0)     # 0-based
    hi = min(math.ceil(n / 2 + half), n - 1)
    return sorted_xs[lo], sorted_xs[hi]


def ci_half_width(sorted_xs: list[float]) -> float:
    """The median's interval half-width relative to the median (inf for a 0 median)."""
    lo, hi = median_ci(sorted_xs)
    med = quantile(sorted_xs, 0.5)
    return (hi - lo) / 2 / med if med > 0 else (0.0 if hi == lo else math.inf)


def relative_change(prev: float, cur: float) -> float:
    """|cur - prev| / |prev|; 0 when equal, inf when prev is 0 and cur is not."""
    if cur == prev:
        return 0.0
    return abs(cur - prev) / abs(prev) if prev else math.inf


def stop_decision(prev, cur, calls: int, *, min_calls: int, max_calls: int,
                  elapsed_s: float, budget_s: float, stable_rel: float,
                  ci_rel: float = 0.0, widths=None) -> tuple[bool, bool]:
    """After a pair of blocks: (stop, stable). `prev`/`cur` are the (reference,
    candidate) medians after the previous/this pair (prev None after the first
    pair); `calls` is the per-side call count (equal on both sides). Stable means
    calls >= min_calls and, with ci_rel > 0 (adaptive timing), both sides' `widths`
    (ci_half_width) <= ci_rel; else both medians moved by < stable_rel. Stop also
    when calls >= max_calls or elapsed_s >= budget_s."""
    if ci_rel > 0:
        stable = calls >= min_calls and widths is not None and all(w <= ci_rel for w in widths)
    else:
        stable = (prev is not None and calls >= min_calls and
                  all(relative_change(p, c) < stable_rel for p, c in zip(prev, cur)))
    return stable or calls >= max_calls or elapsed_s >= budget_s, stable


def raw_result(ref_ms, cand_ms, ref_host_ms, cand_host_ms, *, stable: bool,
               flush_bytes: int, stop_rule: str = "stable") -> dict:
    """The timing facts the supervisor turns into the verdict's stages.timing object
    (src/verify/timing_stats.h: medians, intervals, speedup, host cross-check): the raw
    per-call times of both sides (device and host ms, at most max_calls each), why the
    loop stopped, and the method."""
    return {"status": "measured", "method": METHOD, "stop_rule": stop_rule, "stable": stable,
            "flush_bytes": flush_bytes, "reference_ms": list(ref_ms), "candidate_ms": list(cand_ms),
            "reference_host_ms": list(ref_host_ms), "candidate_host_ms": list(cand_host_ms)}


# ---------------------------------------------------------------- the timing loop

def _run_interleaved(native, ref_fn, cand_fn, *, warmup, min_calls, max_calls,
                     budget_s, stable_rel, ci_rel=0.0, clock=time.monotonic, after_pair=None) -> dict:
    """Warm-up, then alternating blocks until stop_decision says stop. `native`
    needs time_calls(fn, n) -> (dev_ms, host_ms) and flush_bytes (tests fake it).
    The budget counts from the start of the warm-up. `after_pair()`, if given, runs after
    each reference block + candidate block, outside any timed region (it may raise)."""
    if warmup < 0 or min_calls < 1 or max_calls < 1 or budget_s <= 0 or stable_rel < 0 or ci_rel < 0:
        raise ValueError("bad timing options: need warmup >= 0, min_calls >= 1, "
                         "max_calls >= 1, budget_s > 0, stable_rel >= 0, ci_rel >= 0")
    start = clock()
    if warmup:
        native.time_calls(ref_fn, warmup)
        native.time_calls(cand_fn, warmup)
    dev = {"ref": [], "cand": []}
    host = {"ref": [], "cand": []}
    prev = None
    while True:
        n = min(BLOCK, max_calls - len(dev["ref"]))
        for side, fn in (("ref", ref_fn), ("cand", cand_fn)):
            d, h = native.time_calls(fn, n)
            dev[side] += d
            host[side] += h
        if after_pair is not None:
            after_pair()
        ordered = [sorted(dev[s]) for s in ("ref", "cand")]
        cur = tuple(quantile(xs, 0.5) for xs in ordered)
        widths = [ci_half_width(xs) for xs in ordered] if ci_rel > 0 else None
        calls, elapsed = len(dev["ref"]), clock() - start
        stop, stable = stop_decision(prev, cur, calls, min_calls=min_calls,
                                     max_calls=max_calls, elapsed_s=elapsed,
                                     budget_s=budget_s, stable_rel=stable_rel,
                                     ci_rel=ci_rel, widths=widths)
        if stop:
            rule = (("ci" if ci_rel > 0 else "stable") if stable else
                    "max_calls" if calls >= max_calls else "budget")
            return raw_result(dev["ref"], dev["cand"], host["ref"], host["cand"],
                              stable=stable, flush_bytes=native.flush_bytes, stop_rule=rule)
        prev = cur


def time_interleaved(ref_fn, cand_fn, *, warmup=3, min_calls=30, max_calls=2000,
                     budget_s=10.0, stable_rel=0.01, ci_rel=0.0, after_pair=None) -> dict:
    """Times zero-argument callables ref_fn and cand_fn (one forward call each)
    in alternating blocks of BLOCK calls with CUDA events, a device sync around
    each call and an L2 flush before it. Returns the raw timing facts (`raw_result`),
    from which the supervisor builds stages.timing (docs/verdict.md). Raises TimingError if the runtime is not
    loaded, a callable raises (chained), or the native runtime fails."""
    native = _STATE.get("native")
    if native is None:
        raise TimingError("native runtime not loaded (load_runtime() failed or not called)")
    native.ensure_init(_device_ordinal(), FLUSH_BYTES)
    return _run_interleaved(native, ref_fn, cand_fn, warmup=warmup, min_calls=min_calls,
                            max_calls=max_calls, budget_s=budget_s, stable_rel=stable_rel,
                            ci_rel=ci_rel, after_pair=after_pair)
