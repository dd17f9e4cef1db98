"""Writes the generations of the 20-task suite (bench/suite20/suite) as kz bench JSONL.

    python3 bench/suite20/make_generations.py OUT.jsonl [--check]

10 scored samples per task (200), sample-major order (sample 0 of every task, then sample 1,
...) so that a run killed midway has every task partly verified. Every sample is made from
templates below; the mix per task is fixed (RECIPES) and its order shuffled with a seeded
RNG, so the file is the same byte for byte on every run.

Labels (what each sample is meant to be; the expected status on a GPU host / on a CPU host):

| label | what | GPU | CPU |
|---|---|---|---|
| ok, ok2 | correct Triton kernel (two configurations) | correct | correct |
| slow3 | correct Triton kernel launched 3 times per call (extra passes) | correct | correct |
| tiny | correct Triton kernel with tiny blocks | correct | correct |
| cuda | correct CUDA load_inline kernel | correct | not_run |
| wrong_scale | Triton kernel whose result is * 1.001 | incorrect | incorrect |
| wrong_bias | Triton kernel whose result is + 0.01 | incorrect | incorrect |
| cuda_wrong | CUDA kernel whose result is * 1.001 | incorrect | not_run |
| raise | forward raises RuntimeError after the kernel | runtime_error | runtime_error |
| badlaunch | kernel launched without one of its arguments (TypeError) | runtime_error | runtime_error |
| oob | Triton kernel storing 2**40 elements past its output (illegal address; SIGSEGV on the CPU) | runtime_error | runtime_error |
| syntax | Python syntax error | compile_error | compile_error |
| no_model_new | the class is named ModelFast | compile_error | compile_error |
| cuda_cerr | CUDA source that does not compile | compile_error | compile_error |
| torch_fallback | a Triton kernel is defined, but forward computes with PyTorch | rejected | rejected |
| empty | empty code: bad input empty_code, scored incorrect, no verdict | (incorrect) | (incorrect) |
| not_utf8 | code with a byte that is not UTF-8: bad input not_utf8, scored | (incorrect) | (incorrect) |

Besides the 200 scored lines the file has 3 lines that are not scored (bad inputs
unknown_task, duplicate_sample, malformed_line), so kz bench reports total 203, bad_input 5,
and writes 198 verdicts.

OUT.labels.json (beside OUT) maps "L1_1/0" to {"label", "expect_gpu", "expect_cpu"}.
--check: every generated candidate that is meant to parse parses (ast.parse), the syntax
samples do not, and, when torch imports, every task's Model runs on the CPU.
"""
import ast
import json
import pathlib
import random
import sys

HERE = pathlib.Path(__file__).resolve().parent
SUITE = HERE / "suite"

HEADER_TRITON = '''"""{doc}"""
import torch
import torch.nn as nn
import triton
import triton.language as tl
'''

HEADER_CUDA = '''"""{doc}"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
'''


def indent(lines, n):
    return "\n".join((" " * n + l) if l else "" for l in lines)


# ---------------------------------------------------------------------------------------
# Task specifications. kind: ew (elementwise over same-shape inputs), row (one program /
# block per row, output a row or one value per row), mm (matmul), tadd (x + y.T).
# scalars: (name, python type) constructor arguments, kept on self and passed to the kernel.
# ---------------------------------------------------------------------------------------
GELU_TL = "0.5 * {v} * (1.0 + tl.math.erf({v} * 0.7071067811865476))"
NORM_TL = [
    "mean = tl.sum(h, axis=0) / n_cols",
    "c = tl.where(mask, h - mean, 0.0)",
    "var = tl.sum(c * c, axis=0) / n_cols",
    "out = c / tl.sqrt(var + eps)",
]
NORM_CU = [
    "float s = 0.f;",
    "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += H(j);",
    "float mean = block_sum(s, sh) / n_cols;",
    "float q = 0.f;",
    "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) { float c = H(j) - mean; q += c * c; }",
    "float inv = 1.0f / sqrtf(block_sum(q, sh) / n_cols + eps);",
    "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) outr[j] = FIX((H(j) - mean) * inv);",
]

