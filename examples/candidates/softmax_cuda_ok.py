"""Correct, numerically stable CUDA row softmax: one block per row.

Three passes over the row: max, sum of exp(x - max), then normalise. Block-wide
reductions use warp shuffles plus a small shared-memory array.
Expected: correct on a GPU (and timed); not_run on a host without a GPU.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

template <bool IS_MAX>
__device__ float block_reduce(float v, float* shared) {
    for (int off = 16; off > 0; off >>= 1) {
        float o = __shfl_xor_sync(0xffffffff, v, off);
        v = IS_MAX ? fmaxf(v, o) : v + o;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = shared[0];
    for (int w = 1; w < THREADS / 32; ++w) v = IS_MAX ? fmaxf(v, shared[w]) : v + shared[w];
    __syncthreads();  // shared is reused by the next reduction
    return v;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float shared[THREADS / 32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;

    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    m = block_reduce<true>(m, shared);

    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) s += expf(xr[c] - m);
    s = block_reduce<false>(s, shared);

    float inv = 1.0f / s;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) yr[c] = expf(xr[c] - m) * inv;
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2,
                "expected a 2-D float32 CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    softmax_kernel<<<(unsigned)x.size(0), THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x);"

softmax_ext = load_inline(
    name="kz_example_softmax_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_ext.softmax_cuda(x)
