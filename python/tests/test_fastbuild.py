"""fastbuild: the lighter-header rewrite of cuda.cu, the PCH flags, and the fallback to
torch's full headers for sources that need them (one real nvcc build, marked slow)."""

import os
import subprocess

import pytest

from kz_worker import build, fastbuild, split_symbols

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
    monkeypatch.setattr(fastbuild, "ensure_pch", lambda root, cxx, cflags, header: (f"/pch/{header}", 0.5))
    report = {}
    host = fastbuild._Host(str(tmp_path), str(tmp_path / "pch"), report)
    assert host.use(fastbuild.SLIM_NAME) is True
    cflags = fastbuild._ninja_vars(str(tmp_path / "build.ninja"))["cflags"]
    assert cflags == f"-DTORCH_EXTENSION_NAME=x -fPIC -I/pch/{fastbuild.SLIM_NAME} -include {fastbuild.SLIM_NAME} -Winvalid-pch"
    assert report["pch"] is True and report["pch_seconds"] == 0.5
    assert host.use(fastbuild.SLIM_NAME) is False, "same flags: main.o may be kept"
    assert host.use(fastbuild.PCH_NAME) is True and report["pch_seconds"] == 1.0
    cflags = fastbuild._ninja_vars(str(tmp_path / "build.ninja"))["cflags"]
    assert cflags.endswith(f"-I/pch/{fastbuild.PCH_NAME} -include {fastbuild.PCH_NAME} -Winvalid-pch")
    assert "kz_torch_host" not in cflags
    write_build(tmp_path, "__global__ void k() {}\n")
    report = {}
    fastbuild._Host(str(tmp_path), "", report).use(fastbuild.SLIM_NAME)
    assert report["pch"] is False, "no PCH without a pch_root"
    assert fastbuild._ninja_vars(str(tmp_path / "build.ninja"))["cflags"] == "-DTORCH_EXTENSION_NAME=x -fPIC"


def test_slim_host_rewrites_torch_includes_and_keeps_unchanged_objects(tmp_path):
    write_build(tmp_path, SPLITTABLE)
    fastbuild._apply(str(tmp_path), "split", SPLITTABLE, MAIN, "slim", slim_file=True)
    main = (tmp_path / "main.cpp").read_text()
    assert "torch/extension.h" not in main and "torch/types.h" not in main
    assert main.count(f'#include "{fastbuild.SLIM_NAME}"') == 2      # cuda.cu's and main.cpp's
    assert (tmp_path / fastbuild.SLIM_NAME).read_text() == fastbuild.SLIM_HEADER
    for obj in ("main.o", "cuda.cuda.o"):
        (tmp_path / obj).write_text("built")
    fastbuild._apply(str(tmp_path), "split", SPLITTABLE, MAIN, "torch")
    assert not (tmp_path / "main.o").exists() and (tmp_path / "cuda.cuda.o").exists(), \
        "only the object whose source changed is rebuilt"
    assert not (tmp_path / fastbuild.SLIM_NAME).exists(), "-include must find the PCH, not this copy"
    assert '#line 1 "cuda.cu"\n#include <torch/types.h>' in (tmp_path / "main.cpp").read_text()
    fastbuild._apply(str(tmp_path), "lite", SPLITTABLE, MAIN, "slim")
    assert not (tmp_path / "cuda.cuda.o").exists()
    assert (tmp_path / "main.cpp").read_text() == MAIN.replace("<torch/extension.h>", f'"{fastbuild.SLIM_NAME}"')


SPLIT_DEVICE = "the torch-free device part of cuda.cu"


