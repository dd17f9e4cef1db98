"""Frames: 4-byte big-endian length + UTF-8 JSON object, at most 16 MiB."""

import json
import os
import socket
import struct
import threading

import pytest

from kz_worker.protocol import MAX_FRAME, Channel, ProtocolError, encode_frame


def test_frame_is_big_endian_length_then_json():
    frame = encode_frame({"a": "é"})
    body = json.dumps({"a": "é"}).encode()
    assert frame[:4] == struct.pack(">I", len(body)) == len(body).to_bytes(4, "big")
    assert json.loads(frame[4:].decode("utf-8")) == {"a": "é"}


def test_non_finite_floats_become_null():
    frame = encode_frame({"x": float("nan"), "y": [float("inf"), 1.5], "z": {"w": -float("inf")}})
    assert json.loads(frame[4:]) == {"x": None, "y": [None, 1.5], "z": {"w": None}}


def test_oversized_frame_is_refused():
    with pytest.raises(ProtocolError):
        encode_frame({"blob": "x" * (MAX_FRAME + 1)})


def test_channel_round_trip_over_socketpair():
    a, b = socket.socketpair()
    with a, b:
        Channel(a.fileno()).write({"type": "event", "stage": "load", "data": {"n": 1}})
        Channel(a.fileno()).event("timing", {"status": "skipped"})
        reader = Channel(b.fileno())
        assert reader.read() == {"type": "event", "stage": "load", "data": {"n": 1}}
        assert reader.read() == {"type": "event", "stage": "timing",
                                 "data": {"status": "skipped"}}


@pytest.mark.parametrize("payload, message", [
    (struct.pack(">I", MAX_FRAME + 1), "exceeds"),
    (struct.pack(">I", 10) + b"{}", "closed"),
    (struct.pack(">I", 3) + b"[1]", "not a JSON object"),
    (struct.pack(">I", 2) + b"{x", "not UTF-8 JSON"),
])
def test_invalid_frames_raise(payload, message):
    r, w = os.pipe()
    os.write(w, payload)
    os.close(w)
    try:
        with pytest.raises(ProtocolError, match=message):
            Channel(r).read()
    finally:
        os.close(r)


def test_large_frame_is_written_completely():
    a, b = socket.socketpair()
    with a, b:
        a.setblocking(True)
        data = {"blob": "y" * 3_000_000}
        writer = threading.Thread(target=Channel(a.fileno()).write, args=(data,))
        writer.start()
        assert Channel(b.fileno()).read() == data
        writer.join()


@pytest.mark.parametrize("answer, expected", [
    ({"type": "judge", "stage": "trace", "verdict": "reject", "reason": "trace.side_stream: x"},
     ("reject", "trace.side_stream: x")),
    ({"type": "judge", "stage": "trace", "verdict": "pass", "reason": None}, ("pass", None)),
    ({"type": "gate", "granted": True}, ProtocolError),
    ({"type": "judge", "verdict": "maybe"}, ProtocolError),
])
def test_judge_sends_the_facts_and_waits_for_the_verdict(answer, expected):
    a, b = socket.socketpair()
    with a, b:
        supervisor = Channel(b.fileno())
        supervisor.write(answer)  # queued before the child asks: the read blocks until then
        child = Channel(a.fileno())
        if expected is ProtocolError:
            with pytest.raises(ProtocolError, match="expected a judgement"):
                child.judge("trace", {"windows": []})
        else:
            assert child.judge("trace", {"windows": []}) == expected
        assert supervisor.read() == {"type": "judge", "stage": "trace", "facts": {"windows": []}}
