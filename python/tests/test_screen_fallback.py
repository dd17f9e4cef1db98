"""Static screen: py.try_except for fallbacks written outside ModelNew (module-level
probes and builds, helpers around load_inline or a Triton launch, flags set in `except`
that select PyTorch compute later), under both policies; and the try/except that stays
legitimate there (optional imports whose fallback computes nothing, re-raising)."""

import textwrap

import pytest

from kz_worker.screen import screen_source

POLICIES = ("strict", "kernelbench")
CUDA_HEADER = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = "torch::Tensor mm(torch::Tensor a, torch::Tensor b);"
CUDA = "__global__ void mm_kernel(const float* a, const float* b, float* c) {}"
'''
TRITON_KERNEL = '''
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''
LAUNCH = '''
    def _launch(self, x):
        y = torch.empty_like(x)
        k[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''


def cuda(body):
    return CUDA_HEADER + textwrap.dedent(body)


def triton_(prelude, forward, methods=LAUNCH, init=""):
    """Triton candidate: `prelude` (imports included) + kernel + ModelNew."""
    return ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
            + textwrap.dedent(prelude) + TRITON_KERNEL
            + "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n" + textwrap.indent(textwrap.dedent(init), " " * 8)
            + "\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(forward), " " * 8)
            + methods)


def screen(src, policy, backend):
    return screen_source(src, backend, policy)  # argument order of the other helpers


def try_findings(src, policy, backend):
    return [f for f in screen(src, policy, backend)["findings"] if f["rule"] == "py.try_except"]


def try_line(src, nth=1):
    return [i for i, l in enumerate(src.splitlines(), 1) if l.strip() == "try:"][nth - 1]


def assert_rejected_at_try(src, backend, nth=1):
    for policy in POLICIES:
        got = try_findings(src, policy, backend)
        assert [f["line"] for f in got] == [try_line(src, nth)], (policy, got)
        assert got[0]["severity"] == "reject"


# ---- shape 1: a module-level try that probes or builds, forward falls back ------------

MODULE_BUILD = cuda('''
try:
    ext = load_inline(name="e", cpp_sources=CPP, cuda_sources=CUDA, functions=["mm"])
except Exception:
    ext = None


class ModelNew(nn.Module):
    def forward(self, a, b):
        if ext is None:
            return torch.matmul(a, b)
        return ext.mm(a, b)
''')

MODULE_PROBE = cuda('''
ext = load_inline(name="e", cpp_sources=CPP, cuda_sources=CUDA, functions=["mm"])
try:
    ext.mm(torch.ones(2, 2, device="cuda"), torch.ones(2, 2, device="cuda"))
    USE_EXT = True
except RuntimeError:
    USE_EXT = False


class ModelNew(nn.Module):
    def forward(self, a, b):
        if USE_EXT:
            return ext.mm(a, b)
        return a @ b
''')

TRITON_FLAG = triton_('''
try:
    import triton
    import triton.language as tl
    HAS_TRITON = True
except ImportError:
    HAS_TRITON = False
''', "if not HAS_TRITON:\n    return torch.softmax(x, dim=1)\nreturn self._launch(x)")

TRITON_NONE_IFEXP = triton_('''
try:
    import triton
    import triton.language as tl
except Exception:
    triton = None
''', "return F.softmax(x, dim=1) if triton is None else self._launch(x)")

TRITON_ATTR_FLAG = triton_('''
try:
    import triton
    import triton.language as tl
    HAS_TRITON = True
except ImportError:
    HAS_TRITON = False
USE_KERNEL = HAS_TRITON and torch.cuda.is_available()
''', "if self.fast:\n    return self._launch(x)\nreturn self._reference(x)",
    methods=LAUNCH + "\n    def _reference(self, x):\n        return x.softmax(dim=1)\n",
    init="self.fast = USE_KERNEL\n")

TRITON_OR_FALLBACK = triton_('''
import triton
import triton.language as tl
try:
    from fast_softmax import softmax as _softmax