class FakeNinja:
    """A ninja runner failing as a script says: fail(main.cpp text, cuda.cu text) -> the
    outputs to report as FAILED (empty: success)."""

    def __init__(self, tmp_path, fail):
        self.dir, self.fail, self.runs = tmp_path, fail, []

    def __call__(self):
        main, cu = (self.dir / "main.cpp").read_text(), (self.dir / "cuda.cu").read_text()
        slim = fastbuild.SLIM_NAME in main
        self.runs.append(("slim" if slim else "torch", "lite" if fastbuild.LITE_NAME in cu else
                          "split" if SPLIT_DEVICE in cu else "full",
                          (self.dir / "cuda.cuda.o").exists()))
        failed = self.fail(main, cu)
        for obj in {"main.o", "cuda.cuda.o"} - set(failed):
            (self.dir / obj).write_text("built")
        if failed:
            raise RuntimeError("Error building extension 'x': [1/3] c++ main.cpp\n" + "".join(
                f"FAILED: [code=1] {o} \nsome command\nerror: boom\n" for o in failed))


def run_fake(tmp_path, fail, cu=SPLITTABLE):
    write_build(tmp_path, cu)
    (tmp_path / "main.cpp").write_text(MAIN)
    runner, report = FakeNinja(tmp_path, fail), {}
    try:
        fastbuild.run_modes(str(tmp_path), "", report, runner, lambda d, c: None)
    except RuntimeError as exc:
        report["raised"] = str(exc)
    return runner.runs, report


def test_slim_host_failure_retries_the_same_mode_with_torchs_header_keeping_the_device_object(tmp_path):
    runs, report = run_fake(tmp_path, lambda main, cu: ["main.o"] if fastbuild.SLIM_NAME in main else [])
    assert runs == [("slim", "split", False), ("torch", "split", True)]
    assert report["header_mode"] == "split" and report["host_header"] == "torch"
    assert report["fallbacks"] == ["split+slim"]


def test_device_failure_moves_on_with_the_slim_host(tmp_path):
    runs, report = run_fake(tmp_path, lambda main, cu: ["cuda.cuda.o"] if SPLIT_DEVICE in cu else [])
    assert runs == [("slim", "split", False), ("slim", "lite", False)]
    assert report["header_mode"] == "lite" and report["host_header"] == "slim" and report["fallbacks"] == ["split+slim"]


class FakeNinjaErrors(FakeNinja):
    """FakeNinja whose failure message carries nvcc error lines."""

    def __init__(self, tmp_path, fail, errors):
        super().__init__(tmp_path, fail)
        self.errors = errors

    def __call__(self):
        try:
            super().__call__()
        except RuntimeError as exc:
            raise RuntimeError(str(exc) + "".join(f'/tmp/b/cuda.cu(16): error: {e}\n' for e in self.errors))


@pytest.mark.parametrize("errors,tried", [
    (['a value of type "float *" cannot be used to initialize an entity of type "int *"', 'expected a ";"'], 1),
    (['identifier "at" is undefined'], 3),
    (['expected a ";"', 'namespace "c10" has no member "Half"'], 3),
    ([], 3),
])
def test_device_errors_no_header_can_cure_end_the_fallbacks(tmp_path, errors, tried):
    write_build(tmp_path, SPLITTABLE)
    (tmp_path / "main.cpp").write_text(MAIN)
    runner, report = FakeNinjaErrors(tmp_path, lambda main, cu: ["cuda.cuda.o"], errors), {}
    with pytest.raises(RuntimeError) as exc:
        fastbuild.run_modes(str(tmp_path), "", report, runner, lambda d, c: None)
    assert len(runner.runs) == tried and ("fallbacks_skipped" in report) == (tried == 1)
    assert all(e in str(exc.value) for e in errors)


def test_the_last_mode_builds_torchs_own_files_and_its_error_is_raised(tmp_path):
    runs, report = run_fake(tmp_path, lambda main, cu: ["cuda.cuda.o", "main.o"])
    assert runs == [("slim", "split", False), ("torch", "lite", False), ("torch", "full", False)]
    assert report["fallbacks"] == ["split+slim", "lite", "full"] and report["host_header"] == "torch"
    assert report["raised"].startswith("Error building extension 'x': [1/3]")
    assert (tmp_path / "main.cpp").read_text() == MAIN and (tmp_path / "cuda.cu").read_text() == SPLITTABLE


