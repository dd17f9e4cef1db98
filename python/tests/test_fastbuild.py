"""fastbuild: the lighter-header rewrite of cuda.cu, the PCH flags, and the fallback to
torch's full headers for sources that need them (one real nvcc build, marked slow)."""

import os

import pytest

from kz_worker import build, fastbuild

NINJA = "cxx = c++\ncflags = -DTORCH_EXTENSION_NAME=x -fPIC\ncuda_cflags = -fPIC\n"


def write_build(tmp_path, cu):
    (tmp_path / "build.ninja").write_text(NINJA)
    (tmp_path / "cuda.cu").write_text(cu)


MAIN = "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x);\n"
SPLITTABLE = ("#include <torch/types.h>\n#include <cuda.h>\n__global__ void k(float* y) { y[0] = 1; }\n"
              "torch::Tensor f(torch::Tensor x) { k<<<1, 1>>>(x.data_ptr<float>()); return x; }\n")


def test_modes_fastest_first():
    report = {}
    assert fastbuild._modes(SPLITTABLE, report) == ["split", "lite", "full"]
    assert report["split_kernels"] == 1
    report = {}
    template = ("#include <torch/types.h>\ntemplate <typename T> __global__ void k(T* y) {}\n"
                "torch::Tensor f(torch::Tensor x) { k<<<1, 1>>>(x.data_ptr<float>()); return x; }\n")
    assert fastbuild._modes(template, report) == ["lite", "full"]
    assert report["split_skipped"] == "kernel template k launched with deduced arguments"
    assert fastbuild._modes("#include <cuda.h>\n__global__ void k() {}\n", {}) == ["split", "full"]
    assert fastbuild._modes(None, {}) == ["full"]


def test_each_mode_writes_its_sources_from_the_originals(tmp_path):
    write_build(tmp_path, SPLITTABLE)
    (tmp_path / "main.cpp").write_text(MAIN)
    (tmp_path / "main.o").write_text("stale")
    fastbuild._apply(str(tmp_path), "split", SPLITTABLE, MAIN)
    cu, main = (tmp_path / "cuda.cu").read_text(), (tmp_path / "main.cpp").read_text()
    assert "torch/" not in cu and "torch::" not in cu and "__global__ void k" in cu
    assert "__cudaPushCallConfiguration(1, 1)" in main and main.endswith('#line 1 "main.cpp"\n' + MAIN)
    assert not (tmp_path / "main.o").exists(), "a retry must not link a stale object"
    fastbuild._apply(str(tmp_path), "lite", SPLITTABLE, MAIN)
    assert (tmp_path / "main.cpp").read_text() == MAIN
    text = (tmp_path / "cuda.cu").read_text()
    assert "torch/types.h" not in text and f'#include "{fastbuild.LITE_NAME}"' in text
    assert (tmp_path / fastbuild.LITE_NAME).read_text() == fastbuild.LITE_HEADER
    fastbuild._apply(str(tmp_path), "full", SPLITTABLE, MAIN)
    assert (tmp_path / "cuda.cu").read_text() == SPLITTABLE


def test_pch_flags_are_added_to_the_host_compile(tmp_path, monkeypatch):
    write_build(tmp_path, "__global__ void k() {}\n")
    monkeypatch.setattr(fastbuild, "ensure_pch", lambda root, cxx, cflags: ("/pch/dir", 0.5))
    report = {}
    fastbuild._add_pch(str(tmp_path), str(tmp_path / "pch"), report)
    cflags = fastbuild._ninja_vars(str(tmp_path / "build.ninja"))["cflags"]
    assert cflags.endswith(f"-I/pch/dir -include {fastbuild.PCH_NAME} -Winvalid-pch")
    assert report["pch"] is True and report["pch_seconds"] == 0.5
    report = {}
    fastbuild._add_pch(str(tmp_path), "", report)
    assert "pch" not in report, "no PCH without a pch_root"


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
    assert result["build"]["fallbacks"] == ["lite"] and result["build"]["split_skipped"] == "no __global__ kernel"


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="needs nvcc")
def test_split_build_compiles_links_and_imports(tmp_path, monkeypatch):
    """The split build of a source with a namespace, a __constant__, a host launcher and
    host state: one try, no fallback, the module imports (load_inline imports it)."""
    from test_cusplit import SOURCE, PREFIX
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    call = {"name": "kz_test_split", "cpp_sources": ["torch::Tensor run(torch::Tensor x);"],
            "cuda_sources": [SOURCE[len(PREFIX):]], "functions": ["run"]}
    result = build.build_op({"call": call, "build_dir": str(tmp_path / "b"), "accelerate": {"pch_root": ""}})
    assert result["ok"] is True, result
    assert result["build"]["header_mode"] == "split" and "fallbacks" not in result["build"]
    assert result["build"]["split_kernels"] == 1


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="needs nvcc")
def test_split_build_of_kernel_templates_links(tmp_path, monkeypatch):
    """Kernel-template instantiations reach the host part through kz_tl_* launchers; the
    library loads with every symbol bound (nvcc gives template stubs internal linkage,
    so calling them directly would leave them undefined)."""
    import ctypes
    from test_cusplit import TEMPLATE_SOURCE, PREFIX
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    call = {"name": "kz_test_split_tmpl", "cpp_sources": ["torch::Tensor f(torch::Tensor x);"],
            "cuda_sources": [TEMPLATE_SOURCE[len(PREFIX):]], "functions": ["f"]}
    result = build.build_op({"call": call, "build_dir": str(tmp_path / "b"), "accelerate": {"pch_root": ""}})
    assert result["ok"] is True, result
    assert result["build"]["header_mode"] == "split" and "fallbacks" not in result["build"]
    ctypes.CDLL(result["library"], mode=os.RTLD_NOW | os.RTLD_LOCAL)  # raises on an undefined symbol


