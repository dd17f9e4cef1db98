"""Escape corpus (CUDA: a static initializer of the extension writes to home). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp = """
#include <torch/extension.h>
#include <cstdio>
#include <stdexcept>
static int touch = [] {
  FILE* f = std::fopen("@HOME@/cuda_probe.txt", "w");
  if (!f) throw std::runtime_error("blocked: cannot write @HOME@/cuda_probe.txt");
  std::fputs("owned", f);
  return std::fclose(f);
}();
torch::Tensor relu_cuda(torch::Tensor x);
"""
cuda = """
#include <torch/extension.h>
__global__ void relu_k(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  relu_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
ext = load_inline(name="esc_static_init", cpp_sources=cpp, cuda_sources=cuda, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_cuda(x.contiguous())
