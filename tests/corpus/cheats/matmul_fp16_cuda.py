"""CHEAT (precision downcast): the shared-memory tiles are stored as __half (half the
shared memory and bandwidth, the first step towards tensor cores), products are
accumulated in fp32. Rounding every input to 11 significant bits gives errors of
~3e-4 relative over K = 1024: fine for a fp16 task, not for this fp32 one.

Expected: incorrect (correctness: ~80% of elements exceed atol = rtol = 1e-4 and
rel_l2 ~3e-4 > 1e-4).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

constexpr int TILE = 32;

__global__ void matmul_half_tiles(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ __half As[TILE][TILE + 2], Bs[TILE][TILE + 2];
    int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = __float2half((r < M && k0 + threadIdx.x < K) ? A[(int64_t)r * K + k0 + threadIdx.x] : 0.0f);
        Bs[threadIdx.y][threadIdx.x] = __float2half((k0 + threadIdx.y < K && c < N) ? B[(int64_t)(k0 + threadIdx.y) * N + c] : 0.0f);
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc = fmaf(__half2float(As[threadIdx.y][k]), __half2float(Bs[k][threadIdx.x]), acc);
        __syncthreads();
    }
    if (r < M && c < N) C[(int64_t)r * N + c] = acc;
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
    a = a.contiguous(); b = b.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_half_tiles<<<grid, dim3(TILE, TILE), 0, c10::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

ext = load_inline(name="kz_corpus_matmul_fp16_cuda",
                  cpp_sources="torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=cuda_source, functions=["matmul_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ext.matmul_cuda(a, b)
