"""The trace's runtime side (kz_worker.trace.stage) without a GPU: the run flow with a
scripted stand-in tracer, the ctypes binding over the fake CUPTI and fake driver
(native/tests), CUPTI discovery, and what the worker reports without CUPTI."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from kz_worker.run import op as run_module
from kz_worker.trace import stage as trace
from kz_worker.run.op import run_op
from kzhelpers import fixture

REPO = pathlib.Path(__file__).resolve().parents[2]
CAND = textwrap.dedent('''
    """Plain ReLU with a pretend JIT kernel (its name is what the trace looks for)."""
    import torch


    def jit(fn):
        return fn


    @jit
    def relu_kernel(x):
        return x


    class ModelNew(torch.nn.Module):
        def forward(self, x):
            return torch.clamp(x, min=0)
''')


class FakeTracer:
    """Stands in for trace.Tracer: each window gets the records script(label) returns."""

    def __init__(self, script, broken=None):
        self.script, self.windows, self.broken = script, [], broken
        self.library, self.enabled = "/fake/libcupti.so.13", None

    def enable(self):
        self.enabled = True

    def disable(self):
        self.enabled = False

    def window(self, label, device):
        tracer = self

        class Window:
            def __enter__(self):
                return self

            def __exit__(self, exc_type, *_):
                if exc_type is None:
                    tracer.windows.append({"label": label, "records": tracer.script(label),
                                           "caller_stream": 7, "dropped": 0})
                return False
        return Window()


def kernel(name, start, end, stream=7):
    return {"kind": "kernel", "name": name, "stream": stream, "start_ns": start,
            "end_ns": end, "graph": 0, "bytes": 0}


def marker(at):
    return {"kind": "marker", "name": "kz marker", "stream": 7, "start_ns": at,
            "end_ns": at + 1, "graph": 0, "bytes": 0}


def honest(label):
    return [kernel("relu_kernel", 1000, 5000), marker(5100)]


def run_with(tmp_path, monkeypatch, channel, script, **options):
    cand = tmp_path / "cand_traced.py"
    cand.write_text(CAND)
    tracer = FakeTracer(script)
    monkeypatch.setattr(run_module.trace, "prepare", lambda device: (tracer, ""))
    request = {"protocol": 1, "op": "run", "task_path": fixture("task_relu"),
               "candidate_path": str(cand), "backend": "triton", "device": "cpu",
               "prebuilt": [], "options": {"trials": 3, "seed": 42, **options}}
    return run_op(request, channel), tracer


def test_every_checked_call_is_traced_and_sent_to_the_judge(tmp_path, monkeypatch, channel):
    result, tracer = run_with(tmp_path, monkeypatch, channel, honest)
    assert result["status"] == "correct", result["reason"]
    labels = ["trial 0", "trial 1", "trial 2", "fresh inputs", "same inputs again (1)",
              "same inputs again (2)"]
    assert [w["label"] for w in tracer.windows] == labels
    assert [j["stage"] for j in channel.judged] == ["trace"]  # one judgement, all windows
    facts = channel.judged[0]["facts"]
    assert facts["library"] == "/fake/libcupti.so.13"
    assert facts["candidate_kernel_names"] == ["relu_kernel"]
    assert [w["label"] for w in facts["windows"]] == labels
    first = facts["windows"][0]
    assert first["names"] == ["relu_kernel", "kz marker"] and first["caller_stream"] == 7
    assert first["records"] == [["kernel", 0, 7, 1000, 5000, 0, 0, 0, 0, 0, 0],
                                ["marker", 1, 7, 5100, 5101, 0, 0, 0, 0, 0, 0]]
    assert result["stages"]["trace"] == {"status": "judged", "verdict": "pass", "windows": 6}
    assert tracer.enabled is False  # disabled before extra checks and timing
    assert [e["stage"] for e in channel.events] == [
        "load", "parameters", "correctness", "trace", "extra_checks", "timing"]


def test_a_rejection_stops_the_run(tmp_path, monkeypatch):
    from kzhelpers import RecordingChannel
    reason = "trace.no_candidate_kernel: same inputs again (1): none of the candidate's kernels"
    channel = RecordingChannel(("reject", reason))
    result, _ = run_with(tmp_path, monkeypatch, channel, honest)
    assert result["status"] == "rejected" and result["reason"] == reason
    assert result["error"]["kind"] == "trace"
    assert "timing" not in result["stages"] and "extra_checks" not in result["stages"]


def test_refused_facts_are_a_worker_error(tmp_path, monkeypatch):
    from kzhelpers import RecordingChannel
    channel = RecordingChannel(("invalid", "malformed trace facts: window 0: ..."))
    result, _ = run_with(tmp_path, monkeypatch, channel, honest)
    assert result["status"] == "runtime_error" and result["error"]["kind"] == "worker_internal"
    assert result["reason"] == "trace judge: malformed trace facts: window 0: ..."


def test_oversized_windows_are_cut_and_counted_as_dropped():
    records = [kernel("relu_kernel", 1000 * i, 1000 * i + 500) for i in range(2000)]
    window = {"label": "trial 0", "records": records, "caller_stream": 7, "dropped": 3}
    small = trace.compact_window(window, 20_000)
    assert len(json.dumps(small)) <= 20_000 and 0 < len(small["records"]) < 2000
    assert small["dropped"] == 3 + 2000 - len(small["records"])
    assert small["names"] == ["relu_kernel"]  # interned
    whole = trace.compact_window(window, 1 << 20)
    assert len(whole["records"]) == 2000 and whole["dropped"] == 3
    assert "dependencies" not in whole  # absent stays absent: not collected


def test_bad_policy_is_a_protocol_error(tmp_path, monkeypatch, channel):
    from kz_worker.protocol import ProtocolError
    with pytest.raises(ProtocolError, match="policy"):
        run_with(tmp_path, monkeypatch, channel, honest, policy="lenient")
    with pytest.raises(ProtocolError, match="min_candidate_share"):
        run_with(tmp_path, monkeypatch, channel, honest, min_candidate_share=1.5)


def test_broken_tracer_is_not_checked_not_failed(tmp_path, monkeypatch, channel):
    cand = tmp_path / "cand_traced.py"
    cand.write_text(CAND)
    tracer = FakeTracer(honest, broken="kz_tr_mark: cuMemAlloc(4) failed")
    monkeypatch.setattr(run_module.trace, "prepare", lambda device: (tracer, ""))
    request = {"protocol": 1, "op": "run", "task_path": fixture("task_relu"),
               "candidate_path": str(cand), "backend": "triton", "device": "cpu",
               "prebuilt": [], "options": {"trials": 2}}
    result = run_op(request, channel)
    assert result["status"] == "correct"
    assert result["stages"]["trace"] == {"status": "skipped",
                                         "reason": "kz_tr_mark: cuMemAlloc(4) failed"}


def test_without_gpu_the_trace_is_skipped():
    assert trace.prepare("cpu") == (None, "no GPU")


def test_trace_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("KZ_TRACE", "0")
    assert trace.prepare("cuda") == (None, "disabled (KZ_TRACE=0)")


def test_without_runtime_library_the_reason_says_so(monkeypatch):
    monkeypatch.delenv("KZ_TRACE", raising=False)
    monkeypatch.delenv("KZ_RUNTIME_LIB", raising=False)
    tracer, reason = trace.prepare("cuda")
    assert tracer is None and reason.startswith("native runtime not found")


def test_cupti_paths_prefer_pip_packages(tmp_path, monkeypatch):
    lib = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    for name in ("libcupti.so.13", "libcupti.so.12", "libcupti.so.2025.1.1", "libcupti.so"):
        (lib / name).write_bytes(b"")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "site")])
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    monkeypatch.delenv("KZ_CUPTI_PATH", raising=False)
    paths = trace.cupti_paths()
    assert paths[:2] == [str(lib / "libcupti.so.13"), str(lib / "libcupti.so")]
    assert not any(p.endswith((".so.12", ".so.2025.1.1")) for p in paths)


def test_source_recorder_notes_sources_and_delegates():
    calls = []
    inner = lambda *a, **k: calls.append((a, k)) or "module"  # noqa: E731
    inner.compiled_in_child = ["x"]
    rec = trace.SourceRecorder(inner)
    out = rec("ext", cpp_sources="int f();", cuda_sources=["__global__ void k(){}"],
              functions=["f"])
    assert out == "module" and len(calls) == 1
    assert rec.texts == ["int f();", "__global__ void k(){}"]
    assert rec.compiled_in_child == ["x"]
    assert rec(bad_argument=1) == "module"  # does not bind: inner decides


def test_candidate_names_of_corpus_files():
    cuda = REPO / "tests" / "corpus" / "cheats" / "matmul_cache_cpp_static_cuda.py"
    assert trace.candidate_names(str(cuda), object, []) == {"matmul_kernel"}
    tri = REPO / "tests" / "corpus" / "cheats" / "softmax_side_stream_triton.py"
    assert trace.candidate_names(str(tri), object, []) == {"softmax_kernel"}


# ------------------------------------------------------------------ the real binding

def _built(name):
    for root in (os.environ.get("KZ_TEST_BUILD_DIR", ""), str(REPO / "build")):
        path = pathlib.Path(root) / name if root else None
        if path is not None and path.exists():
            return path
    return None


FAKE_SCRIPT = """
import ctypes, json, sys, types
# No torch in this process (it would load the real libcupti first): a stand-in.
calls = []
cuda = types.SimpleNamespace(synchronize=lambda d: calls.append("sync"),
                             current_stream=lambda d: types.SimpleNamespace(cuda_stream=0))
