"""Static screen: py.torch_compute, py.global_cache and py.try_except, which depend on
what runs with ModelNew (forward, the helpers it reaches, its methods)."""

import textwrap

import pytest

from kz_worker.screen import screen_source

HEADER = '''import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

'''
INIT = '''self.w = nn.Parameter(torch.ones(4))
self.conv = nn.Conv2d(3, 3, 3)
self.act = F.relu
self.layers = nn.ModuleList([nn.Linear(4, 4)])
self.factor = 2
self.cache = {}
'''


def candidate(forward, init=INIT, prelude="", methods=""):
    """A Triton candidate whose ModelNew.forward(self, x) has body `forward`."""
    return (HEADER + textwrap.dedent(prelude) + "\n\nclass ModelNew(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            + textwrap.indent(textwrap.dedent(init), " " * 8)
            + "\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(forward), " " * 8)
            + "\n" + textwrap.indent(textwrap.dedent(methods), " " * 4))


def findings(source, rule=None, policy="strict", backend="triton"):
    result = screen_source(source, backend, policy)
    return [f for f in result["findings"] if rule is None or f["rule"] == rule]


def line_of(source, text):
    return next(i for i, l in enumerate(source.splitlines(), 1) if text in l)


COMPUTE = {
    "torch function": "return torch.relu(x)",
    "functional": "return F.softmax(x, dim=1)",
    "matmul operator": "return x @ x.t()",
    "tensor times scalar": "return x * 2",
    "in-place add": "y = torch.empty_like(x)\ny += x\nreturn y",
    "tensor method": "return x.sum(dim=1)",
    "in-place method": "return x.clamp_(min=0)",
    "unary minus": "return -x",
    "comparison": "return (x > 0).float()",
    "parameter arithmetic": "return x + self.w",
    "torch.nn module call": "return self.conv(x)",
    "stored functional": "return self.act(x)",
    "module list loop": "for layer in self.layers:\n    x = layer(x)\nreturn x",
    "module list index": "return self.layers[0](x)",
    "module built in forward": "return nn.ReLU()(x)",
    "alias": "f = torch.exp\nreturn f(x)",
    "getattr constant": 'return getattr(torch, "tanh")(x)',
    "getattr folded": 'return getattr(x, "sig" + "moid")()',
    "getattr computed": "name = 'relu'\nreturn getattr(torch, name)(x)",
    "reference passed": "return list(map(torch.relu, [x]))[0]",
    "dunder": "return x.__mul__(x)",
    "builtin abs": "return abs(x)",
    "numpy on a tensor": "import numpy as np\nreturn torch.from_numpy(np.exp(x.cpu().numpy()))",
    "operator module": "import operator\nreturn operator.mul(x, x)",
    "aten op": "return torch.ops.aten.relu(x)",
    "Tensor method by class": "return torch.Tensor.relu(x)",
    "gather by tensor index": "idx = torch.arange(4)\nreturn x[idx]",
    "comprehension": "return [t * 2 for t in x.unbind(0)]",
    "type(x) method": "return type(x).exp(x)",
    "where": "return torch.where(x > 0, x, 0.0)",
    "cat": "return torch.cat([x, x])",
    "builtin sum over tensors": "return sum([x, x])",
    "functools.reduce": "import functools, operator\nreturn functools.reduce(operator.add, [x, x])",
    "local import": "import torch as T\nreturn T.relu(x)",
    "local from-import": "from torch import relu as r\nreturn r(x)",
}


@pytest.mark.parametrize("body", COMPUTE.values(), ids=COMPUTE.keys())
def test_pytorch_compute_in_forward_is_rejected_under_strict(body):
    src = candidate(body)
    got = findings(src, "py.torch_compute")
    assert got and all(f["severity"] == "reject" for f in got)
    assert got[0]["line"] >= line_of(src, "def forward")
    assert "ModelNew.forward" in got[0]["message"]


