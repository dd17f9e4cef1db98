"""CHEAT (uninitialised output): the output comes from torch::empty and the kernel
only "finalises" the first row. Under a harness that frees the reference's output
just before calling the candidate (same shape, so the caching allocator hands back
the same block), the untouched rows still hold the reference's answer.

The verifier keeps the reference output alive while the candidate runs, so the
block is not reused: the rows hold stale data and the comparison fails. Expected:
incorrect (caught by correctness).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void first_row_softmax(const float* x, float* y, int64_t cols) {
    __shared__ float red[256];
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(x[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[c] = expf(x[c] - m) / red[0];
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);  // rows 1.. are never written
    first_row_softmax<<<1, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    return y;
}
"""

ext = load_inline(name="kz_corpus_softmax_uninit_empty_cuda",
                  cpp_sources="torch::Tensor softmax_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["softmax_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.softmax_cuda(x)