TASKS = {
    # ---- level 1 ----
    "L1_1": dict(kind="ew", name="relu", inputs=["x"], body=["out = tl.maximum(x, 0.0)"],
                 cu="float r = fmaxf(x[i], 0.0f);", torch="torch.relu(x)"),
    "L1_2": dict(kind="ew", name="gelu", inputs=["x"], body=["out = " + GELU_TL.format(v="x")],
                 cu="float v = x[i]; float r = 0.5f * v * (1.0f + erff(v * 0.70710678f));",
                 torch="0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))"),
    "L1_3": dict(kind="row", name="softmax", inputs=["x"], other="-float(\"inf\")", out="row",
                 body=["z = x - tl.max(x, axis=0)", "e = tl.exp(z)", "out = e / tl.sum(e, axis=0)"],
                 cu=["float m = -INFINITY;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) m = fmaxf(m, xr[j]);",
                     "m = block_max(m, sh);",
                     "float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += expf(xr[j] - m);",
                     "float inv = 1.0f / block_sum(s, sh);",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) outr[j] = FIX(expf(xr[j] - m) * inv);"]),
    "L1_4": dict(kind="row", name="row_sum", inputs=["x"], other="0.0", out="scalar",
                 body=["out = tl.sum(x, axis=0)"],
                 cu=["float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += xr[j];",
                     "s = block_sum(s, sh);",
                     "if (threadIdx.x == 0) out[row] = FIX(s);"]),
    "L1_5": dict(kind="ew", name="scale_add", inputs=["x", "y"], scalars=[("alpha", "float")],
                 body=["out = x * alpha + y"], cu="float r = x[i] * alpha + y[i];"),
    "L1_6": dict(kind="row", name="row_normalize", inputs=["x"], other="0.0", out="row",
                 scalars=[("eps", "float")], body=["h = x"] + NORM_TL,
                 cu=["#define H(j) xr[j]"] + NORM_CU + ["#undef H"]),
    "L1_7": dict(kind="mm", name="matmul", relu=False),
    "L1_8": dict(kind="tadd", name="transpose_add"),
    "L1_9": dict(kind="ew", name="sigmoid", inputs=["x"], body=["out = tl.sigmoid(x)"],
                 cu="float r = 1.0f / (1.0f + expf(-x[i]));", torch="torch.sigmoid(x)"),
    "L1_10": dict(kind="ew", name="tanh", inputs=["x"],
                  body=["e = tl.exp(-2.0 * tl.abs(x))", "t = (1.0 - e) / (1.0 + e)",
                        "out = tl.where(x >= 0, t, -t)"],
                  cu="float r = tanhf(x[i]);", torch="torch.tanh(x)"),
    "L1_11": dict(kind="ew", name="clamp", inputs=["x"], scalars=[("lo", "float"), ("hi", "float")],
                  body=["out = tl.minimum(tl.maximum(x, lo), hi)"],
                  cu="float r = fminf(fmaxf(x[i], lo), hi);", torch="torch.clamp(x, self.lo, self.hi)"),
    "L1_12": dict(kind="row", name="row_mean", inputs=["x"], other="0.0", out="scalar",
                  body=["out = tl.sum(x, axis=0) / n_cols"],
                  cu=["float s = 0.f;",
                      "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += xr[j];",
                      "s = block_sum(s, sh);",
                      "if (threadIdx.x == 0) out[row] = FIX(s / n_cols);"]),
    # ---- level 2 ----
    "L2_1": dict(kind="mm", name="matmul_relu", relu=True),
    "L2_2": dict(kind="ew", name="add_mul_relu", inputs=["x", "y", "z"],
                 body=["out = tl.maximum((x + y) * z, 0.0)"],
                 cu="float r = fmaxf((x[i] + y[i]) * z[i], 0.0f);", torch="torch.relu((x + y) * z)"),
    "L2_3": dict(kind="row", name="scaled_softmax", inputs=["x"], other="-float(\"inf\")", out="row",
                 scalars=[("scale", "float")],
                 body=["s = x * scale", "z = s - tl.max(s, axis=0)", "e = tl.exp(z)",
                       "out = e / tl.sum(e, axis=0)"],
                 cu=["float m = -INFINITY;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) m = fmaxf(m, xr[j] * scale);",
                     "m = block_max(m, sh);",
                     "float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += expf(xr[j] * scale - m);",
                     "float inv = 1.0f / block_sum(s, sh);",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) outr[j] = FIX(expf(xr[j] * scale - m) * inv);"]),
    "L2_4": dict(kind="ew", name="bias_gelu", inputs=["x"], bias=True,
                 body=["h = x + b", "out = " + GELU_TL.format(v="h")],
                 cu="float v = x[i] + bias[i % n_cols]; float r = 0.5f * v * (1.0f + erff(v * 0.70710678f));"),
    "L2_5": dict(kind="row", name="center_square", inputs=["x"], other="0.0", out="row",
                 body=["mean = tl.sum(x, axis=0) / n_cols", "c = x - mean", "out = c * c"],
                 cu=["float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += xr[j];",
                     "float mean = block_sum(s, sh) / n_cols;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) { float c = xr[j] - mean; outr[j] = FIX(c * c); }"]),
    "L2_6": dict(kind="ew", name="swish_scale", inputs=["x"], scalars=[("scale", "float")],
                 body=["out = x * tl.sigmoid(x) * scale"],
                 cu="float v = x[i]; float r = v / (1.0f + expf(-v)) * scale;",
                 torch="x * torch.sigmoid(x) * self.scale"),
    "L2_7": dict(kind="row", name="residual_normalize", inputs=["x", "y"], other="0.0", out="row",
                 scalars=[("eps", "float")], body=["h = x + y"] + NORM_TL,
                 cu=["#define H(j) (xr[j] + yr[j])"] + NORM_CU + ["#undef H"]),
    "L2_8": dict(kind="row", name="logsumexp_rows", inputs=["x"], other="-float(\"inf\")", out="scalar",
                 body=["m = tl.max(x, axis=0)", "out = m + tl.log(tl.sum(tl.exp(x - m), axis=0))"],
                 cu=["float m = -INFINITY;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) m = fmaxf(m, xr[j]);",
                     "m = block_max(m, sh);",
                     "float s = 0.f;",
                     "for (int j = threadIdx.x; j < n_cols; j += blockDim.x) s += expf(xr[j] - m);",
                     "s = block_sum(s, sh);",
                     "if (threadIdx.x == 0) out[row] = FIX(m + logf(s));"]),
}

# The 10 samples of each task (order shuffled per task below). Correct counts on a GPU:
# L1: 10 0 7 5 9 3 6 4 8 2 1 6; L2: 5 9 7 4 8 3 6 2 (on a CPU host the CUDA ones are not_run).
# CUDA: 25 samples, 22 distinct sources (17 correct, 3 of them used twice with the same bytes,
# 3 wrong, 2 that do not compile), at most 2 CUDA samples per task.
RECIPES = {
    "L1_1": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "ok2", "slow3", "tiny", "cuda"],
    "L1_2": ["wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax", "no_model_new",
             "torch_fallback", "cuda_wrong", "cuda_cerr", "wrong_scale"],
    "L1_3": ["ok", "ok2", "slow3", "ok", "cuda", "ok2", "slow3", "wrong_scale", "raise", "syntax"],
    "L1_4": ["empty", "ok", "ok2", "slow3", "cuda", "ok", "wrong_bias", "badlaunch", "no_model_new", "wrong_scale"],
    "L1_5": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "ok2", "tiny", "slow3", "wrong_scale"],
    "L1_6": ["ok", "slow3", "cuda", "wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax",
             "no_model_new", "cuda_cerr"],
    "L1_7": ["ok", "ok2", "tiny", "slow3", "cuda", "ok", "wrong_scale", "wrong_bias", "raise", "badlaunch"],
    "L1_8": ["ok", "ok2", "tiny", "cuda", "wrong_scale", "wrong_bias", "raise", "oob", "syntax", "no_model_new"],
    "L1_9": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "slow3", "ok2", "torch_fallback", "wrong_bias"],
    "L1_10": ["ok", "slow3", "wrong_scale", "wrong_bias", "raise", "badlaunch", "torch_fallback", "cuda_wrong",
              "syntax", "no_model_new"],
    "L1_11": ["tiny", "wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax", "no_model_new",
              "torch_fallback", "wrong_scale", "oob"],
    "L1_12": ["ok", "ok2", "slow3", "cuda", "ok", "ok2", "wrong_scale", "wrong_bias", "raise", "badlaunch"],
    "L2_1": ["ok", "ok2", "tiny", "cuda", "ok", "wrong_scale", "wrong_bias", "raise", "syntax", "no_model_new"],
    "L2_2": ["ok", "ok2", "slow3", "tiny", "cuda", "ok", "ok2", "slow3", "cuda", "torch_fallback"],
    "L2_3": ["ok", "ok2", "slow3", "cuda", "ok", "ok2", "slow3", "wrong_scale", "badlaunch", "raise"],
    "L2_4": ["ok", "ok2", "tiny", "cuda", "wrong_scale", "wrong_bias", "cuda_wrong", "raise", "syntax", "badlaunch"],
    "L2_5": ["ok", "ok2", "slow3", "cuda", "ok", "ok2", "slow3", "cuda", "wrong_bias", "no_model_new"],
    "L2_6": ["ok", "tiny", "cuda", "wrong_scale", "wrong_bias", "raise", "torch_fallback", "not_utf8",
             "badlaunch", "syntax"],
    "L2_7": ["ok", "ok2", "slow3", "cuda", "ok", "slow3", "wrong_scale", "raise", "badlaunch", "no_model_new"],
    "L2_8": ["ok", "cuda", "wrong_scale", "wrong_bias", "raise", "oob", "syntax", "no_model_new",
             "wrong_scale", "raise"],
}