def test_pytorch_compute_is_a_warning_under_kernelbench():
    result = screen_source(candidate("return torch.relu(x)"), "triton", "kernelbench")
    assert result["verdict"] == "pass"
    assert [f["severity"] for f in result["findings"]] == ["warn"]


ALLOWED = {
    "allocation": "y = torch.empty_like(x)\nz = torch.zeros(4, device=x.device)\n"
                  "o = x.new_empty((2, 2))\nreturn y",
    "metadata arithmetic": "M, N = x.shape\nn = x.numel() * x.stride(0) + x.size(1) // 2\n"
                           "return x.view(M * N).reshape(M, N)",
    "launch": "y = torch.empty_like(x)\nn = x.numel()\n"
              "k[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)\nreturn y",
    "views and moves": "return x.t().contiguous().to(torch.float16).float().view_as(x)",
    "clone and copy": "y = x.clone()\ny.copy_(x)\nreturn y.detach()",
    "slice": "return x[:, :4].contiguous()",
    "dtype checks": "assert x.is_cuda and x.dtype == torch.float32 and x.dim() == 2\nreturn x",
    "is None": "b = self.w if self.w is not None else None\nreturn x",
    "parameter pointer": "w = self.w.contiguous()\nk[(1,)](x, w, w.numel(), BLOCK=4)\nreturn x",
    "module weight": "w = self.conv.weight.contiguous()\nreturn w",
    "scalar attribute": "n = x.numel() * self.factor\nreturn x",
    "python containers": "seen = set()\nseen.add(1)\nout = []\nout.append(x)\nreturn out[0]",
    "math on shapes": "import math\nimport numpy as np\ns = 1.0 / math.sqrt(x.shape[-1])\n"
                      "n = int(np.prod(x.shape))\nreturn x",
    "cuda helpers": "torch.cuda.synchronize()\ns = torch.cuda.current_stream()\n"
                    "with torch.cuda.device(x.device):\n    pass\nreturn x",
    "custom op": "return torch.ops.my_ext.relu(x)",
    "no_grad": "with torch.no_grad():\n    return x",
    "alignment check": "assert x.data_ptr() % 16 == 0\nreturn x",
    "workspace cache": "if self.cache.get('buf') is None:\n"
                       "    self.cache['buf'] = torch.empty(4)\nreturn x",
    "launch config keyed by shape": "M, N = x.shape\nself.cache[x.shape] = (128, 4)\n"
                                    "self.cache[(M, N)] = triton.cdiv(M, 64)\nreturn x",
}


@pytest.mark.parametrize("body", ALLOWED.values(), ids=ALLOWED.keys())
def test_allowed_patterns_in_forward(body):
    assert findings(candidate(body)) == []


def test_torch_calls_in_init_are_fine():
    init = INIT + "nn.init.kaiming_uniform_(self.w.view(2, 2))\nself.t = torch.randn(4).exp() * 2\n"
    assert findings(candidate("return x", init=init)) == []


def test_scalar_parameters_of_forward_and_helpers():
    src = HEADER + textwrap.dedent('''
        def grid(n, block=256):
            return (n + block - 1) // block

        class ModelNew(nn.Module):
            def forward(self, x: torch.Tensor, dim: int = 1, scale=2.0):
                y = torch.empty_like(x)
                k[(grid(x.numel()) * dim,)](x, y, x.numel() * scale, BLOCK=256)
                return y
        ''')
    assert findings(src) == []


HELPERS = {
    "module function": ('def _h(t):\n    return t.exp()\n', "return _h(x)", ""),
    "method": ("", "return self._impl(x)", "def _impl(self, t):\n    return t * 3\n"),
    "property": ("", "return self.p", "@property\ndef p(self):\n    return torch.ones(3).exp()\n"),
    "helper of helper": ('def _a(t):\n    return _b(t)\ndef _b(t):\n    return t.tanh()\n',
                         "return _a(x)", ""),
    "returned tensor": ('def _h(t):\n    return t\n', "y = _h(x)\nreturn y * 2", ""),
}


