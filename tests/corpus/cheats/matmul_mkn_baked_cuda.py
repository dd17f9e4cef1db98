"""CHEAT (shape baked: M, K, N = 500, 300, 452 as compile-time constants): the exact
case of the H200 report (issue 14), where the old check found "no size constants" in a
task whose sizes are named M, K, N. 16 x 16 shared-memory tiles whose grid, loop bound
and row strides are the task's three numbers; the actual shapes only size the output.
Exact on 500 x 300 x 452, wrong rows at any other size. Every access is bounded by the
flat element counts (wrong values, never a fault).

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes:
M, K, N move to 497, 297, 449).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int M = 500, K = 300, N = 452, T = 16;

__global__ void matmul_500_300_452(const float* __restrict__ a, const float* __restrict__ b,
                                   float* __restrict__ c, int64_t a_n, int64_t b_n, int64_t c_n) {
    __shared__ float sa[T][T], sb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        int64_t ia = (int64_t)row * K + k0 + threadIdx.x, ib = (int64_t)(k0 + threadIdx.y) * N + col;
        sa[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K && ia < a_n ? a[ia] : 0.0f;
        sb[threadIdx.y][threadIdx.x] = col < N && k0 + threadIdx.y < K && ib < b_n ? b[ib] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += sa[threadIdx.y][k] * sb[k][threadIdx.x];
        __syncthreads();
    }
    int64_t ic = (int64_t)row * N + col;
    if (row < M && col < N && ic < c_n) c[ic] = acc;
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
    a = a.contiguous();
    b = b.contiguous();
    auto c = torch::empty({a.size(0), b.size(1)}, a.options());
    dim3 grid((N + T - 1) / T, (M + T - 1) / T), block(T, T);
    matmul_500_300_452<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.numel(), b.numel(), c.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

ext = load_inline(name="kz_corpus_matmul_mkn_baked_cuda",
                  cpp_sources="torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=cuda_source, functions=["matmul_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ext.matmul_cuda(a, b)
