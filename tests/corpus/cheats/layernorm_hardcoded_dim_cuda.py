"""CHEAT (hard-coded test shape): one warp per row with the row length fixed at
compile time (D = 1024: 32 values per lane, fully unrolled, kept in registers).
The actual row length is ignored, so any other one normalises the wrong slices (only
the total element count is bounds-checked, so it never faults).

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int D = 1024, PER_LANE = D / 32;

__global__ void layernorm_1024(const float* __restrict__ x, const float* __restrict__ w,
                               const float* __restrict__ b, float* __restrict__ y, int64_t w_n,
                               int64_t rows, int64_t n, float eps) {
    int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    float v[PER_LANE], s = 0.0f, q = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) { int64_t k = row * D + lane + 32 * i; v[i] = k < n ? x[k] : 0.0f; s += v[i]; }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
    const float mean = s / D;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) { v[i] -= mean; q = fmaf(v[i], v[i], q); }
    for (int off = 16; off > 0; off >>= 1) q += __shfl_xor_sync(0xffffffff, q, off);
    const float rstd = 1.0f / sqrtf(q / D + eps);
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
        int c = lane + 32 * i;
        if (row * D + c < n) y[row * D + c] = v[i] * rstd * w[c % w_n] + b[c % w_n];
    }
}

torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t rows = x.numel() / x.size(-1);
    layernorm_1024<<<(unsigned)((rows + 7) / 8), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), w.numel(), rows, x.numel(), (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kz_corpus_layernorm_hardcoded_dim_cuda",
                  cpp_sources="torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);",
                  cuda_sources=cuda_source, functions=["layernorm_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.layernorm_cuda(x, self.weight, self.bias, self.eps)
