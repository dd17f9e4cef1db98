"""Honest CUDA row sum: one 256-thread block per row, warp-shuffle reductions.

Each thread accumulates a strided slice of its row in fp32, each warp reduces with
__shfl_xor_sync, and warp 0 combines the eight warp sums. Any row length works.
Expected: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
    return v;
}

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float partial[THREADS / 32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) s += xr[c];
    s = warp_sum(s);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < THREADS / 32 ? partial[threadIdx.x] : 0.0f;
        s = warp_sum(s);
        if (threadIdx.x == 0) y[blockIdx.x] = s;
    }
}

torch::Tensor row_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "2-D float32 CUDA");
    x = x.contiguous();
    auto y = torch::empty({x.size(0)}, x.options());
    if (x.size(0) == 0) return y;
    row_sum_kernel<<<(unsigned)x.size(0), THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor x);"

ext = load_inline(name="kz_corpus_row_sum_warp_cuda", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["row_sum_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.row_sum_cuda(x)
