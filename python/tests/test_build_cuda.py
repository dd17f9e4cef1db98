"""The one test that really compiles a CUDA extension (nvcc, 1-2 minutes): extract ->
build -> run with the prebuilt library, all over the protocol, on CPU."""

import os

import pytest

from kzhelpers import fixture, run_request, spawn_worker


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="needs nvcc")
def test_extract_build_then_run_prebuilt(tmp_path):
    frames, _, _, _ = spawn_worker({"protocol": 1, "op": "extract",
                                    "candidate_path": fixture("cand_inline_relu")})
    (call,) = frames[-1]["calls"]

    build_dir = tmp_path / "build"
    frames, code, _, stderr = spawn_worker(
        {"protocol": 1, "op": "build", "call": call, "build_dir": str(build_dir)},
        env={"TORCH_CUDA_ARCH_LIST": "9.0"}, timeout=900)
    built = frames[-1]
    assert code == 0 and built["ok"] is True, (built, stderr[-3000:])
    assert built["library"] == str(build_dir / "kz_test_relu_ext.so")
    assert os.path.isfile(built["library"]) and built["seconds"] > 0

    prebuilt = [{"digest": call["digest"], "name": call["name"], "library": built["library"]}]
    frames, code, _, stderr = spawn_worker(
        run_request("task_relu", "cand_inline_relu", backend="cuda", prebuilt=prebuilt))
    result = frames[-1]
    assert result["status"] == "correct", (result, stderr[-3000:])
    assert result["stages"]["load"]["compiled_in_child"] == []

    broken = {"protocol": 1, "op": "build", "build_dir": str(tmp_path / "broken"),
              "call": {**call, "cuda_sources": [call["cuda_sources"][0] + "\nint oops = ;\n"]}}
    frames, _, _, _ = spawn_worker(broken, env={"TORCH_CUDA_ARCH_LIST": "9.0"}, timeout=900)
    assert frames[-1]["ok"] is False
    assert frames[-1]["error"]["kind"] == "compile_error"
    assert "oops" in frames[-1]["error"]["message"]
