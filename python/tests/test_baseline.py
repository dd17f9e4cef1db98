"""Op `baseline` (kz bench baseline): request checks, the timing loop, and real runs on
the CPU over the protocol (eager and torch.compile)."""

import pytest

from kz_worker.task import baseline
from kz_worker.protocol import ProtocolError
from kzhelpers import fixture, spawn_worker


def request(task="task_relu", modes=("eager",), **options):
    return {"protocol": 1, "op": "baseline", "task_path": fixture(task), "device": "cpu",
            "modes": list(modes), "options": {"trials": 12, "warmup": 1, **options}}


def test_parse_request_defaults_and_errors():
    path, device, modes, options = baseline.parse_request(
        {"task_path": "/t.py", "device": "cpu", "modes": ["compile", "eager", "compile"]})
    assert (path, device, modes) == ("/t.py", "cpu", ["compile", "eager"])
    assert options == baseline.DEFAULTS
    for bad in ({"modes": ["fast"]}, {"modes": []}, {"device": "tpu"},
                {"options": {"trials": 0}}, {"options": {"warmup": 1.5}}, {"options": {"budget_s": "x"}}):
        with pytest.raises(ProtocolError):
            baseline.parse_request({"task_path": "/t.py", "device": "cpu", "modes": ["eager"], **bad})


class FakeTimer:
    def __init__(self):
        self.blocks = []

    def time_calls(self, fn, n):
        self.blocks.append(n)
        for _ in range(n):
            fn()
        return [1.0] * n, [1.0] * n


def test_time_calls_blocks_and_budget():
    timer, calls = FakeTimer(), []
    ms = baseline.time_calls(timer, lambda: calls.append(1), warmup=3, trials=25, budget_s=60)
    assert timer.blocks == [3, 10, 10, 5] and len(ms) == 25 and len(calls) == 28
    clock = iter(range(0, 1000, 100)).__next__  # every reading 100 s later: one block only
    timer = FakeTimer()
    ms = baseline.time_calls(timer, lambda: None, warmup=0, trials=100, budget_s=60, clock=clock)
    assert timer.blocks == [10] and len(ms) == 10


def test_rotating_forward_cycles_the_pool():
    seen = []
    forward = baseline.rotating(lambda x: seen.append(x) or x, [[0], [1], [2]])
    for _ in range(5):
        forward()
    assert seen == [0, 1, 2, 0, 1]


def result_of(frames):
    assert frames and frames[-1]["type"] == "result"
    return frames[-1]


def test_eager_over_the_protocol():
    frames, code, _, stderr = spawn_worker(request())
    result = result_of(frames)
    assert code == 0 and result["ok"], (result, stderr[-2000:])
    eager = result["modes"]["eager"]
    assert eager["status"] == "ok" and len(eager["ms"]) == 12 and all(x > 0 for x in eager["ms"])
    assert eager["method"] == baseline.CPU_METHOD
    assert [f["stage"] for f in frames[:-1]] == ["eager"]
    assert result["device"]["device"] == "cpu" and result["device"]["hardware"]
    assert result["device"]["torch"]


def test_invalid_task_is_reported():
    frames, code, _, _ = spawn_worker(request("task_syntax"))
    result = result_of(frames)
    assert code == 0 and not result["ok"] and result["error"]["kind"] == "python_syntax"


def test_forward_that_raises_is_a_runtime_error_of_the_mode():
    frames, _, _, _ = spawn_worker(request("task_forward_raises"))
    result = result_of(frames)
    assert result["ok"] and result["modes"]["eager"]["status"] == "error"
    assert result["modes"]["eager"]["error"]["kind"] == "runtime_error"


@pytest.mark.slow
def test_compile_on_the_cpu():
    frames, code, _, stderr = spawn_worker(request(modes=("eager", "compile"), trials=5), timeout=600)
    result = result_of(frames)
    assert code == 0 and result["ok"], (result, stderr[-2000:])
    assert result["modes"]["compile"]["status"] == "ok", result["modes"]["compile"]
    assert len(result["modes"]["compile"]["ms"]) == 5
    assert [f["stage"] for f in frames[:-1]] == ["eager", "compile"]


class FakeNative:
    """Stands in for timing._Native: records init, runs fn n times, 2 ms per call."""

    def __init__(self, fail_native=False):
        self.init, self.fail_native = None, fail_native

    def ensure_init(self, ordinal, flush_bytes):
        self.init = (ordinal, flush_bytes)

    def time_calls(self, fn, n):
        from kz_worker.run.timing import TimingError
        if self.fail_native:
            raise TimingError("native timing failed (3): boom")
        for _ in range(n):
            try:
                fn()
            except Exception as exc:
                raise TimingError(f"{type(exc).__name__}: {exc}") from exc
        return [2.0] * n, [2.5] * n


def fake_timing(native):
    import types
    return types.SimpleNamespace(_STATE={"native": native}, _device_ordinal=lambda: 0,
                                 FLUSH_BYTES=123, METHOD="cuda-events, device sync around each call, L2 flush")


def test_native_timer_path_with_a_stand_in_runtime():
    import torch
    from kz_worker.loader import Task
    native = FakeNative()
    timer = baseline.NativeTimer(fake_timing(native))
    assert native.init == (0, 123)
    task = Task(model=None, get_inputs=lambda: [torch.randn(4)], get_init_inputs=list)
    out = baseline.time_mode("eager", torch.nn.ReLU(), task, torch.device("cpu"),
                             {**baseline.DEFAULTS, "trials": 15, "warmup": 2}, timer)
    assert out["status"] == "ok" and out["ms"] == [2.0] * 15
    assert out["method"].startswith("cuda-events")


class Raises(__import__("torch").nn.Module):
    def __init__(self, after):
        super().__init__()
        self.calls, self.after = 0, after

    def forward(self, x):
        self.calls += 1
        if self.calls > self.after:
            raise ValueError("late failure")
        return x


def test_errors_of_the_timed_calls_are_classified():
    import torch
    from kz_worker.loader import Task
    task = Task(model=None, get_inputs=lambda: [torch.randn(4)], get_init_inputs=list)
    options = {**baseline.DEFAULTS, "trials": 15, "warmup": 0}
    cpu = torch.device("cpu")
    out = baseline.time_mode("eager", Raises(after=0), task, cpu, options, baseline.CpuTimer())
    assert out["error"]["kind"] == "runtime_error" and "first call" in out["error"]["message"]
    out = baseline.time_mode("eager", Raises(after=5), task, cpu, options, baseline.CpuTimer())
    assert out["error"]["kind"] == "runtime_error" and "late failure" in out["error"]["message"]
    out = baseline.time_mode("eager", Raises(after=5), task, cpu, options,
                             baseline.NativeTimer(fake_timing(FakeNative())))
    assert out["error"]["kind"] == "runtime_error" and "ValueError: late failure" in out["error"]["message"]
    out = baseline.time_mode("eager", torch.nn.ReLU(), task, cpu, options,
                             baseline.NativeTimer(fake_timing(FakeNative(fail_native=True))))
    assert out["error"]["kind"] == "timing" and "native timing failed" in out["error"]["message"]
