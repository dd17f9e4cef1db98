"""Writes distinct KernelBench-style CUDA samples (tasks + load_inline candidates) for the
compile benchmark: elementwise, binary, reductions, softmax, layernorm, tiled matmul and
transpose kernels, with varied block sizes and source sizes, so no two share a cache key.

Usage: python make_samples.py OUT_DIR [--count 35]
Writes OUT_DIR/tasks/*.py, OUT_DIR/candidates/*.py and OUT_DIR/manifest.jsonl.
"""
import json
import os
import sys

UNARY = [  # (name, torch reference expression of x, CUDA expression of v)
    ("relu", "torch.relu(x)", "fmaxf(v, 0.f)"),
    ("leaky", "torch.nn.functional.leaky_relu(x, 0.05)", "v > 0.f ? v : 0.05f * v"),
    ("sigmoid", "torch.sigmoid(x)", "1.f / (1.f + expf(-v))"),
    ("tanh", "torch.tanh(x)", "tanhf(v)"),
    ("softplus", "torch.nn.functional.softplus(x)", "v > 20.f ? v : log1pf(expf(v))"),
    ("elu", "torch.nn.functional.elu(x)", "v > 0.f ? v : expm1f(v)"),
    ("swish", "x * torch.sigmoid(x)", "v / (1.f + expf(-v))"),
    ("square", "x * x", "v * v"),
    ("abs", "torch.abs(x)", "fabsf(v)"),
    ("hardtanh", "torch.clamp(x, -1.0, 1.0)", "fminf(fmaxf(v, -1.f), 1.f)"),
    ("cube", "x * x * x", "v * v * v"),
    ("exp", "torch.exp(x)", "expf(v)"),
]
BLOCKS = [128, 256]

ELEMENTWISE = r'''
#include <torch/extension.h>
__global__ void {name}_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {{
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {{ float v = x[i]; y[i] = {expr}; }}
}}
torch::Tensor run(torch::Tensor x) {{
  TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "x must be a contiguous CUDA tensor");
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  {name}_kernel<<<(n + {bs} - 1) / {bs}, {bs}>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}}
'''

ROWWISE = {
    "rowsum": ("torch.sum(x, dim=1, keepdim=True)", "acc += v;", "acc", "0.f", "1"),
    "rowmax": ("torch.amax(x, dim=1, keepdim=True)", "acc = fmaxf(acc, v);", "acc", "-INFINITY", "1"),
    "rowmean": ("torch.mean(x, dim=1, keepdim=True)", "acc += v;", "acc / cols", "0.f", "1"),
}
REDUCE = r'''
#include <torch/extension.h>
template <int BS>
__global__ void {name}_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {{
  __shared__ float buf[BS];
  const float* row = x + (int64_t)blockIdx.x * cols;
  float acc = {init};
  for (int c = threadIdx.x; c < cols; c += BS) {{ float v = row[c]; {step} }}
  buf[threadIdx.x] = acc;
  __syncthreads();
  for (int s = BS / 2; s > 0; s >>= 1) {{
    if (threadIdx.x < s) {{ float v = buf[threadIdx.x + s]; acc = buf[threadIdx.x]; {step} buf[threadIdx.x] = acc; }}
    __syncthreads();
  }}
  if (threadIdx.x == 0) {{ acc = buf[0]; y[blockIdx.x] = {final}; }}
}}
torch::Tensor run(torch::Tensor x) {{
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x must be 2-D contiguous CUDA");
  auto y = torch::empty({{x.size(0), {out_cols}}}, x.options());
  {name}_kernel<{bs}><<<x.size(0), {bs}>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.size(1));
  return y;
}}
'''

SOFTMAX = r'''
#include <torch/extension.h>
template <int BS>
__global__ void {name}_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {{
  __shared__ float red[BS];
  const float* row = x + (int64_t)blockIdx.x * cols;
  float* out = y + (int64_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += BS) m = fmaxf(m, row[c]);
  red[threadIdx.x] = m; __syncthreads();
  for (int s = BS / 2; s > 0; s >>= 1) {{ if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]); __syncthreads(); }}
  m = red[0]; __syncthreads();
  float sum = 0.f;
  for (int c = threadIdx.x; c < cols; c += BS) sum += expf(row[c] - m);
  red[threadIdx.x] = sum; __syncthreads();
  for (int s = BS / 2; s > 0; s >>= 1) {{ if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s]; __syncthreads(); }}
  float inv = 1.f / red[0];
  for (int c = threadIdx.x; c < cols; c += BS) out[c] = expf(row[c] - m) * inv;
}}
torch::Tensor run(torch::Tensor x) {{
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x must be 2-D contiguous CUDA");
  auto y = torch::empty_like(x);
  {name}_kernel<{bs}><<<x.size(0), {bs}>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.size(1));
  return y;
}}
'''

LAYERNORM = r'''
#include <torch/extension.h>
__global__ void {name}_kernel(const float* __restrict__ x, float* __restrict__ y, int cols, float eps) {{
  __shared__ float s1[{bs}], s2[{bs}];
  const float* row = x + (int64_t)blockIdx.x * cols;
  float a = 0.f, b = 0.f;
  for (int c = threadIdx.x; c < cols; c += {bs}) {{ float v = row[c]; a += v; b += v * v; }}
  s1[threadIdx.x] = a; s2[threadIdx.x] = b; __syncthreads();
  for (int s = {bs} / 2; s > 0; s >>= 1) {{
    if (threadIdx.x < s) {{ s1[threadIdx.x] += s1[threadIdx.x + s]; s2[threadIdx.x] += s2[threadIdx.x + s]; }}
    __syncthreads();
  }}
  float mean = s1[0] / cols, var = fmaxf(s2[0] / cols - mean * mean, 0.f), inv = rsqrtf(var + eps);
  for (int c = threadIdx.x; c < cols; c += {bs}) y[(int64_t)blockIdx.x * cols + c] = (row[c] - mean) * inv;
}}
torch::Tensor run(torch::Tensor x) {{
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x must be 2-D contiguous CUDA");
  auto y = torch::empty_like(x);
  {name}_kernel<<<x.size(0), {bs}>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.size(1), 1e-5f);
  return y;
}}
'''

