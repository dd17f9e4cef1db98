"""ninja_template: load_inline's files reproduced byte for byte (checked against torch's own
load_inline, stopped before ninja), the key, the template round trip, and the build op's
template path (ninja stubbed; the real nvcc build is in test_fastbuild.py, marked slow)."""

import json
import os

import pytest

from kz_worker import build, fastbuild, inline, ninja_template as nt

CPP = "torch::Tensor f(torch::Tensor x) { return x; }\ntorch::Tensor g(torch::Tensor x);"
CU = "__global__ void k(float* y) { y[0] = 1; }\ntorch::Tensor g(torch::Tensor x) { return x; }"


def torch_files(tmp_path, monkeypatch, dirname, **call):
    """What torch's load_inline writes for `call` in tmp_path/dirname (ninja not run)."""
    import torch.utils.cpp_extension as ce

    def stop(build_directory, verbose, error_prefix):
        raise RuntimeError("stopped before ninja")
    monkeypatch.setattr(ce, "_run_ninja_build", stop)
    out = tmp_path / dirname
    out.mkdir()
    with pytest.raises(RuntimeError, match="stopped before ninja"):
        ce.load_inline(**json.loads(json.dumps(call)), build_directory=str(out))
    return {n: (out / n).read_text() if (out / n).exists() else None
            for n in ("main.cpp", "cuda.cu", "build.ninja")}, str(out)


CALLS = [
    dict(name="kz_nt_list", cpp_sources=[CPP], functions=["f", "g"]),
    dict(name="kz_nt_str", cpp_sources=CPP, functions="f", extra_cflags=["-O3 "], extra_ldflags=[]),
    dict(name="kz_nt_dict", cpp_sources=["", CPP], functions={"f": "doc of f"}),
    dict(name="kz_nt_none", cpp_sources=[CPP]),
    dict(name="kz_nt_cuda", cpp_sources=["torch::Tensor g(torch::Tensor x);"], cuda_sources=[CU, "// b"],
         functions=["g"], extra_cuda_cflags=["-O2"], extra_include_paths=["inc"], extra_ldflags=["-lm"]),
    dict(name="kz_nt_cpu_cuda", cpp_sources=[CPP], functions=["f"], with_cuda=True),
]


@pytest.mark.parametrize("call", CALLS, ids=[c["name"] for c in CALLS])
def test_files_and_template_match_torchs_load_inline(tmp_path, monkeypatch, call):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.chdir(tmp_path)
    first, first_dir = torch_files(tmp_path, monkeypatch, "a b", **call)
    assert (first["main.cpp"], first["cuda.cu"]) == nt.sources(call)
    template, name = nt.make_template(first["build.ninja"], first_dir)
    assert name == call["name"] and nt.NAME in template and nt.DIR in template
    other = dict(call, name=call["name"] + "_other")
    second, second_dir = torch_files(tmp_path, monkeypatch, "other", **other)
    assert nt.render(template, other["name"], second_dir) == second["build.ninja"]
    assert (second["main.cpp"], second["cuda.cu"]) == nt.sources(other)