sys.modules["torch"] = types.SimpleNamespace(cuda=cuda)
from kz_worker.trace import stage as trace
tracer, reason = trace.prepare("cuda")
assert tracer is not None, reason
fake = ctypes.CDLL(sys.argv[1])
u32, u64 = ctypes.c_uint32, ctypes.c_uint64
fake.kz_fake_cupti_push.argtypes = [ctypes.c_int, ctypes.c_char_p, u32, u64, u64, u32, u64, u32]
fake.kz_fake_cupti_push_dep.argtypes = [ctypes.c_int, u32, u32, u32, u64]
tracer.lib.kz_tr_marker_value.restype = u32
marker = tracer.lib.kz_tr_marker_value()
tracer.enable()
with tracer.window("trial 0", "cuda:0"):
    fake.kz_fake_cupti_push(1, b"_Z11relu_kernelPfi", 7, 1000, 5000, 0, 0, 0)
    fake.kz_fake_cupti_push(2, None, 7, 5100, 5101, marker, 4, 0)
with tracer.window("trial 2", "cuda:0"):  # joined side stream: record on 121, wait on 7
    fake.kz_fake_cupti_push_dep(7, 121, 0, 2, 0)  # created non-blocking
    fake.kz_fake_cupti_push(1, b"_Z11relu_kernelPfi", 121, 1000, 5000, 0, 0, 0)
    fake.kz_fake_cupti_push_dep(5, 121, 42, 0, 9)
    fake.kz_fake_cupti_push_dep(6, 7, 42, 2, 9)
    fake.kz_fake_cupti_push(2, None, 7, 5100, 5101, marker, 4, 0)