@pytest.mark.parametrize("parts", HELPERS.values(), ids=HELPERS.keys())
def test_compute_in_helpers_reached_from_forward(parts):
    prelude, body, methods = parts
    got = findings(candidate(body, prelude=prelude, methods=methods), "py.torch_compute")
    assert got, "compute in a helper must be found"


def test_helpers_not_reached_from_forward_are_not_screened_for_compute():
    prelude = "def _init_weights(t):\n    return t.normal_() * 0.02\n"
    init = INIT + "self.v = nn.Parameter(_init_weights(torch.empty(4)))\n"
    assert findings(candidate("return self.v", init=init, prelude=prelude)) == []


INDIRECT = {
    "class attribute lambda": """
class ModelNew(nn.Module):
    forward = lambda self, x: torch.relu(x)
""",
    "assigned after the class": """
class ModelNew(nn.Module):
    def forward(self, x):
        return x
def _f(self, x):
    return x.exp()
ModelNew.forward = _f
""",
    "self.forward in __init__": """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.forward = self._g
    def _g(self, x):
        return x * 3
""",
    "inherited torch module": """
class ModelNew(nn.Linear):
    pass
""",
    "module-level callables": """
OPS = [torch.relu]
class ModelNew(nn.Module):
    def forward(self, x):
        return OPS[0](x)
""",
    "functools.partial": """
import functools
ACT = functools.partial(F.leaky_relu, negative_slope=0.1)
class ModelNew(nn.Module):
    def forward(self, x):
        return ACT(x)
""",
    "forward hook": """
def _hook(m, i, out):
    return out.relu()
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_hook(_hook)
    def forward(self, x):
        return x
""",
    "decorator wrapper": """
def deco(fn):
    def wrap(self, x):
        return torch.relu(fn(self, x))
    return wrap
class ModelNew(nn.Module):
    @deco
    def forward(self, x):
        return x
""",
    "autograd.Function": """
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sigmoid()
class ModelNew(nn.Module):
    def forward(self, x):
        return Fn.apply(x)
""",
    "helper object": """
class Runner:
    def run(self, t):
        return t.tanh()
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.r = Runner()
    def forward(self, x):
        return self.r.run(x)
""",
    "varargs": """
class ModelNew(nn.Module):
    def forward(self, *xs):
        return xs[0] * 2
""",
    "parameter named like a builtin": """
class ModelNew(nn.Module):
    def forward(self, input):
        return input.relu()
""",
    "star import": """
from torch import *
class ModelNew(nn.Module):
    def forward(self, x):
        return relu(x)
""",
    "module-level getattr": """
_OP = getattr(torch, "soft" + "max")
class ModelNew(nn.Module):
    def forward(self, x):
        return _OP(x, 1)
""",
    "module-level lambda": """
act = lambda t: t.relu()
class ModelNew(nn.Module):
    def forward(self, x):
        return act(x)
""",
    "lambda stored in __init__": """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = lambda t: t.exp()
    def forward(self, x):
        return self.f(x)
""",
    "nested def stored in __init__": """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        def inner(t):
            return t.sin()
        self.g = inner
    def forward(self, x):
        return self.g(x)
""",
    "__call__ override": """
class ModelNew(nn.Module):
    def __call__(self, x):
        return torch.relu(x)
""",
}


@pytest.mark.parametrize("tail", INDIRECT.values(), ids=INDIRECT.keys())
def test_indirect_pytorch_compute(tail):
    assert findings(HEADER + tail.lstrip("\n"), "py.torch_compute")


def test_extension_calls_are_not_compute_even_with_torch_like_names():
    src = HEADER + "from torch.utils.cpp_extension import load_inline\n" + textwrap.dedent('''
        ext = load_inline(name="e", cpp_sources="", cuda_sources="__global__ void f() {}",
                          functions=["matmul", "relu"])

        def _load():
            return load_inline(name="g", cpp_sources="", cuda_sources="", functions=["sum"])

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.ext = ext
                self.lazy = None

            def forward(self, x):
                if self.lazy is None:
                    self.lazy = _load()
                y = ext.relu(x)
                return self.ext.matmul(y, y) if x.numel() else self.lazy.sum(x)
        ''')
    assert findings(src, backend="cuda") == []


