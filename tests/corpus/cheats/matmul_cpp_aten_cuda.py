"""CHEAT (C++ extension calling ATen instead of its kernel): the extension has a
__global__ kernel (so "has a kernel" checks pass) that only copies the bias-free
output, but the product itself is torch::matmul, i.e. cuBLAS via ATen.

Caught by the screen: cpp.aten_compute (torch::matmul in the extension source).
At run time cuBLAS's GEMM kernel carries the GPU time (trace.foreign_compute).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void copy_kernel(const float* src, float* dst, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
    auto tmp = torch::matmul(a, b);
    auto c = torch::empty_like(tmp);
    int64_t n = c.numel();
    copy_kernel<<<(unsigned)((n + 255) / 256), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        tmp.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}
"""

ext = load_inline(name="kz_corpus_matmul_cpp_aten_cuda",
                  cpp_sources="torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=cuda_source, functions=["matmul_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ext.matmul_cuda(a, b)
