"""Tests of kz_worker.run.timing that need no GPU: library loading failures, the stopping
rule's statistics, the stopping rule and the interleaving loop over a fake library (it
returns raw per-call times; the verdict's statistics are src/verify/timing_stats.h's,
tested in tests/unit/verify/timing_stats_test.cc)."""
import json
import os
import pathlib
import random
import subprocess
import sys

import numpy as np
import pytest

from kz_worker.run import timing

REPO = pathlib.Path(__file__).resolve().parents[2]


def median(xs):
    return timing.quantile(sorted(xs), 0.5)


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    monkeypatch.setattr(timing, "_STATE", {})
    monkeypatch.delenv("KZ_RUNTIME_LIB", raising=False)


class FakeLib:
    """Stands in for the CDLL: plain functions (ctypes sets attributes on them).
    Times come from per-side iterators; the side is whatever the callable being
    timed wrote into self.side."""

    def __init__(self, ref_times, cand_times, native_rc=0):
        self.side = None
        self.calls = {"ref": 0, "cand": 0}
        self.init_args = None
        self.times = {"ref": iter(ref_times), "cand": iter(cand_times)}

        def time_calls(cb, user, n, flush, out_ms, out_host):
            assert flush == 1
            for i in range(n):
                if cb(user) != 0:
                    return timing._CALLBACK_FAILED
                self.calls[self.side] += 1
                out_ms[i] = next(self.times[self.side])
                out_host[i] = out_ms[i] + 0.005
            return native_rc

        def init(ordinal, flush_bytes):
            self.init_args = (ordinal, flush_bytes)
            return 0

        self.kz_rt_time_calls = time_calls
        self.kz_rt_init = init
        self.kz_rt_probe = lambda count: 0
        self.kz_rt_flush_bytes = lambda: timing.FLUSH_BYTES
        self.kz_rt_last_error = lambda: b"cuEventRecord(end) failed at call 0: boom"
        self.kz_rt_shutdown = lambda: None

    def fn(self, side, exc=None):
        def call():
            self.side = side
            if exc is not None:
                raise exc
        return call


def constant(v):
    while True:
        yield v


def run(lib, **kw):
    opts = dict(warmup=3, min_calls=30, max_calls=2000, budget_s=10.0, stable_rel=0.01)
    opts.update(kw)
    return timing._run_interleaved(timing._Native(lib), lib.fn("ref"), lib.fn("cand"), **opts)


# ------------------------------------------------------------------ load_runtime

def test_load_without_env_var():
    ok, reason = timing.load_runtime()
    assert not ok and "KZ_RUNTIME_LIB" in reason


def test_load_bogus_path(monkeypatch, tmp_path):
    monkeypatch.setenv("KZ_RUNTIME_LIB", str(tmp_path / "nope.so"))
    ok, reason = timing.load_runtime()
    assert not ok and "no such file" in reason


def test_load_not_a_library(monkeypatch, tmp_path):
    junk = tmp_path / "libjunk.so"
    junk.write_bytes(b"not an ELF file")
    monkeypatch.setenv("KZ_RUNTIME_LIB", str(junk))
    ok, reason = timing.load_runtime()
    assert not ok and "cannot load" in reason


def _built_library():
    candidates = [os.environ.get("KZ_TEST_RUNTIME_LIB", ""),
                  str(REPO / "build" / "lib" / "libkz_runtime.so")]
    return next((p for p in candidates if p and os.path.isfile(p)), None)


def test_load_real_library_probes_driver(monkeypatch):
    lib = _built_library()
    if lib is None:
        pytest.skip("libkz_runtime.so not built (set KZ_TEST_RUNTIME_LIB)")
    monkeypatch.setenv("KZ_RUNTIME_LIB", lib)
    ok, reason = timing.load_runtime()
    if ok:
        assert "CUDA device" in reason
    else:
        assert reason.startswith(("no CUDA driver", "no CUDA device")), reason


def _fake_driver_dir():
    candidates = [os.environ.get("KZ_TEST_FAKE_CUDA_DIR", ""),
                  str(REPO / "build" / "native" / "tests" / "fake-driver")]
    return next((p for p in candidates
                 if p and os.path.isfile(os.path.join(p, "libcuda.so.1"))), None)


FAKE_DRIVER_SCRIPT = """
import json, time
from kz_worker.run import timing
ok, reason = timing.load_runtime()
assert ok, reason
timing._device_ordinal = lambda: 0
r = timing.time_interleaved(lambda: time.sleep(0.002), lambda: time.sleep(0.001),
                            warmup=1, min_calls=10, max_calls=40, budget_s=5.0)
def boom():
    raise ValueError("kernel exploded")
try:
    timing.time_interleaved(lambda: None, boom)
    err = None
except timing.TimingError as e:
    err = [str(e), type(e.__cause__).__name__]
print(json.dumps({"reason": reason, "result": r, "err": err}))
"""


