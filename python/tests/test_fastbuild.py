"""fastbuild: the lighter-header rewrite of cuda.cu, the PCH flags, and the fallback to
torch's full headers for sources that need them (one real nvcc build, marked slow)."""

import os

import pytest

from kz_worker import build, fastbuild

NINJA = "cxx = c++\ncflags = -DTORCH_EXTENSION_NAME=x -fPIC\ncuda_cflags = -fPIC\n"


def write_build(tmp_path, cu):
    (tmp_path / "build.ninja").write_text(NINJA)
    (tmp_path / "cuda.cu").write_text(cu)


def test_cuda_source_switches_to_the_lite_header(tmp_path):
    original = "#include <torch/types.h>\n#include <cuda.h>\n  #include <torch/extension.h>\n__global__ void k() {}\n"
    write_build(tmp_path, original)
    report = {}
    returned = fastbuild._prepare(str(tmp_path), "", report)
    assert returned == original
    text = (tmp_path / "cuda.cu").read_text()
    assert "torch/types.h" not in text and "torch/extension.h" not in text
    assert text.count(f'#include "{fastbuild.LITE_NAME}"') == 2
    assert (tmp_path / fastbuild.LITE_NAME).read_text() == fastbuild.LITE_HEADER
    assert "pch" not in report, "no PCH without a pch_root"


def test_source_without_torch_includes_is_left_alone(tmp_path):
    write_build(tmp_path, "#include <cuda.h>\n__global__ void k() {}\n")
    assert fastbuild._prepare(str(tmp_path), "", {}) is None


def test_pch_flags_are_added_to_the_host_compile(tmp_path, monkeypatch):
    write_build(tmp_path, "__global__ void k() {}\n")
    monkeypatch.setattr(fastbuild, "ensure_pch", lambda root, cxx, cflags: ("/pch/dir", 0.5))
    report = {}
    fastbuild._prepare(str(tmp_path), str(tmp_path / "pch"), report)
    cflags = fastbuild._ninja_vars(str(tmp_path / "build.ninja"))["cflags"]
    assert cflags.endswith(f"-I/pch/dir -include {fastbuild.PCH_NAME} -Winvalid-pch")
    assert report["pch"] is True and report["pch_seconds"] == 0.5


FULL_ONLY = r"""
#include <torch/extension.h>
torch::Tensor mm(torch::Tensor a, torch::Tensor b) { return torch::matmul(a, b); }
"""


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="needs nvcc")
def test_source_needing_full_headers_falls_back(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    call = {"name": "kz_test_fallback", "cpp_sources": ["torch::Tensor mm(torch::Tensor a, torch::Tensor b);"],
            "cuda_sources": [FULL_ONLY], "functions": ["mm"]}
    result = build.build_op({"call": call, "build_dir": str(tmp_path / "b"),
                             "accelerate": {"pch_root": ""}})
    assert result["ok"] is True, result
    assert result["build"]["header_mode"] == "full"