EXPECT = {  # label -> (GPU status, CPU status)
    "ok": ("correct", "correct"), "ok2": ("correct", "correct"), "slow3": ("correct", "correct"),
    "tiny": ("correct", "correct"), "cuda": ("correct", "not_run"),
    "wrong_scale": ("incorrect", "incorrect"), "wrong_bias": ("incorrect", "incorrect"),
    "cuda_wrong": ("incorrect", "not_run"), "raise": ("runtime_error", "runtime_error"),
    "badlaunch": ("runtime_error", "runtime_error"), "oob": ("runtime_error", "runtime_error"),
    "syntax": ("compile_error", "compile_error"),
    "no_model_new": ("compile_error", "compile_error"), "cuda_cerr": ("compile_error", "compile_error"),
    "torch_fallback": ("rejected", "rejected"), "empty": ("bad_input", "bad_input"),
    "not_utf8": ("bad_input", "bad_input"),
}

# Configuration per label: BLOCK (ew) / num_warps (row) / tile sizes (mm, tadd), passes.
EW_CFG = {"ok": (1024, 4, 1), "ok2": (512, 4, 1), "slow3": (1024, 4, 3), "tiny": (64, 1, 1)}
ROW_CFG = {"ok": (4, 1), "ok2": (8, 1), "slow3": (4, 3), "tiny": (1, 1)}
MM_CFG = {"ok": ((64, 64, 32), 4, 1), "ok2": ((32, 64, 32), 4, 1), "slow3": ((64, 64, 32), 4, 3),
          "tiny": ((16, 16, 16), 1, 1)}
