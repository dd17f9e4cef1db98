"""Op `calibrate`: the roofline's ceilings measured on the device (here the CPU, small sizes),
and a clear error for bad requests. The GPU figures come from the device runs (docs/optimize.md)."""

import json

import pytest

from kz_worker.task.calibrate import calibrate_op
from kz_worker.protocol import ProtocolError


def test_cpu_ceilings_are_measured_and_positive():
    r = calibrate_op({"device": "cpu", "copy_bytes": 1 << 20, "matmul_n": 64})
    assert r["ok"] is True
    c = r["ceilings"]
    assert c["version"] == 1 and c["device"]["kind"] == "cpu" and c["device"]["torch"]
    assert c["copy_gbps"] > 0 and c["fp32_tflops"] > 0 and c["bf16_tflops"] > 0
    assert c["copy_bytes"] == 1 << 20 and c["matmul_n"] == 64 and c["reps"] >= 5
    json.dumps(c, allow_nan=False)  # the protocol sends it as is


@pytest.mark.parametrize("request_", [
    {"device": "tpu"},
    {"device": "cpu", "copy_bytes": 0},
    {"device": "cpu", "matmul_n": -4},
    {"device": "cpu", "matmul_n": "8192"},
    {"device": "cpu", "copy_bytes": True},
])
def test_bad_requests_are_protocol_errors(request_):
    with pytest.raises(ProtocolError):
        calibrate_op(request_)


def test_an_allocation_failure_is_a_clear_error_not_a_crash():
    r = calibrate_op({"device": "cpu", "copy_bytes": 1 << 60, "matmul_n": 8})
    assert r["ok"] is False and r["error"]["kind"] == "calibrate" and r["error"]["message"]