@pytest.mark.skipif(not os.path.exists("/usr/bin/c++"), reason="needs a C++ compiler")
def test_sources_pulling_in_torchs_frontend_skip_the_slim_header(tmp_path, monkeypatch):
    inc = tmp_path / "include"
    (inc / "torch").mkdir(parents=True)
    (inc / "torch" / "torch.h").write_text("#include <torch/all.h>\n")   # an umbrella, as torch's
    for name in ("all.h", "types.h"):
        (inc / "torch" / name).write_text("")
    pch = tmp_path / "pch"
    pch.mkdir()
    (pch / fastbuild.FRONTEND_LIST).write_text(f"{os.path.realpath(inc / 'torch' / 'all.h')}\n")
    monkeypatch.setattr(fastbuild, "ensure_pch", lambda root, cxx, cflags, header: (str(pch), 0.0))
    (tmp_path / "build.ninja").write_text(f"cxx = c++\ncflags = -DTORCH_EXTENSION_NAME=x -isystem {inc} -fPIC\n")
    host = fastbuild._Host(str(tmp_path), str(pch), {})
    assert host.slim_refused([MAIN, "#include <torch/types.h>\n#include <queue>\n"]) is None
    assert host.slim_refused([MAIN, "#include <torch/torch.h>\n"]) == \
        "its includes (torch/torch.h) pull in torch's C++ frontend (torch/all.h)"
    (inc / "torch" / "torch.h").write_text("")          # the answer is kept per include set
    assert host.slim_refused([MAIN, "#include <torch/torch.h>\n"]).endswith("(torch/all.h)")
    assert host.slim_refused([MAIN, "#include <torch/missing.h>\n"]) is None


@pytest.mark.skipif(not os.path.exists("/usr/bin/c++"), reason="needs a C++ compiler")
def test_frontend_list_is_what_only_the_full_header_includes(tmp_path, monkeypatch):
    inc = tmp_path / "torch" / "include"
    (inc / "torch").mkdir(parents=True)
    (inc / "torch" / "extension.h").write_text("#include <torch/types.h>\n#include <torch/nn.h>\n#include <queue>\n")
    for name in ("types.h", "nn.h"):
        (inc / "torch" / name).write_text("")
    pch = tmp_path / "pch"
    pch.mkdir()
    (pch / fastbuild.SLIM_NAME).write_text("#include <torch/types.h>\n")
    fastbuild._write_frontend_list(str(pch), "c++", ["-isystem", str(inc)])
    listed = (pch / fastbuild.FRONTEND_LIST).read_text().splitlines()
    assert listed == sorted(os.path.realpath(inc / "torch" / n) for n in ("extension.h", "nn.h"))


def test_a_pch_in_use_is_locked_against_eviction_and_rebuilt_once_evicted(tmp_path):
    import fcntl
    import shutil
    cxx = tmp_path / "cxx"   # writes its -o file and counts its runs
    cxx.write_text("#!/bin/sh\necho run >> \"$(dirname \"$0\")/runs\"\n"
                   "while [ $# -gt 1 ]; do [ \"$1\" = -o ] && echo pch > \"$2\"; shift; done\n")
    cxx.chmod(0o755)
    root = str(tmp_path / "pch")
    pch_dir, _ = fastbuild.ensure_pch(root, str(cxx), "-fPIC")
    assert os.path.isfile(os.path.join(pch_dir, fastbuild.PCH_NAME + ".gch"))
    with open(pch_dir + ".lock", "a") as other:       # what kz's eviction tries
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert fastbuild.ensure_pch(root, str(cxx), "-fPIC") == (pch_dir, 0.0)
    shutil.rmtree(pch_dir)                             # evicted (e.g. by another host's rules)
    assert fastbuild.ensure_pch(root, str(cxx), "-fPIC")[0] == pch_dir
    assert (tmp_path / "runs").read_text() == "run\nrun\n"