@pytest.mark.skipif(not os.path.exists("/usr/bin/cc"), reason="needs a C compiler")
def test_a_library_with_an_undefined_symbol_fails_the_split(tmp_path):
    import subprocess
    (tmp_path / "x.c").write_text("extern void kz_missing_stub(void);\nvoid f(void) { kz_missing_stub(); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", str(tmp_path / "x.c"), "-o", str(tmp_path / "x.so")], check=True)
    with pytest.raises(RuntimeError, match="kz_missing_stub"):
        fastbuild._check_symbols(str(tmp_path))


@pytest.mark.skipif(not os.path.exists("/usr/bin/c++"), reason="needs a C++ compiler")
@pytest.mark.parametrize("device, ok", [
    ("void k(float* y) { y[0] = 1; }\n", True),                       # the stub, defined globally
    ("static void k(float* y) { y[0] = 1; }\nvoid* keep = (void*)&k;\n", False),  # only locally
    ("void other(float* y) {}\n", False),                              # a split kernel missing
])
def test_symbol_check_without_torch(tmp_path, device, ok):
    """check_symbols_nm: main.o's kernel stub must be a global definition of cuda.cuda.o."""
    import subprocess
    (tmp_path / "main.cpp").write_text("void k(float*);\nvoid f(float* y) { k(y); }\n")
    (tmp_path / "dev.cpp").write_text(device)
    for src, obj in (("main.cpp", "main.o"), ("dev.cpp", "cuda.cuda.o")):
        subprocess.run(["c++", "-c", str(tmp_path / src), "-o", str(tmp_path / obj)], check=True)
    if ok:
        fastbuild.check_symbols_nm(str(tmp_path), SPLITTABLE)
    else:
        with pytest.raises(RuntimeError, match="_Z1kPf"):
            fastbuild.check_symbols_nm(str(tmp_path), SPLITTABLE)


def test_base_names_of_demangled_symbols():
    assert fastbuild._base_name("void ns::k<16, (a<b)>(float*)") == "k"
    assert fastbuild._base_name("kz_tl_k_16(float*, int)") == "kz_tl_k_16"


def pch_root_for_test(tmp_path):
    """A pch root in tmp_path, sharing the user's precompiled headers when there are any
    (building one takes ~30 s); templates land in tmp_path/cache/ninja."""
    (tmp_path / "cache").mkdir()
    shared = os.path.expanduser("~/.cache/kernelzero/pch")
    if os.path.isdir(shared):
        os.symlink(shared, tmp_path / "cache" / "pch")
    return str(tmp_path / "cache" / "pch")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="needs nvcc")
def test_template_build_equals_the_torch_build_and_loads(tmp_path, monkeypatch):
    """A split build without torch (second build, from the first one's template): same
    main.cpp / cuda.cu / build.ninja as torch's build (modulo name and directory), and a
    library that loads with every symbol bound."""
    import ctypes
    import torch  # noqa: F401  (the library needs libtorch loaded)
    from test_cusplit import TEMPLATE_SOURCE, PREFIX
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    pch_root = pch_root_for_test(tmp_path)
    call = {"name": "kz_test_tmpl_a", "cpp_sources": ["torch::Tensor f(torch::Tensor x);"],
            "cuda_sources": [TEMPLATE_SOURCE[len(PREFIX):]], "functions": ["f"]}
    dirs = {"a": tmp_path / "a", "b": tmp_path / "b"}
    first = build.build_op({"call": call, "build_dir": str(dirs["a"]), "accelerate": {"pch_root": pch_root}})
    assert first["ok"] is True and first["build"]["driver"] == "torch", first
    assert first["build"]["template"] == "saved"
    call_b = dict(call, name="kz_test_tmpl_b")
    second = build.build_op({"call": call_b, "build_dir": str(dirs["b"]), "accelerate": {"pch_root": pch_root}})
    assert second["ok"] is True and second["build"]["driver"] == "template", second
    assert second["library"] == str(dirs["b"] / "kz_test_tmpl_b.so")
    assert second["build"]["header_mode"] == first["build"]["header_mode"] == "split"
    for name in ("main.cpp", "cuda.cu", "build.ninja"):
        a = (dirs["a"] / name).read_text().replace("kz_test_tmpl_a", "kz_test_tmpl_b")
        assert a.replace(str(dirs["a"]), str(dirs["b"])) == (dirs["b"] / name).read_text(), name
    ctypes.CDLL(second["library"], mode=os.RTLD_NOW | os.RTLD_LOCAL)