def test_save_then_load_and_write_build(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    call = CALLS[4]
    files, built = torch_files(tmp_path, monkeypatch, "first", **call)
    pch_root, report = str(tmp_path / "cache" / "pch"), {}
    nt.save(pch_root, call, built, report)
    assert report == {"template": "saved"}
    path = nt.template_path(pch_root, nt.key_inputs(call))
    assert os.path.dirname(path) == str(tmp_path / "cache" / "ninja")
    other = dict(call, name="kz_nt_second")
    template = nt.load(pch_root, other)
    assert template is not None, "the name is not part of the key"
    (tmp_path / "second").mkdir()
    nt.write_build(str(tmp_path / "second"), other, template)
    want, _ = torch_files(tmp_path, monkeypatch, "want", **dict(other, name="kz_nt_second2"))
    got = (tmp_path / "second" / "build.ninja").read_text()
    assert got == want["build.ninja"].replace("kz_nt_second2", "kz_nt_second").replace(
        str(tmp_path / "want"), str(tmp_path / "second"))
    assert nt.load(pch_root, dict(call, extra_cuda_cflags=["-O3"])) is None, "flags are keyed"
    monkeypatch.setenv("CXX", "g++")
    assert nt.load(pch_root, call) is None, "CXX is keyed"


def test_a_mismatching_or_unreadable_template_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    call, pch_root = CALLS[0], str(tmp_path / "pch")
    path = nt.template_path(pch_root, nt.key_inputs(call))
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write("{not json")
    assert nt.load(pch_root, call) is None
    inputs = dict(nt.key_inputs(call), torch="0.0")
    with open(path, "w") as f:
        json.dump({"inputs": inputs, "ninja": "x"}, f)
    assert nt.load(pch_root, call) is None, "inputs must equal the call's, not just the file name"


def test_calls_not_reproduced(monkeypatch):
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    with pytest.raises(nt.NotReproduced, match="TORCH_CUDA_ARCH_LIST"):
        nt.key_inputs(CALLS[4])
    nt.key_inputs(CALLS[0])                                # no CUDA: archs do not matter
    for bad in (dict(CALLS[0], functions=3), dict(CALLS[0], cpp_sources=None),
                dict(CALLS[0], with_cuda="yes"), dict(CALLS[0], extra_cflags=[1]),
                dict(CALLS[0], extra_cflags="-O3")):
        with pytest.raises(nt.NotReproduced):
            nt.key_inputs(bad) if "with_cuda" in bad or "extra_cflags" in bad else nt.sources(bad)


def test_render_substitutes_in_one_pass():
    assert nt.render("a @KZ_NAME@ @KZ_DIR@/x", "@KZ_DIR@", "/d") == "a @KZ_DIR@ /d/x"


def test_digest_fields_are_inlines():
    assert build.DIGEST_FIELDS == inline.DIGEST_FIELDS


def test_run_ninja_reports_failure_as_torch_does(tmp_path, monkeypatch):
    (tmp_path / "build.ninja").write_text("rule fail\n  command = echo 'x.cu(3): error: bad' && false\n"
                                          "build out: fail\ndefault out\n")
    monkeypatch.setenv("MAX_JOBS", "1")
    with pytest.raises(RuntimeError) as info:
        nt.run_ninja(str(tmp_path), "Error building extension 'e'")
    text = str(info.value)
    assert text.startswith("Error building extension 'e': [1/1] echo") and "x.cu(3): error: bad" in text


def template_request(tmp_path, monkeypatch, call):
    """A saved template for `call` (from torch's own files) and a build request using it."""
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setattr(fastbuild, "ensure_pch", lambda root, cxx, cflags, header=None: ("/pch/dir", 0.0))
    _, built = torch_files(tmp_path, monkeypatch, "seed", **dict(call, name="kz_nt_seed"))
    pch_root, report = str(tmp_path / "cache" / "pch"), {}
    nt.save(pch_root, dict(call, name="kz_nt_seed"), built, report)
    assert report["template"] == "saved"
    return {"call": call, "build_dir": str(tmp_path / "b"), "accelerate": {"pch_root": pch_root}}


def test_build_op_uses_the_template_without_torch_path(tmp_path, monkeypatch):
    call = dict(CALLS[0], name="kz_nt_op")
    request = template_request(tmp_path, monkeypatch, call)
    ran = []

    def ninja(build_dir, prefix):
        ran.append(prefix)
        (tmp_path / "b" / "kz_nt_op.so").write_text("")
    monkeypatch.setattr(nt, "run_ninja", ninja)
    monkeypatch.setattr(build, "_torch_build", lambda *a: pytest.fail("torch path taken"))
    result = build.build_op(request)
    assert result["ok"] is True and result["library"] == str(tmp_path / "b" / "kz_nt_op.so")
    assert result["build"]["driver"] == "template" and result["build"]["import_checked"] is False
    assert result["build"]["header_mode"] == "full" and ran == ["Error building extension 'kz_nt_op'"]
    assert (tmp_path / "b" / "main.cpp").read_text() == nt.sources(call)[0]


def test_build_op_template_failure_is_a_compile_error(tmp_path, monkeypatch):
    request = template_request(tmp_path, monkeypatch, dict(CALLS[0], name="kz_nt_fail"))

    def ninja(build_dir, prefix):
        raise RuntimeError(f"{prefix}: main.cpp:2:1: error: boom")
    monkeypatch.setattr(nt, "run_ninja", ninja)
    result = build.build_op(request)
    assert result["ok"] is False and result["error"]["kind"] == "compile_error"
    assert result["error"]["message"] == "Error building extension 'kz_nt_fail': main.cpp:2:1: error: boom"


def test_build_op_falls_back_to_torch_on_anything_else(tmp_path, monkeypatch):
    request = template_request(tmp_path, monkeypatch, dict(CALLS[0], name="kz_nt_odd"))
    monkeypatch.setattr(nt, "run_ninja", lambda *a: (_ for _ in ()).throw(OSError("no ninja")))
    taken = []
    monkeypatch.setattr(build, "_torch_build", lambda fields, d, acc, li, report: taken.append(report))
    result = build.build_op(request)
    assert taken == [{"template_error": "no ninja"}] and result["ok"] is False
