"""run.py/timed.py around `kz_worker.run.timing`, with a stand-in timing module (the real
one is owned elsewhere and needs a GPU)."""

import sys
import types

import pytest
import torch

import kz_worker.run
from kz_worker.run import memory_plan
from kz_worker.run import op as run_module
from kz_worker.failure import Failure
from kz_worker.loader import Task
from kz_worker.options import Options, parse_run_request
from kz_worker.run.timed import POOL_SIZE, measure
from kzhelpers import RecordingChannel, run_request

CPU = torch.device("cpu")


class TimingError(Exception):
    pass


def fake_timing(calls=6, fail=None):
    """A stand-in for kz_worker.run.timing that calls each fn `calls` times."""
    module = types.SimpleNamespace(TimingError=TimingError, seen={})

    def time_interleaved(ref_fn, cand_fn, **kwargs):
        after_pair = kwargs.pop("after_pair", None)
        module.seen.update(kwargs)
        for i in range(calls):  # blocks of 2 calls each side, like the real blocks of 10
            ref_fn()
            cand_fn()
            if after_pair is not None and i % 2 == 1:
                after_pair()
        if fail is not None:
            raise fail
        return {"status": "measured", "reference_ms": [2.0], "candidate_ms": [1.0]}
    module.time_interleaved = time_interleaved
    module.load_runtime = lambda: (True, "")
    return module


class Counter(torch.nn.Module):
    def __init__(self, raise_at=None):
        super().__init__()
        self.inputs, self.raise_at = [], raise_at

    def forward(self, x):
        if len(self.inputs) == self.raise_at:
            raise RuntimeError("candidate failed on a late call")
        self.inputs.append(x)
        return x + 1


def make_task():
    return Task(model=None, get_inputs=lambda: [torch.randn(3)], get_init_inputs=list)


def test_measure_rotates_over_a_pool_and_passes_options():
    timing, ref, cand = fake_timing(), Counter(), Counter()
    options = Options(warmup=2, min_calls=5, max_calls=9, timing_budget_s=1.5, stable_rel=0.1)
    result = measure(timing, make_task(), ref, cand, CPU, options)
    assert result["status"] == "measured" and result["candidate_ms"] == [1.0]
    assert result["rechecked_rounds"] > 0
    assert timing.seen == {"warmup": 2, "min_calls": 5, "max_calls": 9, "budget_s": 1.5,
                           "stable_rel": 0.1, "ci_rel": 0.0}
    ids = [id(x) for x in cand.inputs]
    assert len(set(ids)) == POOL_SIZE and ids[:POOL_SIZE] == ids[POOL_SIZE:]
    assert not set(ids) & {id(x) for x in ref.inputs}


class PointerCache(torch.nn.Module):
    """Honest on first sight of an input buffer, then serves the cached result for that
    pointer: right in the correctness trials, stale once timed inputs change values."""

    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        key = x.data_ptr()
        if key not in self.cache:
            self.cache[key] = x + 1
        return self.cache[key]


class PlusOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


def test_timed_outputs_are_rechecked_after_values_rotate():
    with pytest.raises(Failure) as info:
        measure(fake_timing(), make_task(), PlusOne(), PointerCache(), CPU, Options())
    assert info.value.status == "rejected"
    assert "dataflow.stale_output" in info.value.reason


def test_honest_candidate_passes_the_timed_recheck():
    result = measure(fake_timing(), make_task(), PlusOne(), PlusOne(), CPU, Options())
    assert result["status"] == "measured" and result["rechecked_rounds"] > 0


class Dropout(torch.nn.Module):
    """Draws from the RNG in forward (dropout in training mode, as KernelBench L2/66)."""

    def forward(self, x):
        return torch.nn.functional.dropout(x + 1, p=0.5, training=True)


class CachedDropout(Dropout):
    """Dropout whose results are cached by input pointer: stale once values rotate."""

    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        if x.data_ptr() not in self.cache:
            self.cache[x.data_ptr()] = super().forward(x)
        return self.cache[x.data_ptr()]


def test_rng_drawing_reference_is_rechecked_with_seeded_fresh_calls():
    result = measure(fake_timing(), make_task(), Dropout(), Dropout(), CPU, Options())
    assert result["status"] == "measured" and result["recheck"] == {"mode": "seeded"}


def test_seeded_recheck_still_catches_a_pointer_cache():
    with pytest.raises(Failure) as info:
        measure(fake_timing(), make_task(), Dropout(), CachedDropout(), CPU, Options())
    assert "dataflow.stale_output" in info.value.reason and "seeded recheck" in info.value.reason