except ImportError:
    _softmax = None
_op = _softmax or torch.softmax
''', "return _op(x, dim=1)")


@pytest.mark.parametrize("src,backend", [
    (MODULE_BUILD, "cuda"), (MODULE_PROBE, "cuda"), (TRITON_FLAG, "triton"),
    (TRITON_NONE_IFEXP, "triton"), (TRITON_ATTR_FLAG, "triton"), (TRITON_OR_FALLBACK, "triton"),
], ids=["build", "probe", "flag", "none-ifexp", "self-attr-flag", "or-fallback"])
def test_module_level_try_with_torch_fallback_is_rejected(src, backend):
    assert_rejected_at_try(src, backend)


def test_flag_fallback_message_names_the_test_and_the_compute():
    got = try_findings(TRITON_FLAG, "kernelbench", "triton")[0]["message"]
    assert "at module level" in got and "selects PyTorch compute" in got


# ---- shape 2: a helper outside the class wraps load_inline or a launch in try --------

HELPER_BUILD = cuda('''
def _build():
    try:
        return load_inline(name="e", cpp_sources=CPP, cuda_sources=CUDA, functions=["mm"]).mm
    except Exception:
        return torch.matmul


_mm = _build()


class ModelNew(nn.Module):
    def forward(self, a, b):
        return _mm(a, b)
''')

HELPER_BUILD_NONE = cuda('''
def _build():
    try:
        return load_inline(name="e", cpp_sources=CPP, cuda_sources=CUDA, functions=["mm"])
    except Exception:
        return None


ext = _build()


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.mm(a, b) if ext is not None else torch.mm(a, b)
''')

HELPER_LAUNCH = triton_('''
import triton
import triton.language as tl


def _softmax(x):
    try:
        y = torch.empty_like(x)
        k[(x.shape[0],)](x, y, x.numel(), BLOCK=1024)
        return y
    except Exception:
        return torch.softmax(x, dim=1)


OPS = {"softmax": _softmax}
''', 'return OPS["softmax"](x)')

HELPER_PROBE = triton_('''
def _triton_works():
    try:
        import triton
        return True
    except ImportError:
        return False


import triton
import triton.language as tl
USE_TRITON = _triton_works()
''', "if USE_TRITON:\n    return self._launch(x)\nreturn F.softmax(x, dim=1)")


@pytest.mark.parametrize("src,backend", [
    (HELPER_BUILD, "cuda"), (HELPER_BUILD_NONE, "cuda"), (HELPER_LAUNCH, "triton"),
    (HELPER_PROBE, "triton"),
], ids=["build-torch-callable", "build-none", "launch", "probe"])
def test_helper_try_with_torch_fallback_is_rejected(src, backend):
    assert_rejected_at_try(src, backend)


def test_helper_build_fallback_passed_strict_before():
    """The helper's torch.matmul comes back as "the extension" (_build returns one), so
    py.torch_compute does not see it: py.try_except is the only finding."""
    rules = {f["rule"] for f in screen(HELPER_BUILD, "strict", "cuda")["findings"]}
    assert rules == {"py.try_except"}


def test_swallowing_finally_is_not_a_reraise():
    src = cuda('''
def _build():
    try:
        return load_inline(name="e", cpp_sources=CPP, cuda_sources=CUDA, functions=["mm"])
    except Exception:
        raise
    finally:
        return None


ext = _build()


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.mm(a, b)
''')
    assert_rejected_at_try(src, "cuda")


# ---- legitimate: optional imports without a compute fallback, re-raising --------------

OPTIONAL_IMPORT = triton_('''
import triton
import triton.language as tl
try:
    import numpy as np
except ImportError:
    np = None
''', "return self._launch(x)")

TRITON_REQUIRED = triton_('''
try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None
''', 'if triton is None:\n    raise RuntimeError("needs Triton")\nreturn self._launch(x)')

REIMPORT_RAISE = triton_('''
try:
    import triton
    import triton.language as tl
