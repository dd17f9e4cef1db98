"""In-process `run` op: one test per verdict path, asserting status, reason and stages."""

import types

import pytest
import torch

from kz_worker.protocol import ProtocolError
from kz_worker.run.op import run_op
from kzhelpers import run_request


def run(channel, task, candidate, **kwargs):
    return run_op(run_request(task, candidate, **kwargs), channel)


def stages_sent(channel):
    return [e["stage"] for e in channel.events]


def test_correct_candidate_runs_every_stage(channel):
    result = run(channel, "task_relu", "cand_relu_ok")
    assert result["status"] == "correct", result["reason"]
    assert result["error"] is None
    assert stages_sent(channel) == ["load", "parameters", "correctness", "trace", "extra_checks", "timing"]
    corr = result["stages"]["correctness"]
    assert corr["status"] == "pass" and corr["trials_run"] == 3 and corr["trials_passed"] == 3
    assert [t["seed"] for t in corr["trials"]] == [42, 43, 44]
    assert corr["tolerance"] == {"atol": 1e-4, "rtol": 1e-4, "rel_l2": 1e-4, "dtype": "float32"}
    assert corr["trials"][0]["outputs"][0]["shape"] == [16, 64]
    assert result["stages"]["timing"] == {"status": "skipped", "reason": "no GPU"}
    assert result["stages"]["trace"] == {"status": "skipped", "reason": "no GPU"}
    assert result["stages"]["load"]["status"] == "ok"
    assert result["stages"]["load"]["compiled_in_child"] == []
    assert result["device"]["kind"] == "cpu"
    assert result["device"]["torch"]


def test_events_carry_the_stage_objects(channel):
    result = run(channel, "task_relu", "cand_relu_ok")
    for event in channel.events:
        assert event["data"] == result["stages"][event["stage"]]


def test_wrong_shape_is_incorrect_with_precise_reason(channel):
    result = run(channel, "task_relu", "cand_relu_wrong_shape")
    assert result["status"] == "incorrect"
    assert result["reason"] == "trial 0 output 0: shape (16, 32) != reference (16, 64)"
    assert result["error"] is None
    assert result["stages"]["correctness"]["status"] == "fail"
    assert "timing" not in result["stages"]


def test_wrong_value_names_count_and_index(channel):
    result = run(channel, "task_relu", "cand_relu_wrong_value")
    assert result["status"] == "incorrect"
    assert result["reason"].startswith("trial 0 output 0: 1 of 1024 elements exceed atol=0.0001")
    assert "worst at index (3, 7)" in result["reason"]
    trial = result["stages"]["correctness"]["trials"][0]
    assert trial["outputs"][0]["mismatched"] == 1
    assert trial["outputs"][0]["max_abs_err"] == pytest.approx(0.5)


def test_nan_output_is_incorrect(channel):
    result = run(channel, "task_relu", "cand_relu_nan")
    assert result["status"] == "incorrect"
    assert "5 NaN/Inf values" in result["reason"]
    assert result["stages"]["correctness"]["trials"][0]["outputs"][0]["nan_mismatch"] == 5


def test_wrong_dtype_is_incorrect(channel):
    result = run(channel, "task_relu", "cand_relu_double")
    assert result["status"] == "incorrect"
    assert result["reason"] == "trial 0 output 0: dtype float64 != reference float32"


def test_modified_input_fails_the_trial(channel):
    result = run(channel, "task_relu", "cand_relu_inplace")
    assert result["status"] == "incorrect"
    assert result["reason"] == "trial 0: candidate modified input 0"
    trial = result["stages"]["correctness"]["trials"][0]
    assert trial["inputs_modified"] is True and trial["outputs"][0]["mismatched"] == 0


def test_tuple_outputs_are_flattened_and_compared(channel):
    result = run(channel, "task_tuple", "cand_tuple_ok")
    assert result["status"] == "correct", result["reason"]
    assert len(result["stages"]["correctness"]["trials"][0]["outputs"]) == 2


def test_count_mismatch_is_incorrect(channel):
    result = run(channel, "task_tuple", "cand_relu_ok")
    assert result["status"] == "incorrect"
    assert result["reason"] == "trial 0: 1 outputs != reference 2"


def test_integer_outputs_must_match_exactly(channel):
    result = run(channel, "task_argmax", "cand_argmax_wrong", atol=100.0, rtol=100.0)
    assert result["status"] == "incorrect"
    assert "exact match required" in result["reason"]
    assert result["stages"]["correctness"]["tolerance"]["rel_l2"] is None


def test_parameters_matched_by_shape_and_copied(channel):
    result = run(channel, "task_linear", "cand_linear_ok")
    assert result["status"] == "correct", result["reason"]
    stage = result["stages"]["parameters"]
    assert stage == {"status": "ok", "reference": 2, "candidate": 2, "matched": 2,
                     "missing": [], "extra": [], "buffers_matched": 0}


def test_parameter_mismatch_lists_missing_and_extra(channel):
    result = run(channel, "task_linear", "cand_linear_no_bias")
    assert result["status"] == "incorrect"
    assert result["reason"] == ("parameters do not correspond: missing [linear.bias (64,)], "
                                "extra [scale (1,)]")
    assert "correctness" not in result["stages"]
    assert stages_sent(channel) == ["load", "parameters"]