TADD_CFG = {"ok": ((32, 32), 4, 1), "ok2": ((64, 64), 8, 1), "slow3": ((32, 32), 4, 3), "tiny": ((8, 8), 1, 1)}


OOB = " + 1099511627776"  # 2**40 elements past the output: far outside any allocation


def ptr_off(label, offs):
    return f"({offs}).to(tl.int64){OOB}" if label == "oob" else offs


def store_expr(label):
    return {"wrong_scale": "out * 1.001", "wrong_bias": "out + 0.01"}.get(label, "out")


def ctor(spec):
    """(signature suffix, body lines) of ModelNew.__init__."""
    sig, body = "", ["super().__init__()"]
    for name, typ in spec.get("scalars", []):
        sig += f", {name}: {typ}"
        body.append(f"self.{name} = {name}")
    if spec.get("bias"):
        sig += ", features: int"
        body.append("self.bias = nn.Parameter(torch.zeros(features))")
    return sig, body


def launch_lines(head, pos, kw, passes, label):
    """The kernel launch in forward: head[grid](*pos, **kw), `passes` times. badlaunch drops
    the last positional argument (Triton raises TypeError at the launch)."""
    if label == "badlaunch":
        pos = pos[:-1]
    call = f"{head}({', '.join(pos)}, {kw})"
    if passes == 1:
        return [call]
    return [f"for _ in range({passes}):  # extra passes: the same result, written {passes} times",
            "    " + call]


def forward_tail(label):
    if label == "raise":
        return ["if out.dim() > 0:", '    raise RuntimeError("shape not supported by this kernel")', "return out"]
    return ["return out"]