def test_a_slim_header_that_does_not_compile_is_tried_once(tmp_path):
    cxx = tmp_path / "cxx"
    cxx.write_text("#!/bin/sh\necho run >> \"$(dirname \"$0\")/runs\"\necho 'x.h:1: error: no such header'\nexit 1\n")
    cxx.chmod(0o755)
    for _ in range(2):
        with pytest.raises((OSError, subprocess.CalledProcessError)):
            fastbuild.ensure_pch(str(tmp_path / "pch"), str(cxx), "-fPIC", fastbuild.SLIM_NAME)
    assert (tmp_path / "runs").read_text() == "run\n", "the second build does not try again"
    report = {}
    (tmp_path / "build.ninja").write_text(f"cxx = {cxx}\ncflags = -fPIC\n")
    host = fastbuild._Host(str(tmp_path), str(tmp_path / "pch"), report)
    assert host.slim_refused(["#include <torch/extension.h>\n"]).startswith("no precompiled kz_torch_host.h")


def test_fast_linker_with_the_default_one_behind_it(tmp_path, monkeypatch):
    rule = "rule link\n  command = $cxx $in $ldflags -o $out\n"
    (tmp_path / "build.ninja").write_text(rule)
    monkeypatch.setattr(fastbuild.shutil, "which", lambda name: None)
    report = {}
    fastbuild._fast_link(str(tmp_path), report)
    assert (tmp_path / "build.ninja").read_text() == rule and "linker" not in report
    monkeypatch.setattr(fastbuild.shutil, "which", lambda name: "/usr/bin/" + name if name == "ld.gold" else None)
    fastbuild._fast_link(str(tmp_path), report)
    assert (tmp_path / "build.ninja").read_text() == (
        "rule link\n  command = $cxx $in $ldflags -fuse-ld=gold -o $out 2>/dev/null || $cxx $in $ldflags -o $out\n")
    assert report["linker"] == "gold"


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
    assert result["build"]["header_mode"] == "full" and result["build"]["host_header"] == "torch"
    assert result["build"]["fallbacks"] == ["lite+slim"] and result["build"]["split_skipped"] == "no __global__ kernel"


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
    assert result["build"]["host_header"] == "slim" and result["build"]["split_kernels"] == 1


HOST_NEEDS_FRONTEND = r"""
#include <torch/extension.h>
__global__ void k(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = y[i] > 0.f ? y[i] : 0.f; }
torch::Tensor run(torch::Tensor x) {
  k<<<1, 32>>>(x.data_ptr<float>(), (int)x.numel());
  return torch::nn::functional::relu(x);
}
"""


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="needs nvcc")
def test_split_host_part_needing_the_frontend_uses_torchs_header(tmp_path, monkeypatch):
    """torch::nn::functional is in <torch/extension.h> but not in the slim header: the
    split build's host compile fails against it and is redone against torch's."""
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    call = {"name": "kz_test_frontend", "cpp_sources": ["torch::Tensor run(torch::Tensor x);"],
            "cuda_sources": [HOST_NEEDS_FRONTEND], "functions": ["run"]}
    result = build.build_op({"call": call, "build_dir": str(tmp_path / "b"), "accelerate": {"pch_root": ""}})
    assert result["ok"] is True, result
    assert result["build"]["header_mode"] == "split" and result["build"]["host_header"] == "torch"
    assert result["build"]["fallbacks"] == ["split+slim"]


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
        split_symbols.check_symbols(str(tmp_path))


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
        split_symbols.check_symbols_nm(str(tmp_path), SPLITTABLE)
    else:
        with pytest.raises(RuntimeError, match="_Z1kPf"):
            split_symbols.check_symbols_nm(str(tmp_path), SPLITTABLE)


def test_base_names_of_demangled_symbols():
    assert split_symbols._base_name("void ns::k<16, (a<b)>(float*)") == "k"
    assert split_symbols._base_name("kz_tl_k_16(float*, int)") == "kz_tl_k_16"


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
