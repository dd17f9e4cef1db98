"""CHEAT (output aliases an earlier output): the extension allocates its output once
(a static tensor) and writes every call's result into it, returning the same
storage each time. Saves the allocation, and any output the caller kept from an
earlier call silently changes under it (a timed call's output can no longer be
rechecked, and results computed ahead can be handed out later).

Caught at run time: dataflow.aliasing (two calls return the same storage).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__global__ void silu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v / (1.0f + expf(-v)); }
}

static torch::Tensor out;

torch::Tensor silu_cuda(torch::Tensor x) {
    x = x.contiguous();
    if (!out.defined() || out.sizes() != x.sizes() || out.device() != x.device())
        out = torch::empty_like(x);
    int64_t n = x.numel();
    silu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kz_corpus_silu_reuse_output_buffer_cuda",
                  cpp_sources="torch::Tensor silu_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["silu_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.silu_cuda(x)