def test_real_library_over_fake_driver():
    """The real libkz_runtime.so, loaded through ctypes, over the host-only fake
    libcuda.so.1 (events are host timestamps, so sleeps are what gets timed)."""
    lib, fake = _built_library(), _fake_driver_dir()
    if lib is None or fake is None:
        pytest.skip("set KZ_TEST_RUNTIME_LIB and KZ_TEST_FAKE_CUDA_DIR")
    env = dict(os.environ, KZ_RUNTIME_LIB=lib, LD_LIBRARY_PATH=fake,
               PYTHONPATH=str(REPO / "python"))
    out = subprocess.run([sys.executable, "-c", FAKE_DRIVER_SCRIPT], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert "1 CUDA device" in data["reason"]
    r = data["result"]
    assert r["flush_bytes"] == timing.FLUSH_BYTES and r["status"] == "measured"
    assert 10 <= len(r["reference_ms"]) == len(r["candidate_ms"]) <= 40
    ref, cand = median(r["reference_ms"]), median(r["candidate_ms"])
    assert ref >= 2.0 and cand >= 1.0 and 1.2 < ref / cand < 2.5
    assert median(r["reference_host_ms"]) >= ref
    assert data["err"] == ["ValueError: kernel exploded", "ValueError"]


def test_time_interleaved_requires_runtime():
    with pytest.raises(timing.TimingError, match="not loaded"):
        timing.time_interleaved(lambda: None, lambda: None)


# ------------------------------------------------------------------ statistics

@pytest.mark.parametrize("n", [1, 2, 5, 10, 31])
def test_quantile_matches_numpy(n):
    rng = random.Random(n)
    xs = sorted(rng.uniform(0.0, 5.0) for _ in range(n))
    for q in (0.0, 0.25, 0.5, 0.75, 1.0):
        assert timing.quantile(xs, q) == pytest.approx(float(np.quantile(xs, q)))


def test_median_ci_covers_the_true_median_about_95_percent():
    # Skewed (lognormal) per-call times, as kernels have: the order-statistic interval
    # holds the true median in ~95 % of samples of 30 and of 200 calls.
    for n in (30, 200):
        rng = random.Random(n)
        hits = 0
        for _ in range(2000):
            xs = sorted(rng.lognormvariate(0.0, 0.5) for _ in range(n))
            lo, hi = timing.median_ci(xs)
            hits += lo <= 1.0 <= hi  # the lognormal(0, s) median is e^0 = 1
        assert 0.93 <= hits / 2000 <= 0.985, (n, hits)
    assert timing.median_ci([3.0]) == (3.0, 3.0)
    with pytest.raises(ValueError):
        timing.median_ci([])


def test_ci_half_width_shrinks_with_calls():
    rng = random.Random(7)
    xs = [rng.gauss(1.0, 0.05) for _ in range(400)]
    w30, w400 = timing.ci_half_width(sorted(xs[:30])), timing.ci_half_width(sorted(xs))
    assert w400 < w30 / 2.5  # ~1/sqrt(n)
    assert timing.ci_half_width([0.0, 0.0]) == 0.0


def test_stop_decision():
    kw = dict(min_calls=30, max_calls=100, elapsed_s=1.0, budget_s=10.0, stable_rel=0.01)
    assert timing.stop_decision(None, (1.0, 2.0), 30, **kw) == (False, False)
    assert timing.stop_decision((1.0, 2.0), (1.0, 2.0), 20, **kw) == (False, False)
    assert timing.stop_decision((1.0, 2.0), (1.005, 2.0), 30, **kw) == (True, True)
    assert timing.stop_decision((1.0, 2.0), (1.02, 2.0), 30, **kw) == (False, False)
    assert timing.stop_decision((1.0, 2.0), (1.02, 2.0), 100, **kw) == (True, False)
    kw["elapsed_s"] = 10.0
    assert timing.stop_decision(None, (1.0, 2.0), 10, **kw) == (True, False)
    assert timing.relative_change(0.0, 0.0) == 0.0
    assert timing.relative_change(0.0, 1.0) == float("inf")


def test_stop_decision_with_ci():
    kw = dict(min_calls=10, max_calls=100, elapsed_s=1.0, budget_s=10.0, stable_rel=0.01, ci_rel=0.02)
    assert timing.stop_decision(None, (1.0, 2.0), 10, widths=[0.01, 0.015], **kw) == (True, True)
    assert timing.stop_decision(None, (1.0, 2.0), 10, widths=[0.01, 0.03], **kw) == (False, False)
    assert timing.stop_decision(None, (1.0, 2.0), 9, widths=[0.0, 0.0], **kw) == (False, False)
    assert timing.stop_decision(None, (1.0, 2.0), 100, widths=[0.5, 0.5], **kw) == (True, False)


# ------------------------------------------------------------------ loop over FakeLib

def test_constant_times_stop_when_stable():
    lib = FakeLib(constant(0.5), constant(0.25))
    r = run(lib)
    assert r["status"] == "measured" and r["method"] == timing.METHOD
    assert r["stable"] is True and r["stop_rule"] == "stable"
    assert r["reference_ms"] == [0.5] * 30 and r["candidate_ms"] == [0.25] * 30
    assert lib.calls == {"ref": 33, "cand": 33}  # 3 warm-up calls each, untimed
    assert r["flush_bytes"] == timing.FLUSH_BYTES
    assert r["candidate_host_ms"] == pytest.approx([0.255] * 30)


def test_drifting_times_stop_at_max_calls():
    lib = FakeLib((0.1 * 1.1 ** i for i in range(10**6)), constant(1.0))
    r = run(lib, max_calls=45)
    assert r["stable"] is False
    assert len(r["reference_ms"]) == 45 and len(r["candidate_ms"]) == 45


def test_adaptive_timing_stops_when_the_intervals_are_tight():
    # Noise of ~5 % per call: the 1 % "medians moved" rule and a 2 % interval rule stop at
    # different points; the interval rule reports its intervals and rule, and a looser
    # target stops sooner (what RL rewards need).
    def noisy(seed, mean):
        rng = random.Random(seed)
        while True:
            yield rng.gauss(mean, 0.05 * mean)
    tight = run(FakeLib(noisy(1, 0.5), noisy(2, 0.25)), min_calls=10, ci_rel=0.01)
    loose = run(FakeLib(noisy(1, 0.5), noisy(2, 0.25)), min_calls=10, ci_rel=0.04)
    for r, target in ((tight, 0.01), (loose, 0.04)):
        assert r["stop_rule"] == "ci" and r["stable"] is True
        for side in ("reference_ms", "candidate_ms"):
            assert timing.ci_half_width(sorted(r[side])) <= target
    assert len(loose["candidate_ms"]) < len(tight["candidate_ms"])
    assert len(loose["candidate_ms"]) <= 30


def test_stop_rule_names_why_timing_ended():
    assert run(FakeLib(constant(0.5), constant(0.25)))["stop_rule"] == "stable"
    drifting = run(FakeLib((0.1 * 1.1 ** i for i in range(10**6)), constant(1.0)), max_calls=45)
    assert drifting["stop_rule"] == "max_calls"
    ticks = iter([0.0, 100.0])
    assert run(FakeLib(constant(0.5), constant(0.5)), budget_s=1.0,
               clock=lambda: next(ticks))["stop_rule"] == "budget"


def test_budget_stops_after_first_pair():
    ticks = iter([0.0, 100.0])
    lib = FakeLib(constant(0.5), constant(0.5))
    r = run(lib, budget_s=1.0, clock=lambda: next(ticks))
    assert r["stable"] is False and len(r["reference_ms"]) == 10


def test_callback_exception_is_chained():
    lib = FakeLib(constant(0.5), constant(0.5))
    original = ValueError("kernel exploded")
    with pytest.raises(timing.TimingError, match="kernel exploded") as info:
        timing._run_interleaved(timing._Native(lib), lib.fn("ref"),
                                lib.fn("cand", original), warmup=3, min_calls=30,
                                max_calls=2000, budget_s=10.0, stable_rel=0.01)
    assert info.value.__cause__ is original
    assert lib.calls == {"ref": 3, "cand": 0}  # failed in the first warm-up call


def test_native_error_is_reported():
    lib = FakeLib(constant(0.5), constant(0.5), native_rc=-3)
    with pytest.raises(timing.TimingError, match=r"\(-3\).*boom"):
        run(lib)


def test_bad_options_rejected():
    with pytest.raises(ValueError):
        run(FakeLib(constant(1.0), constant(1.0)), max_calls=0)


def test_time_interleaved_end_to_end(monkeypatch):
    lib = FakeLib(constant(0.3), constant(0.1))
    native = timing._Native(lib)
    monkeypatch.setattr(timing, "_STATE", {"native": native})
    monkeypatch.setattr(timing, "_device_ordinal", lambda: 0)
    r = timing.time_interleaved(lib.fn("ref"), lib.fn("cand"), min_calls=20)
    assert lib.init_args == (0, timing.FLUSH_BYTES)
    assert set(r) == {"status", "method", "stop_rule", "stable", "flush_bytes", "reference_ms",
                      "candidate_ms", "reference_host_ms", "candidate_host_ms"}
    assert median(r["reference_ms"]) / median(r["candidate_ms"]) == pytest.approx(3.0)
    assert len(r["reference_ms"]) == 20
    assert lib.kz_rt_time_calls.argtypes[0] is timing._CALLBACK