MATMUL = r'''
#include <torch/extension.h>
template <int T>
__global__ void {name}_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int M, int N, int K) {{
  __shared__ float as[T][T], bs[T][T + 1];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += T) {{
    as[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? a[(int64_t)row * K + k0 + threadIdx.x] : 0.f;
    bs[threadIdx.y][threadIdx.x] = (col < N && k0 + threadIdx.y < K) ? b[(int64_t)(k0 + threadIdx.y) * N + col] : 0.f;
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(as[threadIdx.y][k], bs[k][threadIdx.x], acc);
    __syncthreads();
  }}
  if (row < M && col < N) c[(int64_t)row * N + col] = acc;
}}
torch::Tensor run(torch::Tensor a, torch::Tensor b) {{
  TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.is_contiguous() && b.is_contiguous(), "inputs");
  int M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({{M, N}}, a.options());
  dim3 block({bs}, {bs}), grid((N + {bs} - 1) / {bs}, (M + {bs} - 1) / {bs});
  {name}_kernel<{bs}><<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
  return c;
}}
'''

TRANSPOSE = r'''
#include <torch/extension.h>
__global__ void {name}_kernel(const float* __restrict__ x, float* __restrict__ y, int R, int C) {{
  __shared__ float tile[32][33];
  int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) if (r + j < R && c < C) tile[threadIdx.y + j][threadIdx.x] = x[(int64_t)(r + j) * C + c];
  __syncthreads();
  c = blockIdx.y * 32 + threadIdx.x; r = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) if (r + j < C && c < R) y[(int64_t)(r + j) * R + c] = tile[threadIdx.x][threadIdx.y + j];
}}
torch::Tensor run(torch::Tensor x) {{
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x must be 2-D contiguous CUDA");
  int R = x.size(0), C = x.size(1);
  auto y = torch::empty({{C, R}}, x.options());
  {name}_kernel<<<dim3((C + 31) / 32, (R + 31) / 32), dim3(32, 8)>>>(x.data_ptr<float>(), y.data_ptr<float>(), R, C);
  return y;
}}
'''

TASK = '''"""Compile-bench task {name}: {ref}."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        return {ref}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
'''

CANDIDATE = '''"""Compile-bench candidate {name} (generated by bench/compile/make_samples.py)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""{src}"""

module = load_inline(name="kzbench_{name}", cpp_sources="{decl}", cuda_sources=cuda_source,
                     functions=["run"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        return module.run({call})
'''


def samples():
    """Yields (name, task_ref, args, inputs, cuda_src, decl)."""
    one, x2d = "torch::Tensor run(torch::Tensor x);", "torch.randn(1024, 1024)"
    for op, ref, expr in UNARY:
        for bs in BLOCKS:
            name = f"{op}_b{bs}"
            yield name, ref, "x", "torch.randn(4096, 1024)", ELEMENTWISE.format(name=name, expr=expr, bs=bs), one
    for op, (ref, step, final, init, oc) in ROWWISE.items():
        for bs in BLOCKS:
            name = f"{op}_b{bs}"
            src = REDUCE.format(name=name, step=step, final=final, init=init, out_cols=oc, bs=bs)
            yield name, ref, "x", x2d, src, one
    for bs in BLOCKS:
        yield f"softmax_b{bs}", "torch.softmax(x, dim=1)", "x", x2d, SOFTMAX.format(name=f"softmax_b{bs}", bs=bs), one
    for t in (16, 32):
        yield (f"matmul_t{t}", "a @ b", "a, b", "torch.randn(512, 256), torch.randn(256, 384)",
               MATMUL.format(name=f"matmul_t{t}", bs=t), "torch::Tensor run(torch::Tensor a, torch::Tensor b);")
    yield "transpose", "x.t().contiguous()", "x", "torch.randn(1000, 700)", TRANSPOSE.format(name="transpose"), one
    yield ("layernorm", "torch.nn.functional.layer_norm(x, (x.shape[1],))", "x", x2d,
           LAYERNORM.format(name="layernorm", bs=256), one)


def main():
    out = sys.argv[1]
    count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 35
    os.makedirs(os.path.join(out, "tasks"), exist_ok=True)
    os.makedirs(os.path.join(out, "candidates"), exist_ok=True)
    lines = []
    for i, (name, ref, args, inputs, src, decl) in enumerate(samples()):
        if i >= count:
            break
        task = os.path.join(out, "tasks", f"{name}.py")
        cand = os.path.join(out, "candidates", f"{name}.py")
        with open(task, "w") as f:
            f.write(TASK.format(name=name, ref=ref, args=args, inputs=inputs))
        with open(cand, "w") as f:
            f.write(CANDIDATE.format(name=name, src=src, decl=decl, args=args, call=args))
        lines.append({"task": task, "candidate": cand, "backend": "cuda",
                      "expect_gpu": "correct", "expect_cpu": "not_run"})
    with open(os.path.join(out, "manifest.jsonl"), "w") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
    print(f"{len(lines)} samples in {out}")


if __name__ == "__main__":
    main()