@pytest.mark.parametrize("candidate, kind, detail", [
    ("cand_syntax", "python_syntax", "syntax error at line 5"),
    ("cand_import_error", "import_error", "module-level failure in candidate"),
    ("cand_no_model_new", "missing_model_new", "does not define ModelNew"),
    ("cand_ctor_mismatch", "constructor_mismatch", "does not accept get_init_inputs()"),
])
def test_candidate_load_failures_are_compile_errors(channel, candidate, kind, detail):
    result = run(channel, "task_relu", candidate)
    assert result["status"] == "compile_error"
    assert result["error"]["kind"] == kind
    assert detail in result["reason"]
    assert result["stages"]["load"]["status"] == "error"
    assert stages_sent(channel) == ["load"]


def test_syntax_error_reports_its_line(channel):
    result = run(channel, "task_relu", "cand_syntax")
    assert result["error"]["line"] == 5


def test_import_error_carries_the_traceback_tail(channel):
    result = run(channel, "task_relu", "cand_import_error")
    assert "helper()" in result["error"]["traceback"]
    assert result["error"]["traceback"].rstrip().endswith(
        "RuntimeError: module-level failure in candidate")


def test_forward_exception_is_runtime_error_with_traceback(channel):
    result = run(channel, "task_relu", "cand_forward_raises")
    assert result["status"] == "runtime_error"
    assert result["error"]["kind"] == "runtime"
    assert "IndexError: kernel index out of range" in result["reason"]
    assert "in kernel" in result["error"]["traceback"]
    assert len(result["error"]["traceback"].splitlines()) <= 40
    assert result["stages"]["correctness"]["status"] == "error"


def test_sys_exit_in_forward_is_runtime_error(channel):
    result = run(channel, "task_relu", "cand_forward_exits")
    assert result["status"] == "runtime_error"
    assert "SystemExit" in result["reason"]


@pytest.mark.parametrize("task, detail", [
    ("task_syntax", "task: syntax error at line 4"),
    ("task_missing_inputs", "task: does not define get_inputs"),
    ("task_forward_raises", "reference is broken"),
    ("task_nontensor", "task: Model output is float, not a tensor"),
])
def test_unusable_task_is_invalid_task(channel, task, detail):
    result = run(channel, task, "cand_relu_ok")
    assert result["status"] == "invalid_task"
    assert detail in result["reason"]


def test_cuda_device_without_gpu_is_not_run(channel):
    result = run(channel, "task_relu", "cand_relu_ok", device="cuda")
    assert result["status"] == "not_run"
    assert result["error"] is None and result["stages"] == {}


def test_timing_disabled_by_option_still_correct(channel):
    result = run(channel, "task_relu", "cand_relu_ok", timing=False)
    assert result["status"] == "correct"
    assert result["stages"]["timing"]["status"] == "skipped"


def test_worker_bug_becomes_worker_internal(channel, monkeypatch):
    def broken(*_args):
        raise KeyError("bug in the worker")
    monkeypatch.setattr("kz_worker.run.params.match_parameters", broken)
    result = run(channel, "task_relu", "cand_relu_ok")
    assert result["status"] == "runtime_error"
    assert result["error"]["kind"] == "worker_internal"
    assert "KeyError" in result["reason"]
    assert result["stages"]["load"]["status"] == "ok"


@pytest.mark.parametrize("change", [
    {"device": "gpu"}, {"backend": "opencl"}, {"task_path": None},
    {"options": {"trials": "5"}}, {"options": {"trials": 0}},
    {"options": {"gpu_mem_fraction": 1.5}}, {"prebuilt": [{"digest": "x"}]},
])
def test_malformed_request_raises_protocol_error(channel, change):
    request = {**run_request("task_relu", "cand_relu_ok"), **change}
    with pytest.raises(ProtocolError):
        run_op(request, channel)


def with_compiler(monkeypatch, compiler):
    """Make the run's load_inline replacement compile with `compiler`."""
    from kz_worker.farm import inline

    loader_class = inline.PrebuiltLoader
    monkeypatch.setattr(inline, "PrebuiltLoader",
                        lambda prebuilt: loader_class(prebuilt, real=compiler))


def test_unmatched_inline_call_compiles_in_child(channel, monkeypatch):
    with_compiler(monkeypatch, lambda *a, **k: types.SimpleNamespace(relu=torch.relu))
    result = run(channel, "task_relu", "cand_inline_relu", backend="cuda")
    assert result["status"] == "correct", result["reason"]
    assert result["stages"]["load"]["compiled_in_child"] == ["kz_test_relu_ext"]
    assert channel.events[0]["data"]["compiled_in_child"] == ["kz_test_relu_ext"]


def test_failed_compile_in_child_is_compile_error(channel, monkeypatch):
    def failing(*_args, **_kwargs):
        raise RuntimeError("Error building extension 'kz_test_relu_ext': nvcc fatal")
    with_compiler(monkeypatch, failing)
    result = run(channel, "task_relu", "cand_inline_relu", backend="cuda")
    assert result["status"] == "compile_error"
    assert result["error"]["kind"] == "compile_error"
    assert "nvcc fatal" in result["error"]["message"]