GLOBAL_CACHE = {
    "self dict keyed by data_ptr": "key = (x.data_ptr(), x.shape)\nif key in self.cache:\n"
                                   "    return self.cache[key]\n"
                                   "y = x.clone()\nself.cache[key] = y\nreturn y",
    "module dict keyed by shape": "_RESULTS[tuple(x.shape)] = x\nreturn _RESULTS[tuple(x.shape)]",
    "keyed by _version": "self.cache.setdefault((x._version,), x)\nreturn x",
    "keyed by id": "_RESULTS[id(x)] = x\nreturn x",
    "keyed by the tensor": "_RESULTS[x] = x\nreturn x",
    "pointer kept": "self.last = x.data_ptr()\nreturn x",
    "pointer compared": "if x.data_ptr() == self.last:\n    return self.out\nreturn x",
    "input kept": "self.recent = self.recent + [(x, x)]\nreturn x",
    "input appended": "self.seen.append(x)\nreturn x",
    "weak reference kept": "import weakref\nself.recent = [(weakref.ref(x), x)]\nreturn x",
}


@pytest.mark.parametrize("body", GLOBAL_CACHE.values(), ids=GLOBAL_CACHE.keys())
def test_result_caches_are_rejected_under_both_policies(body):
    src = candidate(body, init=INIT + "self.recent = []\nself.seen = []\nself.last = 0\n",
                    prelude="_RESULTS = {}\n")
    for policy in ("strict", "kernelbench"):
        got = findings(src, "py.global_cache", policy=policy)
        assert got and got[0]["severity"] == "reject"


def test_memoising_decorator_on_a_helper_of_tensors():
    prelude = "import functools\n\n@functools.lru_cache(maxsize=None)\ndef _run(t):\n    return t\n"
    assert findings(candidate("return _run(x)", prelude=prelude), "py.global_cache")
    grid = "import functools\n\n@functools.cache\ndef _grid(n):\n    return (n + 255) // 256\n"
    assert findings(candidate("g = _grid(x.numel())\nreturn x", prelude=grid)) == []


def test_try_except_in_forward_and_helpers_and_methods():
    body = "try:\n    return x\nexcept Exception:\n    return x"
    assert findings(candidate(body), "py.try_except")
    prelude = "def _h(t):\n    try:\n        return t\n    except RuntimeError:\n        return t\n"
    assert findings(candidate("return _h(x)", prelude=prelude), "py.try_except")
    init = INIT + "try:\n    import foo\nexcept ImportError:\n    pass\n"
    assert findings(candidate("return x", init=init), "py.try_except")
    body = "import contextlib\nwith contextlib.suppress(Exception):\n    pass\nreturn x"
    got = findings(candidate(body), "py.try_except")
    assert got and got[0]["severity"] == "reject"


def test_swallowing_context_manager_is_try_except():
    prelude = "class Quiet:\n    def __enter__(self):\n        return self\n" \
              "    def __exit__(self, *exc):\n        return True\n"
    got = findings(candidate("with Quiet():\n    return x.relu()\nreturn x", prelude=prelude),
                   "py.try_except")
    assert got and got[0]["severity"] == "reject"


def test_try_except_boundaries():
    # try/finally has no fallback; module-level try around an import is not ModelNew's.
    prelude = "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n"
    assert findings(candidate("try:\n    return x\nfinally:\n    pass", prelude=prelude)) == []
    # ...but a module-level try around load_inline is a fallback for a failed build.
    src = HEADER + textwrap.dedent('''
        from torch.utils.cpp_extension import load_inline
        try:
            ext = load_inline(name="e", cpp_sources="", cuda_sources="__global__ void f() {}")
        except Exception:
            ext = None
        class ModelNew(nn.Module):
            def forward(self, x):
                return ext.f(x)
        ''')
    got = findings(src, "py.try_except", backend="cuda")
    assert got and got[0]["line"] == line_of(src, "try:")
