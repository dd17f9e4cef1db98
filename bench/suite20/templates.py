"""Code templates of bench/suite20's generations: a task spec (make_generations.TASKS) and a
label give one candidate's source, Triton (`TRITON[kind]`) or CUDA load_inline (`CUDA[kind]`).
Labels and what each means: make_generations.py's docstring."""

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