except ImportError as exc:
    raise ImportError("install triton") from exc
''', "return self._launch(x)")

BUILD_RERAISE = cuda('''
def _build():
    try:
        return load_inline(name="e", cpp_sources=CPP, cuda_sources=CUDA, functions=["mm"])
    except Exception as exc:
        print("build failed:", exc)
        raise RuntimeError("extension build failed") from exc


ext = _build()


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.mm(a, b)
''')

FLAG_SELECTS_OWN_KERNELS = triton_('''
import triton
import triton.language as tl
try:
    from triton.language.extra import libdevice
    HAS_LIBDEVICE = True
except ImportError:
    HAS_LIBDEVICE = False
''', "if HAS_LIBDEVICE:\n    return self._launch(x)\nreturn self._launch(x.contiguous())")


@pytest.mark.parametrize("src,backend", [
    (OPTIONAL_IMPORT, "triton"), (TRITON_REQUIRED, "triton"), (REIMPORT_RAISE, "triton"),
    (BUILD_RERAISE, "cuda"), (FLAG_SELECTS_OWN_KERNELS, "triton"),
], ids=["optional-import", "required-check", "import-reraise", "build-reraise",
        "flag-selects-own-kernels"])
def test_legitimate_try_outside_model_new_passes(src, backend):
    for policy in POLICIES:
        result = screen(src, policy, backend)
        assert result["verdict"] == "pass", (policy, result["findings"])
        assert try_findings(src, policy, backend) == []


def test_inside_model_new_every_try_is_still_reported_once():
    src = triton_("import triton\nimport triton.language as tl\n",
                  "try:\n    return self._launch(x)\nexcept Exception:\n    return x.softmax(1)")
    got = try_findings(src, "kernelbench", "triton")
    assert len(got) == 1 and "ModelNew.forward" in got[0]["message"]


# Torch compute that no flag of the try selects: a warning under kernelbench, not a fallback.
CHECK_THEN_COMPUTE = triton_('''
try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None
''', 'if triton is None:\n    raise RuntimeError("needs Triton")\nreturn self._launch(x) * 2')

SHADOWED_FLAG = triton_('''
import triton
import triton.language as tl
try:
    import numpy
    ok = True
except ImportError:
    ok = False
''', "ok = x.dim() == 2\nif not ok:\n    return x.relu()\nreturn self._launch(x)")


@pytest.mark.parametrize("src", [CHECK_THEN_COMPUTE, SHADOWED_FLAG], ids=["check-then-compute",
                                                                          "shadowed-flag"])
def test_torch_compute_not_selected_by_the_try_is_only_a_kernelbench_warning(src):
    assert screen(src, "kernelbench", "triton")["verdict"] == "pass"
    for policy in POLICIES:
        assert try_findings(src, policy, "triton") == []
    assert screen(src, "strict", "triton")["verdict"] == "reject"  # py.torch_compute


def test_local_flag_in_a_helper_selects_torch():
    src = triton_('''
import triton
import triton.language as tl


def _softmax(x, launch):
    try:
        import triton.language.extra.fastmath
        fast = True
    except ImportError:
        fast = False
    if fast:
        return launch(x)
    return x.softmax(dim=1)


HELPERS = [_softmax]
''', "return HELPERS[0](x, self._launch)")
    assert_rejected_at_try(src, "triton")


def test_build_through_a_helper_and_a_try_in_another_class():
    src = cuda('''
def _build():
    return load_inline(name="e", cpp_sources=CPP, cuda_sources=CUDA, functions=["mm"])


try:
    ext = _build()
except Exception:
    ext = None


class Runner:
    def run(self, a, b):
        try:
            return ext.mm(a, b)
        except RuntimeError:
            return torch.mm(a, b)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.mm(a, b)
''')
    for policy in POLICIES:
        got = try_findings(src, policy, "cuda")
        assert [(f["line"], f["severity"]) for f in got] == [(try_line(src, 1), "reject"),
                                                             (try_line(src, 2), "reject")]
