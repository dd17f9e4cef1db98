"""Honest CUDA matmul: 64x64 shared-memory tiles, 4x4 outputs per thread, fp32 FMA.

Each block stages a 64x16 tile of A (transposed) and a 16x64 tile of B in shared
memory and accumulates in fp32 registers (no tensor cores, no TF32), so it matches
the exact-fp32 reference within ~1e-5. Edges are zero-filled and guarded, so any
M, N, K work. Expected: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int BM = 64, BN = 64, BK = 16, T = 4;

__global__ void __launch_bounds__(256) matmul_kernel(const float* __restrict__ A,
        const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[T][T] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) {
            int m = i / BK, k = i % BK, gm = row0 + m, gk = k0 + k;
            As[k][m] = (gm < M && gk < K) ? A[(int64_t)gm * K + gk] : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += 256) {
            int k = i / BN, n = i % BN, gk = k0 + k, gn = col0 + n;
            Bs[k][n] = (gk < K && gn < N) ? B[(int64_t)gk * N + gn] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[T], b[T];
#pragma unroll
            for (int i = 0; i < T; ++i) { a[i] = As[k][ty + 16 * i]; b[i] = Bs[k][tx + 16 * i]; }
#pragma unroll
            for (int i = 0; i < T; ++i)
#pragma unroll
                for (int j = 0; j < T; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < T; ++i) {
        int gm = row0 + ty + 16 * i;
#pragma unroll
        for (int j = 0; j < T; ++j) {
            int gn = col0 + tx + 16 * j;
            if (gm < M && gn < N) C[(int64_t)gm * N + gn] = acc[i][j];
        }
    }
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && a.scalar_type() == torch::kFloat32 && a.dim() == 2, "a: 2-D float32 CUDA");
    TORCH_CHECK(b.is_cuda() && b.scalar_type() == torch::kFloat32 && b.dim() == 2, "b: 2-D float32 CUDA");
    TORCH_CHECK(a.size(1) == b.size(0), "inner dimensions differ");
    a = a.contiguous();
    b = b.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_kernel<<<grid, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

cpp_source = "torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);"

ext = load_inline(name="kz_corpus_matmul_tiled_cuda", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["matmul_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ext.matmul_cuda(a, b)
