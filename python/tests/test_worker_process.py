"""End to end: `python -m kz_worker` spawned with a socketpair fd, as the supervisor does."""

import json
import struct

import pytest

from kzhelpers import fixture, run_request, spawn_worker


def result_of(frames):
    assert frames and frames[-1]["type"] == "result"
    assert all(f["type"] == "event" for f in frames[:-1])
    return frames[-1]


def test_correct_run_over_the_protocol_despite_noisy_stdout():
    frames, code, stdout, stderr = spawn_worker(run_request("task_relu", "cand_relu_ok"))
    assert code == 0
    result = result_of(frames)
    assert result["status"] == "correct", result
    assert [f["stage"] for f in frames[:-1]] == ["load", "parameters", "correctness", "trace", "extra_checks", "timing"]
    assert result["stages"]["timing"] == {"status": "skipped", "reason": "no GPU"}
    assert result["device"]["triton_interpret"] is True
    assert "candidate import xxx" in stdout and "candidate import stderr" in stderr
    assert "forward torch.Size([16, 64])" in stdout


def test_triton_candidate_under_the_interpreter():
    frames, code, _, stderr = spawn_worker(run_request("task_relu", "cand_triton_relu"))
    result = result_of(frames)
    assert code == 0 and result["status"] == "correct", (result, stderr[-2000:])


def test_triton_candidate_with_a_bad_grid_is_incorrect():
    frames, _, _, _ = spawn_worker(run_request("task_relu", "cand_triton_bad_mask"))
    result = result_of(frames)
    assert result["status"] == "incorrect"
    assert result["reason"].startswith("trial 0 output 0: ")
    assert "elements exceed" in result["reason"]


def test_runtime_error_result_then_exit_zero():
    frames, code, _, _ = spawn_worker(run_request("task_relu", "cand_forward_raises"))
    result = result_of(frames)
    assert code == 0
    assert result["status"] == "runtime_error" and result["error"]["kind"] == "runtime"
    assert "IndexError" in result["error"]["traceback"]


def test_crash_leaves_the_events_sent_so_far():
    frames, code, _, _ = spawn_worker(run_request("task_relu", "cand_forward_crashes"))
    assert code == 7
    assert [f.get("stage") for f in frames] == ["load", "parameters"]
    assert all(f["type"] == "event" for f in frames)


def test_protocol_channel_is_hidden_from_candidate_code():
    frames, _, stdout, _ = spawn_worker(run_request("task_relu", "cand_fd_probe"))
    assert result_of(frames)["status"] == "correct"
    assert "PROBE env hidden" in stdout
    assert "PROBE fd3 closed" in stdout
    assert "PROBE fd closed" in stdout


def test_extract_over_the_protocol():
    request = {"protocol": 1, "op": "extract", "candidate_path": fixture("cand_inline_relu")}
    frames, code, _, _ = spawn_worker(request)
    result = result_of(frames)
    assert code == 0 and result["ok"] is True
    assert [c["name"] for c in result["calls"]] == ["kz_test_relu_ext"]
    assert len(result["calls"][0]["digest"]) == 64


@pytest.mark.parametrize("request_, message", [
    ({"protocol": 1, "op": "launch"}, "unknown op 'launch'"),
    ({"protocol": 2, "op": "run"}, "unsupported protocol 2"),
    ({"protocol": 1, "op": "run", "device": "cpu"}, "task_path"),
])
def test_bad_requests_get_a_protocol_error(request_, message):
    frames, code, _, _ = spawn_worker(request_)
    assert code == 0
    assert frames == [{"type": "result", "ok": False,
                       "error": {"kind": "protocol", "message": frames[0]["error"]["message"]}}]
    assert message in frames[0]["error"]["message"]


@pytest.mark.parametrize("raw", [
    struct.pack(">I", 16 * 1024 * 1024 + 1),
    struct.pack(">I", 100) + b'{"protocol": 1',
    struct.pack(">I", 4) + json.dumps([1, 2]).encode()[:4],
])
def test_bad_frames_get_a_protocol_error(raw):
    frames, code, _, _ = spawn_worker(raw=raw)
    assert code == 0
    assert len(frames) == 1 and frames[0]["error"]["kind"] == "protocol"


@pytest.mark.parametrize("op,module", [("extract", "farm.extract"), ("run", "run.op")])
def test_worker_bug_outside_a_stage_is_worker_internal(monkeypatch, op, module):
    from kz_worker.__main__ import handle

    def broken(*_args):
        raise ZeroDivisionError("worker bug")
    monkeypatch.setattr(f"kz_worker.{module}.{op}_op", broken)
    result = handle({"protocol": 1, "op": op}, channel=None)
    assert result["type"] == "result" and result["error"]["kind"] == "worker_internal"
    assert "ZeroDivisionError" in result["error"]["traceback"]
    if op == "run":
        assert result["status"] == "runtime_error"
    else:
        assert result["ok"] is False
