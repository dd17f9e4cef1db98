"""The worker's side of the GPU gate (docs/throughput.md): with options.gate it asks for a
shared hold before anything touches the device and blocks until granted, releases after
its timing stage, and notes its waits; without it no gate frame is sent; a supervisor that
answers something else than a grant gets a worker_internal error, not a hang."""

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

from kzhelpers import PYTHON_DIR, run_request


def _frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


def _read_frame(sock):
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (length,) = struct.unpack(">I", head)
    body = b""
    while len(body) < length:
        body += sock.recv(length - len(body))
    return json.loads(body)


def supervise(request, answer, delay=0.3):
    """Run the worker; answer each gate request with answer(frame) after `delay` s.
    Returns the frames in order, with the time each gate request waited."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    scratch = tempfile.mkdtemp(prefix="kz-gate-")
    env = {**os.environ, "KZ_PROTOCOL_FD": str(child.fileno()), "PYTHONPATH": str(PYTHON_DIR),
           "CUDA_VISIBLE_DEVICES": "", "TRITON_INTERPRET": "1", "TORCH_EXTENSIONS_DIR": scratch}
    proc = subprocess.Popen([sys.executable, "-m", "kz_worker"], pass_fds=[child.fileno()], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=scratch)
    child.close()
    parent.sendall(_frame(request))
    frames = []
    try:
        while (f := _read_frame(parent)) is not None:
            frames.append(f)
            if f.get("type") == "gate" and f.get("want") != "release":
                time.sleep(delay)
                parent.sendall(_frame(answer(f)))
            if f.get("type") == "result":
                break
    finally:
        parent.close()
        proc.wait(timeout=300)
    return frames


def kinds(frames):
    return [f["type"] + ":" + (f.get("want") or f.get("stage") or f.get("status", "")) for f in frames]


def test_shared_before_any_stage_release_after_timing_waits_noted():
    request = {**run_request("task_relu", "cand_relu_ok", gate=True, footprint_bytes=4096), "token": "t0k"}
    frames = supervise(request, lambda f: {"type": "gate", "granted": True})
    assert kinds(frames) == ["gate:shared", "event:load", "event:parameters", "event:correctness",
                             "event:trace", "event:extra_checks", "gate:release", "event:timing",
                             "result:correct"], kinds(frames)
    assert frames[0]["bytes"] == 4096 and frames[0]["token"] == "t0k", frames[0]  # a gate frame is token-checked like any other
    waits = frames[-1]["profile"]["gate"]
    assert waits["shared_wait_s"] >= 0.25, waits  # it blocked until the grant came


def test_no_gate_frames_without_the_option():
    frames = supervise(run_request("task_relu", "cand_relu_ok"), lambda f: {"type": "gate", "granted": True})
    assert not [f for f in frames if f["type"] == "gate"]
    assert frames[-1]["status"] == "correct"
    assert "gate" not in frames[-1]["profile"]


def test_an_answer_that_is_no_grant_is_a_worker_error_not_a_hang():
    frames = supervise(run_request("task_relu", "cand_relu_ok", gate=True),
                       lambda f: {"type": "gate", "granted": False}, delay=0)
    result = frames[-1]
    assert result["type"] == "result" and result["status"] == "runtime_error", result
    assert result["error"]["kind"] == "worker_internal" and "gate grant" in result["reason"], result


def test_gate_option_type_is_checked():
    frames = supervise(run_request("task_relu", "cand_relu_ok", gate="yes"), lambda f: {}, delay=0)
    assert frames[-1]["type"] == "error" or frames[-1].get("status") != "correct", frames[-1]