def test_deterministic_reference_keeps_comparing_the_timed_outputs():
    result = measure(fake_timing(), make_task(), PlusOne(), PlusOne(), CPU, Options())
    assert result["recheck"] == {"mode": "outputs"}


def test_candidate_raising_while_timed_is_runtime_error():
    timing = fake_timing()
    with pytest.raises(Failure) as info:
        measure(timing, make_task(), Counter(), Counter(raise_at=4), CPU, Options())
    assert info.value.status == "runtime_error" and info.value.kind == "runtime"
    assert "late call" in info.value.reason


def test_harness_failure_skips_timing():
    timing = fake_timing(fail=TimingError("unstable clock"))
    data = measure(timing, make_task(), Counter(), Counter(), CPU, Options())
    assert data == {"status": "skipped", "reason": "timing failed: TimingError: unstable clock"}


def test_cuda_error_in_harness_is_runtime_error():
    timing = fake_timing(fail=RuntimeError("CUDA error: an illegal memory access"))
    with pytest.raises(Failure) as info:
        measure(timing, make_task(), Counter(), Counter(), CPU, Options())
    assert (info.value.status, info.value.kind) == ("runtime_error", "cuda_error")


def test_prepare_timing(monkeypatch):
    assert run_module.prepare_timing("cpu") == (None, "no GPU")
    monkeypatch.setitem(sys.modules, "kz_worker.run.timing", None)
    monkeypatch.delattr(kz_worker.run, "timing", raising=False)
    module, reason = run_module.prepare_timing("cuda")
    assert module is None and reason.startswith("timing module unavailable: ")
    fake = fake_timing()
    fake.load_runtime = lambda: (False, "KZ_RUNTIME_LIB not set")
    monkeypatch.setitem(sys.modules, "kz_worker.run.timing", fake)
    monkeypatch.setattr(kz_worker.run, "timing", fake, raising=False)
    assert run_module.prepare_timing("cuda") == (None, "KZ_RUNTIME_LIB not set")
    fake.load_runtime = lambda: (True, "")
    assert run_module.prepare_timing("cuda") == (fake, "")


def test_timing_stage_on_gpu_reports_raw_times(monkeypatch):
    # The supervisor computes the speedup from the times and adds it to the reason.
    request = parse_run_request(run_request("task_relu", "cand_relu_ok", device="cuda"))
    channel = RecordingChannel()
    run = run_module._Run(request, channel, fake_timing(), "")
    run.device = torch.device("cuda", 0)
    measured = {"status": "measured", "reference_ms": [2.0], "candidate_ms": [1.0]}
    monkeypatch.setattr(run_module, "measure", lambda *args: measured)
    assert run.time(None, None, None, 5) == "matched the reference on 5 trials"
    assert channel.events == [{"stage": "timing", "data": measured}]
    run.timing, run.timing_reason = None, "no native runtime"
    assert run.time(None, None, None, 5).endswith("(timing skipped: no native runtime)")


LEAN = memory_plan.Plan(lean=True, pool_size=2, shared_pool=True, traced_outputs=1)


def test_lean_plan_shares_two_input_sets_between_the_sides():
    ref, cand = Counter(), Counter()
    result = measure(fake_timing(), make_task(), ref, cand, CPU, Options(), LEAN)
    assert result["status"] == "measured" and result["pool"] == {"sets": 2, "shared": True}
    ids = {id(x) for x in cand.inputs}
    assert len(ids) == 2 and ids == {id(x) for x in ref.inputs}


def test_lean_plan_still_catches_a_pointer_cache():
    with pytest.raises(Failure) as info:
        measure(fake_timing(), make_task(), PlusOne(), PointerCache(), CPU, Options(), LEAN)
    assert "dataflow.stale_output" in info.value.reason


def test_memory_plan_goes_lean_only_for_large_tasks():
    small = memory_plan.choose({"inputs": 1 << 20, "outputs": 1 << 20})
    large = memory_plan.choose({"inputs": 6 << 30, "outputs": 6 << 30})
    writer = memory_plan.choose({"inputs": 6 << 30, "outputs": 1}, reference_modifies_inputs=True)
    assert (small.lean, small.pool_size, small.shared_pool) == (False, POOL_SIZE, False)
    assert (large.lean, large.pool_size, large.shared_pool, large.traced_outputs) == (True, 2, True, 1)
    assert writer.lean and not writer.shared_pool
    assert memory_plan.choose(None).lean is False
