"""Ops `extract` and `build`, in process (the real compiler runs only in the slow test)."""

import pytest

from kz_worker.farm import inline
from kz_worker.farm.build import build_op, find_library
from kz_worker.farm.extract import extract_op
from kz_worker.protocol import ProtocolError
from kzhelpers import fixture


def extract(name):
    return extract_op({"protocol": 1, "op": "extract", "candidate_path": fixture(name)})


def test_extract_reports_each_call_with_its_digest():
    result = extract("cand_inline_relu")
    assert result["ok"] is True
    (call,) = result["calls"]
    assert call["name"] == "kz_test_relu_ext"
    assert call["functions"] == ["relu"] and call["extra_cuda_cflags"] == ["-O2"]
    assert call["cpp_sources"] == ["torch::Tensor relu(torch::Tensor x);"]
    assert "relu_kernel" in call["cuda_sources"][0]
    assert call["digest"] == inline.call_digest(call)
    assert set(result["env"]) == {"torch", "cuda", "python"}


def test_extract_without_load_inline_has_no_calls():
    assert extract("cand_relu_ok")["calls"] == []


@pytest.mark.parametrize("candidate, kind, line", [
    ("cand_inline_no_model", "missing_model_new", None),
    ("cand_syntax", "python_syntax", 5),
    ("cand_import_error", "import_error", None),
])
def test_extract_failures(candidate, kind, line):
    result = extract(candidate)
    assert result["ok"] is False
    assert result["error"]["kind"] == kind and result["error"]["line"] == line
    assert result["error"]["message"]


def test_extract_restores_load_inline():
    import torch.utils.cpp_extension as cpp_extension
    extract("cand_inline_relu")
    assert cpp_extension.load_inline is inline.REAL_LOAD_INLINE


def build_request(tmp_path, **call):
    return {"protocol": 1, "op": "build", "build_dir": str(tmp_path / "out"),
            "call": {"name": "ext", "cpp_sources": ["x"], "digest": "d", **call}}


def test_build_passes_fields_and_returns_library(tmp_path):
    seen = {}

    def compiler(**kwargs):
        seen.update(kwargs)
        (tmp_path / "out" / "ext.so").write_bytes(b"")
    result = build_op(build_request(tmp_path, with_cuda=None), load_inline=compiler)
    assert result["ok"] is True and result["library"] == str(tmp_path / "out" / "ext.so")
    assert result["seconds"] >= 0
    assert seen == {"name": "ext", "cpp_sources": ["x"], "with_cuda": None,
                    "build_directory": str(tmp_path / "out"), "verbose": False}


def test_build_failure_reports_compiler_output(tmp_path):
    def compiler(**_kwargs):
        raise RuntimeError("Error building extension 'ext': main.cpp:1: error: x was not declared")
    result = build_op(build_request(tmp_path), load_inline=compiler)
    assert result["ok"] is False
    assert result["error"]["kind"] == "compile_error"
    assert "x was not declared" in result["error"]["message"]


def test_import_failure_after_a_build_is_still_ok(tmp_path):
    def compiler(**_kwargs):
        (tmp_path / "out" / "ext.so").write_bytes(b"")
        raise ImportError("libcuda.so.1: cannot open shared object file")
    assert build_op(build_request(tmp_path), load_inline=compiler)["ok"] is True


def test_find_library_accepts_suffixed_names(tmp_path):
    (tmp_path / "ext.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    assert find_library(str(tmp_path), "ext").endswith("ext.cpython-311-x86_64-linux-gnu.so")
    assert find_library(str(tmp_path), "other") is None


def test_build_request_must_name_a_call(tmp_path):
    with pytest.raises(ProtocolError):
        build_op({"protocol": 1, "op": "build", "call": {}, "build_dir": str(tmp_path)})
