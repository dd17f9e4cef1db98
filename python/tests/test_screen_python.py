"""Static screen: the file-wide Python rules (patching, concurrency, introspection,
reference access, native loaders, subclasses, compilation, streams), syntax errors and
the Triton half of gen.no_kernel."""

import textwrap

import pytest

from kz_worker.screen import screen_source

HEADER = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

'''
MODEL = '''

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        k[(1,)](x, x.numel(), BLOCK=128)
        return y
'''


def screen(code, policy="strict", backend="triton"):
    return screen_source(HEADER + textwrap.dedent(code) + MODEL, backend, policy)


def rules(code, policy="strict"):
    return {(f["rule"], f["severity"]) for f in screen(code, policy)["findings"]}


CHEATS = {
    # py.concurrency
    "import threading": ("py.concurrency", "import threading"),
    "from concurrent.futures": ("py.concurrency", "from concurrent.futures import wait"),
    "from concurrent import futures": ("py.concurrency", "from concurrent import futures"),
    "multiprocessing": ("py.concurrency", "import multiprocessing as mp\np = mp.Process"),
    "asyncio": ("py.concurrency", "import asyncio"),
    "subprocess": ("py.concurrency", "import subprocess"),
    "os.fork": ("py.concurrency", "import os\npid = os.fork"),
    "os.system": ("py.concurrency", "import os\nos.system('true')"),
    "signal": ("py.concurrency", "import signal"),
    "torch.multiprocessing": ("py.concurrency", "import torch.multiprocessing"),
    # py.timer_patch
    "Event.elapsed_time": ("py.timer_patch", "torch.cuda.Event.elapsed_time = lambda s, e: 1.0"),
    "synchronize": ("py.timer_patch", "torch.cuda.synchronize = lambda *a: None"),
    "time.perf_counter": ("py.timer_patch", "import time\ntime.perf_counter = lambda: 0.0"),
    "from time import": ("py.timer_patch", "import time as t\nsetattr(t, 'time', lambda: 0)"),
    "setattr synchronize": ("py.timer_patch", "setattr(torch.cuda, 'synchronize', print)"),
    "do_bench": ("py.timer_patch", "triton.testing.do_bench = lambda f: 0.1"),
    "Event class": ("py.timer_patch", "torch.cuda.Event = object"),
    "event object": ("py.timer_patch", "e = torch.cuda.Event()\ne.elapsed_time = lambda o: 0"),
    "mock.patch": ("py.timer_patch", "from unittest import mock\nmock.patch('time.perf_counter')"),
    # py.module_patch
    "torch function": ("py.module_patch", "torch.allclose = lambda *a, **k: True"),
    "functional": ("py.module_patch", "import torch.nn.functional as F\nF.relu = lambda x: x"),
    "nn.Module.__call__": ("py.module_patch", "nn.Module.__call__ = lambda self, *a: None"),
    "Tensor method": ("py.module_patch", "torch.Tensor.add = lambda a, b: a"),
    "setattr module": ("py.module_patch", "setattr(torch, 'matmul', None)"),
    "del": ("py.module_patch", "del torch.nn.functional.gelu"),
    "setattr computed name": ("py.module_patch", "def p(m, n, v):\n    setattr(m, n, v)"),
    "vars() computed key": ("py.timer_patch", "import time\nname = input()\nvars(time)[name] = None"),
    "builtins": ("py.module_patch", "import builtins\nbuiltins.print = lambda *a: None"),
    "__builtins__": ("py.module_patch", "__builtins__['len'] = lambda x: 0"),
    "module dict": ("py.module_patch", "torch.__dict__['relu'] = None"),
    "vars(module)": ("py.module_patch", "vars(torch)['exp'] = None"),
    "cudnn flag": ("py.module_patch", "torch.backends.cudnn.enabled = False"),
    "global setting call": ("py.module_patch", "torch.set_num_threads(1)"),
    "matmul precision": ("py.module_patch", "torch.set_float32_matmul_precision('high')"),
    "via __class__": ("py.module_patch", "t = torch.ones(1)\nt.__class__.__add__ = None"),
    # py.tensor_subclass
    "Tensor subclass": ("py.tensor_subclass", "class T(torch.Tensor):\n    pass"),
    "__torch_function__": ("py.tensor_subclass",
                           "class T:\n    def __torch_function__(cls, *a):\n        pass"),
    "__torch_dispatch__": ("py.tensor_subclass", "def __torch_dispatch__(*a):\n    pass"),
    "_make_subclass": ("py.tensor_subclass", "t = torch.Tensor._make_subclass(object, None)"),
    "as_subclass": ("py.tensor_subclass", "t = torch.ones(1).as_subclass(torch.Tensor)"),
    "torch.library": ("py.tensor_subclass", "lib = torch.library.Library('aten', 'IMPL')"),
    "type() subclass": ("py.tensor_subclass", "T = type('T', (torch.Tensor,), {})"),
    "subclass via __mro__": ("py.tensor_subclass", "T = type('T', (nn.Parameter.__mro__[1],), {})"),
    "class via __mro__": ("py.tensor_subclass", "class T(nn.Parameter.__mro__[1]):\n    pass"),
    "dispatch mode": ("py.tensor_subclass", "from torch.utils._python_dispatch import *"),
    # py.torch_compile
    "torch.compile": ("py.torch_compile", "f = torch.compile(lambda x: x)"),
    "decorator": ("py.torch_compile", "@torch.compile\ndef f(x):\n    return x"),
    "dynamo": ("py.torch_compile", "import torch._dynamo"),
    "inductor": ("py.torch_compile", "from torch._inductor import config"),
    "jit.script": ("py.torch_compile", "f = torch.jit.script"),
    "jit.trace": ("py.torch_compile", "f = torch.jit.trace(nn.ReLU(), torch.ones(1))"),
    # py.introspection
    "_getframe": ("py.introspection", "import sys\nf = sys._getframe(1)"),
    "f_back": ("py.introspection", "def g(fr):\n    return fr.f_back"),
    "f_locals": ("py.introspection", "def g(fr):\n    return fr.f_locals"),
    "inspect.stack": ("py.introspection", "import inspect\ns = inspect.stack()"),
    "currentframe": ("py.introspection", "from inspect import currentframe"),
    "gc.get_objects": ("py.introspection", "import gc\no = gc.get_objects()"),
    "gc.get_referrers": ("py.introspection", "import gc\no = gc.get_referrers"),
    "__globals__": ("py.introspection", "def g(f):\n    return f.__globals__"),
    "exec": ("py.introspection", "exec('x = 1')"),
    "eval": ("py.introspection", "v = eval('1 + 1')"),
    "globals()": ("py.introspection", "g = globals()"),
    "getattr(module, computed)": ("py.introspection", "import os\nf = getattr(os, input())"),
    "module dict computed": ("py.introspection", "f = torch.__dict__[input()]"),
    "computed attrgetter": ("py.introspection",
                            "import operator\nf = operator.attrgetter(bytes([115]).decode())"),
    "computed methodcaller": ("py.introspection",
                              "import operator\nname = input()\nf = operator.methodcaller(name)"),
    # py.reference_access
    "sys.modules": ("py.reference_access", "import sys\nm = sys.modules['__main__']"),
    "import __main__": ("py.reference_access", "import __main__"),
    "importlib": ("py.reference_access", "import importlib\nm = importlib.import_module('x')"),
    "__import__": ("py.reference_access", "m = __import__('os')"),
    "open": ("py.reference_access", "src = open(__file__).read()"),
    "read_text": ("py.reference_access", "from pathlib import Path\ns = Path('t.py').read_text()"),
    "os.listdir": ("py.reference_access", "import os\nfiles = os.listdir('.')"),
    "torch.load": ("py.reference_access", "w = torch.load('ref.pt')"),
    "Model undefined": ("py.reference_access", "def g():\n    return Model()"),
    "get_inputs undefined": ("py.reference_access", "def g():\n    return get_inputs()"),
    "Model by name": ("py.reference_access", "def g(ns):\n    return ns['Mod' + 'el']"),
    "Model imported": ("py.reference_access", "from reference import Model"),
    "linecache": ("py.reference_access", "import linecache"),
    "inspect.getsource": ("py.reference_access", "import inspect\ns = inspect.getsource(nn)"),
    # py.env_write
    "environ item": ("py.env_write", "import os\nos.environ['CUDA_LAUNCH_BLOCKING'] = '1'"),
    "environ update": ("py.env_write", "import os\nos.environ.update(TRITON_INTERPRET='1')"),
    "environ setdefault": ("py.env_write", "from os import environ\nenviron.setdefault('A', 'b')"),
    "putenv": ("py.env_write", "import os\nos.putenv('A', 'b')"),
    "del environ": ("py.env_write", "import os\ndel os.environ['A']"),
    # py.native_loader
    "ctypes": ("py.native_loader", "import ctypes\nlib = ctypes.CDLL('libcublas.so')"),
    "from ctypes": ("py.native_loader", "from ctypes import cdll"),
    "cffi": ("py.native_loader", "import cffi"),
    "load_library": ("py.native_loader", "torch.ops.load_library('/tmp/x.so')"),
    "cpp_extension.load": ("py.native_loader",
                           "from torch.utils.cpp_extension import load\nm = load('m', ['m.cu'])"),
    "ExtensionFileLoader": ("py.native_loader", "import importlib.machinery as m\n"
                            "L = m.ExtensionFileLoader"),
    # py.extra_stream (a warning)
    "Stream": ("py.extra_stream", "s = torch.cuda.Stream()"),
    "stream context": ("py.extra_stream", "def g(s):\n    with torch.cuda.stream(s):\n"
                                          "        pass"),
    "graph": ("py.extra_stream", "g = torch.cuda.CUDAGraph()"),
}


@pytest.mark.parametrize("rule,code", CHEATS.values(), ids=CHEATS.keys())
def test_each_rule_catches_its_cheat(rule, code):
    result = screen(code)
    got = [f for f in result["findings"] if f["rule"] == rule]
    assert got, result["findings"]
    expected = "warn" if rule == "py.extra_stream" else "reject"
    assert got[0]["severity"] == expected
    assert result["verdict"] == ("pass" if expected == "warn" else "reject")
    assert isinstance(got[0]["line"], int) and got[0]["line"] > HEADER.count("\n")


ALLOWED = {
    "reading the environment": "import os\nv = os.environ.get('HOME')\nw = os.getenv('X')",
    "main guard": ("if __name__ == '__main__':\n    import threading\n"
                   "    print(Model, get_inputs())\n"
                   "    torch.cuda.synchronize = None"),
    "own Model class": ("class Model(nn.Module):\n    pass\n\ndef get_inputs():\n    return []\n\n"
                        "m = Model()\ninputs = get_inputs()"),
    "synchronize and events called": ("def timed(f):\n    e = torch.cuda.Event()\n"
                                      "    e.record()\n    torch.cuda.synchronize()\n    return e"),
    "setattr on own objects": "class C:\n    pass\nc = C()\nsetattr(c, 'v', 1)\nC.v = 2",
    "shadowed open": "def g(open):\n    return open('x')",
    "triton autotune": ("@triton.autotune(configs=[triton.Config({'B': 64})], key=['n'])\n"
                        "@triton.jit\ndef k2(x, n, B: tl.constexpr):\n    pass"),
    "jit ignore": "@torch.jit.ignore\ndef g():\n    pass",
    "grad mode": "torch.set_grad_enabled(False)",
    "nn.Parameter subclass use": "p = nn.Parameter(torch.ones(1))",
    "__name__ string": "NAME = '__main__'",
    "constant attrgetter": "import operator\nget_w = operator.attrgetter('weight')",
    "computed names on own objects": ("def f(obj, name):\n    return getattr(obj, name)\n"
                                      "class C:\n    def set(self, n, v):\n        setattr(self, n, v)\n"
                                      "dt = getattr(tl, 'float' + str(16))\nd = getattr(tl, input())"),
    "context manager": ("class Timer:\n    def __enter__(self):\n        return self\n"
                        "    def __exit__(self, *exc):\n        return False"),
    "plain classes": "class C(object):\n    pass\nD = type('D', (C,), {})",
}


@pytest.mark.parametrize("code", ALLOWED.values(), ids=ALLOWED.keys())
def test_allowed_file_level_patterns(code):
    assert screen(code)["findings"] == []


def test_severities_follow_the_policy_table():
    for policy in ("strict", "kernelbench"):
        assert rules("import threading", policy) == {("py.concurrency", "reject")}
        assert rules("s = torch.cuda.Stream()", policy) == {("py.extra_stream", "warn")}


def test_syntax_error_is_a_reject_with_its_line():
    result = screen_source("import torch\n\ndef f(:\n    pass\n", "triton", "strict")
    assert result["verdict"] == "reject"
    assert [(f["rule"], f["line"]) for f in result["findings"]] == [("py.syntax", 3)]
    assert screen_source("x = '\0'\0", "cuda", "kernelbench")["verdict"] == "reject"


def test_triton_candidate_needs_a_jit_function():
    src = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
           "    def forward(self, x):\n        return x\n")
    result = screen_source(src, "triton", "kernelbench")
    assert [f["rule"] for f in result["findings"]] == ["gen.no_kernel"]
    assert result["verdict"] == "reject"
    aliased = "from triton import jit\n\n@jit\ndef kern(x):\n    pass\n" + src
    assert screen_source(aliased, "triton", "strict")["findings"] == []


def test_result_shape():
    result = screen("")
    assert set(result) == {"verdict", "policy", "backend", "rules_version", "findings",
                           "notes", "seconds"}
    assert (result["verdict"], result["policy"], result["backend"], result["rules_version"]) == \
        ("pass", "strict", "triton", 1)
    with pytest.raises(ValueError):
        screen_source("", "opencl", "strict")
    with pytest.raises(ValueError):
        screen_source("", "cuda", "lenient")


def test_no_missing_model_new_crash():
    result = screen_source("import triton\n@triton.jit\ndef k():\n    pass\n", "triton", "strict")
    assert result["verdict"] == "pass" and result["notes"]


def test_raw_fd_writes_are_rejected():
    """A candidate forging a result frame on the verifier's channel (os.write to an fd)."""
    src = (
        "import os, struct, json\nimport torch.nn as nn\nimport triton\n"
        "@triton.jit\ndef k(x):\n    pass\n"
        "class ModelNew(nn.Module):\n"
        "    def forward(self, x):\n"
        "        os.write(3, b'x')\n"
        "        return x\n")
    from kz_worker.screen import screen_source
    result = screen_source(src, "triton", "strict")
    assert result["verdict"] == "reject"
    assert "py.raw_io" in {f["rule"] for f in result["findings"]}


def test_a_library_add_is_arithmetic_not_a_kept_input():
    # torch.add(base, x) was once read as a set's .add(x): py.global_cache on an honest forward.
    forward = ("CACHE = set()\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
               "        x = x.contiguous()\n        base = torch.empty_like(x)\n"
               "        k[(1,)](base, x.numel(), BLOCK=128)\n"
               "        y = torch.add(base, x, alpha=2.0)\n{extra}        return y\n")
    rules_of = lambda extra: {f["rule"] for f in screen_source(  # noqa: E731
        HEADER + forward.format(extra=extra), "triton", "kernelbench")["findings"]}
    assert rules_of("") == {"py.torch_compute"}
    assert "py.global_cache" in rules_of("        CACHE.add(x)\n")
