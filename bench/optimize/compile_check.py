"""Compile every candidate's Triton kernels for sm_90 (H100/H200) on a machine WITHOUT a GPU.

The CPU verifier runs Triton under the interpreter, which never compiles a kernel: a kernel
that the interpreter accepts can still fail to compile on the GPU. This script imports each
task and candidate, runs ModelNew.forward on CPU tensors of the task's sizes with every
`kernel[grid](...)` launch intercepted (recorded, not run), and compiles each recorded launch
with triton.compile for GPUTarget("cuda", 90, 32), the way the launcher would specialise it
(pointers and integers divisible by 16 marked so). It prints, per kernel, the global
load/store instructions of the PTX (their vector width: .v2/.v4) and any local-memory
(spill) accesses.

Usage (from the repository root, with the project's venv):
  .venv/bin/python bench/optimize/compile_check.py [TASK ...]      # default: all five tasks
Set KZ_DEMO_SMALL=1 to check the small sizes instead of the GPU sizes (the BLOCK sizes of the
row kernels depend on the row length). Exit 1 if a kernel fails to compile.
"""
import collections
import importlib.util
import os
import re
import sys

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.runtime.jit import JITFunction

HERE = os.path.dirname(os.path.abspath(__file__))
TASKS = ("relu", "scale_shift", "softmax", "row_sum", "gelu_tanh")
TARGET = GPUTarget("cuda", 90, 32)
DTYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
          torch.int64: "i64", torch.int32: "i32"}
MEMOPS = re.compile(r"\b(ld\.global[.\w:]*|st\.global[.\w:]*|ld\.local[.\w]*|st\.local[.\w]*)")
launches = []


class _Recorder:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        launches.append((self.fn, args, kwargs))


def _type(value):
    if isinstance(value, torch.Tensor):
        return "*" + DTYPES[value.dtype]
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -2**31 <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"cannot type a kernel argument of {type(value).__name__}")


def compile_launch(fn, args, kwargs):
    kwargs = dict(kwargs)
    options = {k: kwargs.pop(k) for k in ("num_warps", "num_stages") if k in kwargs}
    values = dict(zip(fn.arg_names, args))
    values.update(kwargs)
    signature, constexprs, attrs = {}, {}, {}
    for i, name in enumerate(fn.arg_names):
        value = values[name]
        if fn.params[i].is_constexpr:
            signature[name] = "constexpr"
            constexprs[(i,)] = value
            continue
        signature[name] = _type(value)
        aligned = isinstance(value, torch.Tensor) or (
            isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0)
        if aligned:
            attrs[(i,)] = [["tt.divisibility", 16]]
    kernel = triton.compile(ASTSource(fn, signature, constexprs=constexprs, attrs=attrs),
                            target=TARGET, options=options)
    ops = collections.Counter(MEMOPS.findall(kernel.asm["ptx"]))
    return kernel.metadata.num_warps, ops


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    JITFunction.__getitem__ = lambda self, grid: _Recorder(self)
    failed = 0
    for task_name in sys.argv[1:] or TASKS:
        task = _load(os.path.join(HERE, "tasks", task_name + ".py"), "task_" + task_name)
        folder = os.path.join(HERE, "candidates", task_name)
        for file in sorted(os.listdir(folder)):
            if not file.endswith(".py"):
                continue
            launches.clear()
            where = f"{task_name}/{file}"
            try:
                cand = _load(os.path.join(folder, file), "cand_" + task_name + "_" + file[:-3])
                torch.manual_seed(0)
                cand.ModelNew(*task.get_init_inputs()).forward(*task.get_inputs())
                for fn, args, kwargs in launches:
                    warps, ops = compile_launch(fn, args, kwargs)
                    spills = sum(n for op, n in ops.items() if ".local" in op)
                    mem = ", ".join(f"{op} x{n}" for op, n in sorted(ops.items()))
                    print(f"ok    {where}: {fn.__name__} num_warps={warps}"
                          f"{' SPILLS' if spills else ''}: {mem}")
                if not launches:
                    print(f"note  {where}: no Triton launch recorded")
            except Exception as e:  # report and go on to the next candidate
                failed += 1
                print(f"FAIL  {where}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