try:
    with tracer.window("trial 1", "cuda:0"):
        raise ValueError("candidate raised")
except ValueError:
    pass
tracer.disable()
print(json.dumps({"library": tracer.library, "windows": tracer.windows, "calls": calls,
                  "broken": tracer.broken}))
"""


def _run_fake_script(**extra_env):
    lib, cupti = _built("lib/libkz_runtime.so"), _built("native/tests/fake-cupti")
    driver = _built("native/tests/fake-driver")
    if not (lib and cupti and driver):
        pytest.skip("native build with fakes not found (set KZ_TEST_BUILD_DIR)")
    env = dict(os.environ, KZ_RUNTIME_LIB=str(lib), PYTHONPATH=str(REPO / "python"),
               LD_LIBRARY_PATH=f"{cupti}:{driver}", KZ_CUPTI_PATH=str(cupti / "libcupti.so.13"),
               **extra_env)
    out = subprocess.run([sys.executable, "-c", FAKE_SCRIPT, str(cupti / "libcupti.so.13")],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_binding_over_fake_cupti_and_driver():
    data = _run_fake_script()
    assert data["library"].endswith("fake-cupti/libcupti.so.13") and data["broken"] is None
    # trial 1 raised: dropped
    assert [w["label"] for w in data["windows"]] == ["trial 0", "trial 2"]
    window = data["windows"][0]
    assert window["caller_stream"] == 7 and window["dropped"] == 0
    assert window["legacy_stream"] == 7 and window["dependencies"] == ""
    records = [{k: v for k, v in r.items() if k != "correlation"} for r in window["records"]]
    assert records == [
        {"kind": "kernel", "name": "relu_kernel(float*, int)", "stream": 7, "start_ns": 1000,
         "end_ns": 5000, "graph": 0, "bytes": 0},
        {"kind": "marker", "name": "kz marker", "stream": 7, "start_ns": 5100,
         "end_ns": 5101, "graph": 0, "bytes": 4}]
    assert all(isinstance(r["correlation"], int) for r in window["records"])
    assert data["calls"] == ["sync"] * 5  # before, after (x2); before the raising one


def test_binding_converts_dependency_records():
    data = _run_fake_script()
    joined = data["windows"][1]
    kinds = [(r["kind"], r["stream"]) for r in joined["records"]]
    assert kinds == [("kernel", 121), ("event_record", 121), ("stream_wait", 7),
                     ("marker", 7), ("stream", 121)]  # streams are appended at the end
    record, wait = joined["records"][1], joined["records"][2]
    assert record["event"] == wait["event"] == 42 and record["sync_id"] == wait["sync_id"] == 9
    assert record["correlation"] < wait["correlation"]
    assert joined["records"][4]["flags"] == 2 and "event" not in joined["records"][0]


def test_binding_without_dependency_kinds_falls_back_to_timing():
    data = _run_fake_script(KZ_FAKE_CUPTI_NO_DEPS="1")
    assert data["broken"] is None
    window = data["windows"][0]
    assert window["dependencies"].startswith("cuptiActivityEnable(CUDA_EVENT) failed")
    assert [r["kind"] for r in data["windows"][1]["records"]] == ["kernel", "marker"]


def test_dependency_fields_reach_the_judge(tmp_path, monkeypatch, channel):
    def side(label):
        return [{**kernel("relu_kernel", 1000, 2000, stream=21), "correlation": 3},
                {"kind": "event_record", "name": "event record", "stream": 21, "event": 9,
                 "sync_id": 4, "correlation": 5},
                {"kind": "stream", "name": "stream", "stream": 21, "flags": 2,
                 "correlation": 1},
                {**marker(5000), "correlation": 9}]
    cand = tmp_path / "cand_traced.py"
    cand.write_text(CAND)
    tracer = FakeTracer(side)
    window = tracer.window

    def with_deps(label, device):
        inner = window(label, device)

        class Window:
            def __enter__(self):
                return inner.__enter__()

            def __exit__(self, *exc):
                inner.__exit__(*exc)
                tracer.windows[-1].update(dependencies="", legacy_stream=7)
                return False
        return Window()
    tracer.window = with_deps
    monkeypatch.setattr(run_module.trace, "prepare", lambda device: (tracer, ""))
    request = {"protocol": 1, "op": "run", "task_path": fixture("task_relu"),
               "candidate_path": str(cand), "backend": "triton", "device": "cpu",
               "prebuilt": [], "options": {"trials": 2, "seed": 42}}
    assert run_op(request, channel)["status"] == "correct"
    first = channel.judged[0]["facts"]["windows"][0]
    assert first["dependencies"] == "" and first["legacy_stream"] == 7
    assert first["records"] == [["kernel", 0, 21, 1000, 2000, 0, 0, 3, 0, 0, 0],
                                ["event_record", 1, 21, 0, 0, 0, 0, 5, 9, 4, 0],
                                ["stream", 2, 21, 0, 0, 0, 0, 1, 0, 0, 2],
                                ["marker", 3, 7, 5000, 5001, 0, 0, 9, 0, 0, 0]]


def test_library_with_another_record_layout_is_refused(tmp_path, monkeypatch):
    lib_path = tmp_path / "libkz_runtime.so"
    lib_path.write_bytes(b"")

    class OldLib:  # every kz_tr_* entry point; kz_tr_record of version 1 (560 bytes)
        def __getattr__(self, name):
            def fn(*args):
                return 560 if name == "kz_tr_record_size" else 0
            return fn
    monkeypatch.delenv("KZ_TRACE", raising=False)
    monkeypatch.setenv("KZ_RUNTIME_LIB", str(lib_path))
    monkeypatch.setattr(trace.ctypes, "CDLL", lambda path: OldLib())
    tracer, reason = trace.prepare("cuda")
    assert tracer is None and "kz_tr_record is 560 bytes, the binding expects 576" in reason