def triton_ew(tid, spec, label):
    cfg = EW_CFG.get(label, EW_CFG["ok"])
    block, warps, passes = cfg
    k = spec["name"] + "_kernel"
    ins = spec["inputs"]
    params = [f"{v}_ptr" for v in ins] + (["bias_ptr"] if spec.get("bias") else []) + ["out_ptr", "n"]
    params += (["n_cols"] if spec.get("bias") else []) + [s for s, _ in spec.get("scalars", [])]
    loads = [f"{v} = tl.load({v}_ptr + offs, mask=mask)" for v in ins]
    if spec.get("bias"):
        loads.append("b = tl.load(bias_ptr + offs % n_cols, mask=mask)")
    kern = ["@triton.jit", f"def {k}({', '.join(params)}, BLOCK: tl.constexpr):",
            indent(["offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "mask = offs < n"] + loads
                   + spec["body"] + [f"tl.store(out_ptr + {ptr_off(label, 'offs')}, {store_expr(label)}, mask=mask)"], 4)]
    sig, init = ctor(spec)
    args = ", ".join(ins)
    fwd = [f"{v} = {v}.contiguous()" for v in ins] + ["out = torch.empty_like(x)", "n = out.numel()",
                                                       f"BLOCK = {block}", "grid = (triton.cdiv(n, BLOCK),)"]
    call_args = ins + (["self.bias"] if spec.get("bias") else []) + ["out", "n"]
    call_args += (["x.shape[-1]"] if spec.get("bias") else []) + [f"self.{s}" for s, _ in spec.get("scalars", [])]
    if label == "torch_fallback":
        fwd = [f"return {spec['torch']}  # the kernel above is never launched"]
    else:
        fwd += launch_lines(f"{k}[grid]", call_args, f"BLOCK=BLOCK, num_warps={warps}", passes, label)
        fwd += forward_tail(label)
    doc = f"{tid} {spec['name']}: Triton, {label} (BLOCK {block}, {passes} pass(es))."
    return module(HEADER_TRITON.format(doc=doc), kern, sig, init, args, fwd)


def triton_row(tid, spec, label):
    warps, passes = ROW_CFG.get(label, ROW_CFG["ok"])
    k = spec["name"] + "_kernel"
    ins = spec["inputs"]
    scal = [s for s, _ in spec.get("scalars", [])]
    params = [f"{v}_ptr" for v in ins] + ["out_ptr", "n_cols"] + scal
    loads = [f"{v} = tl.load({v}_ptr + row * n_cols + cols, mask=mask, other={spec['other']})" for v in ins]
    st = (f"tl.store(out_ptr + {ptr_off(label, 'row * n_cols + cols')}, {store_expr(label)}, mask=mask)"
          if spec["out"] == "row" else f"tl.store(out_ptr + {ptr_off(label, 'row')}, {store_expr(label)})")
    kern = ["@triton.jit", f"def {k}({', '.join(params)}, BLOCK: tl.constexpr):",
            indent(["row = tl.program_id(0)", "cols = tl.arange(0, BLOCK)", "mask = cols < n_cols"] + loads
                   + spec["body"] + [st], 4)]
    sig, init = ctor(spec)
    fwd = [f"{v} = {v}.contiguous()" for v in ins] + ["n_rows, n_cols = x.shape"]
    fwd.append("out = torch.empty_like(x)" if spec["out"] == "row" else "out = x.new_empty((n_rows,))")
    fwd.append("BLOCK = triton.next_power_of_2(n_cols)")
    fwd += launch_lines(f"{k}[(n_rows,)]", ins + ["out", "n_cols"] + ["self." + s for s in scal],
                        f"BLOCK=BLOCK, num_warps={warps}", passes, label) + forward_tail(label)
    doc = f"{tid} {spec['name']}: Triton, one program per row, {label} (num_warps {warps}, {passes} pass(es))."
    return module(HEADER_TRITON.format(doc=doc), kern, sig, init, ", ".join(ins), fwd)


def triton_mm(tid, spec, label):
    (bm, bn, bk), warps, passes = MM_CFG.get(label, MM_CFG["ok"])
    k = spec["name"] + "_kernel"
    epi = "out = tl.maximum(acc, 0.0)" if spec["relu"] else "out = acc"
    kern = ["@triton.jit",
            f"def {k}(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,",
            "        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):",
            indent(["offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)",
                    "offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)",
                    "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
                    "for k0 in range(0, K, BLOCK_K):",
                    "    offs_k = k0 + tl.arange(0, BLOCK_K)",
                    "    a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :],",
                    "                mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)",
                    "    b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :],",
                    "                mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)",
                    "    acc += tl.dot(a, b, input_precision=\"ieee\")  # exact fp32, no TF32",
                    epi,
                    f"tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], {store_expr(label)},",
                    "         mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))"], 4)]
    fwd = ["a = a.contiguous()", "b = b.contiguous()", "M, K = a.shape", "N = b.shape[1]",
           "out = a.new_empty((M, N))", f"grid = (triton.cdiv(M, {bm}), triton.cdiv(N, {bn}))"]
    fwd += launch_lines(f"{k}[grid]", ["a", "b", "out", "M", "N", "K", "a.stride(0)", "b.stride(0)", "out.stride(0)"],
                        f"BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk}, num_warps={warps}", passes, label)
    fwd += forward_tail(label)
    doc = f"{tid} {spec['name']}: Triton tiled matmul, {label} (tiles {bm}x{bn}x{bk}, {passes} pass(es))."
    return module(HEADER_TRITON.format(doc=doc), kern, "", ["super().__init__()"], "a, b", fwd)


def triton_tadd(tid, spec, label):
    (bm, bn), warps, passes = TADD_CFG.get(label, TADD_CFG["ok"])
    k = spec["name"] + "_kernel"
    kern = ["@triton.jit",
            f"def {k}(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):",
            indent(["offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)",
                    "offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)",
                    "mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
                    "x = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)",
                    "yt = tl.load(y_ptr + offs_n[None, :] * M + offs_m[:, None], mask=mask)  # y[j, i]",
                    "out = x + yt",
                    f"tl.store(out_ptr + {ptr_off(label, 'offs_m[:, None] * N + offs_n[None, :]')}, "
                    f"{store_expr(label)}, mask=mask)"], 4)]
    fwd = ["x = x.contiguous()", "y = y.contiguous()", "M, N = x.shape", "out = torch.empty_like(x)",
           f"grid = (triton.cdiv(M, {bm}), triton.cdiv(N, {bn}))"]
    fwd += launch_lines(f"{k}[grid]", ["x", "y", "out", "M", "N"],
                        f"BLOCK_M={bm}, BLOCK_N={bn}, num_warps={warps}", passes, label)
    fwd += forward_tail(label)
    doc = f"{tid} {spec['name']}: Triton 2-D tiles, {label} (tiles {bm}x{bn}, {passes} pass(es))."
    return module(HEADER_TRITON.format(doc=doc), kern, "", ["super().__init__()"], "x, y", fwd)


def module(header, kernel_lines, sig, init, args, fwd, cls="ModelNew"):
    return "\n".join([header, "", *kernel_lines, "", "",
                      f"class {cls}(nn.Module):",
                      f"    def __init__(self{sig}):",
                      indent(init, 8), "",
                      f"    def forward(self, {args}):",
                      indent(fwd, 8), ""])


# ------------------------------------ CUDA ------------------------------------------------
CU_INCLUDES = ["#include <torch/extension.h>", "#include <c10/cuda/CUDAStream.h>",
               "#include <c10/cuda/CUDAException.h>", "#include <math.h>", ""]
CU_REDUCE = r"""// Block-wide reductions (blockDim.x a multiple of 32, at most 1024); sh holds 33 floats.
__device__ float block_sum(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        if (threadIdx.x == 0) sh[32] = v;
    }
    __syncthreads();
    return sh[32];
}

__device__ float block_max(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : -INFINITY;
        for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
        if (threadIdx.x == 0) sh[32] = v;
    }
    __syncthreads();
    return sh[32];
}
"""
CHECK = 'TORCH_CHECK({v}.is_cuda() && {v}.scalar_type() == torch::kFloat32, "expected float32 CUDA tensors");'


def cuda_fix(label):
    return "(v) * 1.001f" if label == "cuda_wrong" else "(v)"


def cuda_module(tid, spec, label, kernel_src, fn_sig, host_body, call_args, init_sig, init):
    fn = spec["name"] + "_cuda"
    ext_name = f"kz_s20_{tid.lower()}_{label}"
    src = "\n".join(CU_INCLUDES + [f"#define FIX(v) {cuda_fix(label)}", "", kernel_src.strip(), "",
                                   f"torch::Tensor {fn}({fn_sig}) {{", indent(host_body, 4), "}"])
    doc = f"{tid} {spec['name']}: CUDA load_inline, {label}."
    lines = [HEADER_CUDA.format(doc=doc), 'cuda_source = r"""', src, '"""', "",
             f'cpp_source = "torch::Tensor {fn}({fn_sig});"', "",
             f"{spec['name']}_ext = load_inline(", f'    name="{ext_name}",', "    cpp_sources=cpp_source,",
             "    cuda_sources=cuda_source,", f'    functions=["{fn}"],', "    verbose=False,", ")", "", "",
             "class ModelNew(nn.Module):", f"    def __init__(self{init_sig}):", indent(init, 8), "",
             f"    def forward(self, {', '.join(a for a in call_args if not a.startswith('self.'))}):",
             f"        return {spec['name']}_ext.{fn}({', '.join(call_args)})", ""]
    return "\n".join(lines)


def cuda_ew(tid, spec, label):
    ins = spec["inputs"]
    scal = [s for s, _ in spec.get("scalars", [])]
    kp = [f"const float* __restrict__ {v}" for v in ins]
    if spec.get("bias"):
        kp.append("const float* __restrict__ bias")
    kp += ["float* __restrict__ out", "int64_t n"] + (["int64_t n_cols"] if spec.get("bias") else [])
    kp += [f"float {s}" for s in scal]
    k = spec["name"] + "_kernel"
    kernel = "\n".join([f"__global__ void {k}({', '.join(kp)}) {{",
                        "    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;",
                        "    if (i < n) {", f"        {spec['cu']}", "        out[i] = FIX(r);", "    }", "}"])
    tensors = ins + (["bias"] if spec.get("bias") else [])
    fn_sig = ", ".join([f"torch::Tensor {v}" for v in tensors] + [f"double {s}" for s in scal])
    host = [CHECK.format(v=v) for v in tensors] + [f"{v} = {v}.contiguous();" for v in tensors]
    host += ["auto out = torch::empty_like(x);", "int64_t n = x.numel();"]
    if label == "cuda_cerr":
        host.append("int* wrong = out.data_ptr<float>();  // does not compile: float* to int*")
    kargs = [f"{v}.data_ptr<float>()" for v in tensors] + ["out.data_ptr<float>()", "n"]
    kargs += (["x.size(-1)"] if spec.get("bias") else []) + [f"(float){s}" for s in scal]
    host += ["const int threads = 256;", "const int blocks = (int)((n + threads - 1) / threads);",
             f"{k}<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(",
             f"    {', '.join(kargs)});", "C10_CUDA_KERNEL_LAUNCH_CHECK();", "return out;"]
    sig, init = ctor(spec)
    call = ins + (["self.bias"] if spec.get("bias") else []) + [f"self.{s}" for s in scal]
    return cuda_module(tid, spec, label, kernel, fn_sig, host, call, sig, init)


def cuda_row(tid, spec, label):
    ins = spec["inputs"]
    scal = [s for s, _ in spec.get("scalars", [])]
    k = spec["name"] + "_kernel"
    kp = [f"const float* __restrict__ {v}" for v in ins] + ["float* __restrict__ out", "int n_cols"]
    kp += [f"float {s}" for s in scal]
    rows = [f"const float* {v}r = {v} + (int64_t)row * n_cols;" for v in ins]
    if spec["out"] == "row":
        rows.append("float* outr = out + (int64_t)row * n_cols;")
    kernel = "\n".join([CU_REDUCE, f"__global__ void {k}({', '.join(kp)}) {{",
                        "    __shared__ float sh[33];", "    int row = blockIdx.x;", indent(rows, 4),
                        indent(spec["cu"], 4), "}"])
    fn_sig = ", ".join([f"torch::Tensor {v}" for v in ins] + [f"double {s}" for s in scal])
    host = [CHECK.format(v=v) for v in ins] + [f"{v} = {v}.contiguous();" for v in ins]
    host += ["int64_t n_rows = x.size(0);", "int n_cols = (int)x.size(1);"]
    host.append("auto out = torch::empty_like(x);" if spec["out"] == "row" else
                "auto out = torch::empty({n_rows}, x.options());")
    if label == "cuda_cerr":
        host.append("int* wrong = out.data_ptr<float>();  // does not compile: float* to int*")
    kargs = [f"{v}.data_ptr<float>()" for v in ins] + ["out.data_ptr<float>()", "n_cols"] + [f"(float){s}" for s in scal]
    host += [f"{k}<<<(unsigned)n_rows, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(",
             f"    {', '.join(kargs)});", "C10_CUDA_KERNEL_LAUNCH_CHECK();", "return out;"]
    sig, init = ctor(spec)
    return cuda_module(tid, spec, label, kernel, fn_sig, host, ins + [f"self.{s}" for s in scal], sig, init)


def cuda_mm(tid, spec, label):
    k = spec["name"] + "_kernel"
    epi = "fmaxf(acc, 0.0f)" if spec["relu"] else "acc"
    kernel = f"""
#define TILE 16
__global__ void {k}(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                    int M, int N, int K) {{
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {{
        as[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? a[(int64_t)row * K + k0 + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (col < N && k0 + threadIdx.y < K) ? b[(int64_t)(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; ++kk) acc += as[threadIdx.y][kk] * bs[kk][threadIdx.x];
        __syncthreads();
    }}
    if (row < M && col < N) c[(int64_t)row * N + col] = FIX({epi});
}}"""
    host = [CHECK.format(v="a"), CHECK.format(v="b"), "a = a.contiguous();", "b = b.contiguous();",
            "int M = (int)a.size(0), K = (int)a.size(1), N = (int)b.size(1);",
            "auto c = torch::empty({M, N}, a.options());", "dim3 threads(TILE, TILE);",
            "dim3 blocks((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);",
            f"{k}<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(",
            "    a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, N, K);",
            "C10_CUDA_KERNEL_LAUNCH_CHECK();", "return c;"]
    return cuda_module(tid, spec, label, kernel, "torch::Tensor a, torch::Tensor b", host, ["a", "b"], "",
                       ["super().__init__()"])


def cuda_tadd(tid, spec, label):
    k = spec["name"] + "_kernel"
    kernel = f"""
__global__ void {k}(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                    int M, int N) {{
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < M && j < N) out[(int64_t)i * N + j] = FIX(x[(int64_t)i * N + j] + y[(int64_t)j * M + i]);
}}"""
    host = [CHECK.format(v="x"), CHECK.format(v="y"), "x = x.contiguous();", "y = y.contiguous();",
            "int M = (int)x.size(0), N = (int)x.size(1);", "auto out = torch::empty_like(x);",
            "dim3 threads(32, 8);", "dim3 blocks((N + 31) / 32, (M + 7) / 8);",
            f"{k}<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(",
            "    x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), M, N);",
            "C10_CUDA_KERNEL_LAUNCH_CHECK();", "return out;"]
    return cuda_module(tid, spec, label, kernel, "torch::Tensor x, torch::Tensor y", host, ["x", "y"], "",
                       ["super().__init__()"])


TRITON = {"ew": triton_ew, "row": triton_row, "mm": triton_mm, "tadd": triton_tadd}
CUDA = {"ew": cuda_ew, "row": cuda_row, "mm": cuda_mm, "tadd": cuda_tadd}


def candidate(tid, label):
    """(code, backend) of one sample; backend None leaves detection to kz."""
    spec = TASKS[tid]
    if label in ("cuda", "cuda_wrong", "cuda_cerr"):
        return CUDA[spec["kind"]](tid, spec, label), "cuda"
    if label == "empty":
        return "   \n", "triton"
    base = "ok" if label in ("wrong_scale", "wrong_bias", "raise", "badlaunch", "syntax", "no_model_new",
                             "torch_fallback", "not_utf8") else label
    code = TRITON[spec["kind"]](tid, spec, label if label not in ("syntax", "no_model_new", "not_utf8") else base)
    if label == "syntax":  # an unclosed call in forward
        code = code.replace("out = torch.empty_like(", "out = torch.empty_like((", 1) \
            .replace("out = x.new_empty(", "out = x.new_empty((", 1).replace("out = a.new_empty(", "out = a.new_empty((", 1)
    elif label == "no_model_new":
        code = code.replace("class ModelNew(", "class ModelFast(")
    return code, ("triton" if label not in ("syntax",) else None)


NOT_UTF8_MARK = "@@NOT_UTF8@@"


def generate():
    """([(task, sample, code, backend, tokens, label)], extra_lines) in file order."""
    per_task = {}
    for tid, labels in RECIPES.items():
        assert len(labels) == 10, tid
        order = list(labels)
        rng = random.Random("suite20:" + tid)
        if tid not in ("L1_4",):  # L1_4 keeps its empty code at sample 0 (fast_p over sample 0)
            rng.shuffle(order)
        rows = []
        for s, label in enumerate(order):
            code, backend = candidate(tid, label)
            if label == "not_utf8":
                code = "# " + NOT_UTF8_MARK + "\n" + code
            tokens = rng.randrange(300, 4000)
            if (tid, s) in (("L1_9", 3), ("L2_2", 6)):
                tokens = None  # the model did not report tokens for these two
            rows.append((tid, s, code, backend, tokens, label))
        per_task[tid] = rows
    out = []
    for s in range(10):
        for tid in RECIPES:
            out.append(per_task[tid][s])
    return out


def task_field(tid, i):
    if i % 7 == 3:  # some lines use the {"level", "problem"} form
        level, problem = tid[1:].split("_")
        return {"level": int(level), "problem": int(problem)}
    return tid


def write(path):
    rows = generate()
    lines, labels = [], {}
    for i, (tid, s, code, backend, tokens, label) in enumerate(rows):
        obj = {"task": task_field(tid, i), "sample": s, "code": code}
        if tokens is not None:
            obj["output_tokens"] = tokens
        if backend:
            obj["backend"] = backend
        line = json.dumps(obj).encode()
        if label == "not_utf8":
            line = line.replace(NOT_UTF8_MARK.encode(), b"caf\xe9 \xff")
        lines.append(line)
        g, c = EXPECT[label]
        labels[f"{tid}/{s}"] = {"label": label, "expect_gpu": g, "expect_cpu": c}
        if i == 57:  # unscored: a task that is not in the suite
            lines.append(json.dumps({"task": "L3_1", "sample": 0, "code": code, "output_tokens": 100}).encode())
        if i == 101:  # unscored: a second L1_1 sample 0 (the first is kept)
            lines.append(json.dumps({"task": "L1_1", "sample": 0, "code": candidate("L1_1", "wrong_scale")[0],
                                     "output_tokens": 50}).encode())
        if i == 150:  # unscored: a torn JSON line
            lines.append(b'{"task": "L2_1", "sample": 3, "code": "import torch')
    path = pathlib.Path(path)
    path.write_bytes(b"\n".join(lines) + b"\n")
    lpath = path.with_name(path.name.rsplit(".", 1)[0] + ".labels.json")
    lpath.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    return rows, labels, lpath


def summary(rows):
    by = {}
    for tid, s, code, backend, tokens, label in rows:
        by.setdefault(tid, []).append(label)
    print(f"{'task':6} {'c_gpu':>5} {'c_cpu':>5}  labels (sample order)")
    cuda_sources = set()
    for tid, labels in by.items():
        cg = sum(EXPECT[l][0] == "correct" for l in labels)
        cc = sum(EXPECT[l][1] == "correct" for l in labels)
        print(f"{tid:6} {cg:5} {cc:5}  {' '.join(labels)}")
    for tid, s, code, backend, tokens, label in rows:
        if backend == "cuda":
            cuda_sources.add(code)
    print(f"{len(rows)} scored samples; {len(cuda_sources)} distinct CUDA sources")


def check(rows):
    bad = 0
    for tid, s, code, backend, tokens, label in rows:
        if label in ("empty",):
            continue
        try:
            ast.parse(code)
            parsed = True
        except SyntaxError:
            parsed = False
        if parsed != (label != "syntax"):
            print(f"check: {tid}/{s} ({label}) parses={parsed}")
            bad += 1
    try:
        import torch  # noqa: F401
    except ImportError:
        print("check: torch not importable: tasks not run")
        return bad
    import importlib.util
    for f in sorted(SUITE.glob("level*/*.py")):
        spec = importlib.util.spec_from_file_location("t_" + f.stem, f)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        model = m.Model(*m.get_init_inputs())
        out = model(*m.get_inputs())
        mib = sum(t.numel() * t.element_size() for t in m.get_inputs()) / 2**20
        print(f"check: task {f.parent.name}/{f.name}: output {tuple(out.shape)}, inputs {mib:.1f} MiB")
    return bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    rows, labels, lpath = write(args[0])
    summary(rows)
    print(f"wrote {args[0]} and {lpath}")
    if "--check" in sys.argv and check(rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
