"""Escape corpus (CUDA: the extension's forward signals a neighbour and ptraces it). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp = """
#include <torch/extension.h>
#include <csignal>
#include <sys/ptrace.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>
torch::Tensor relu_cuda(torch::Tensor x);
torch::Tensor relu(torch::Tensor x) {
  if (kill(@VICTIM@, SIGKILL) != 0 && ptrace(PTRACE_ATTACH, @VICTIM@, nullptr, nullptr) != 0)
    throw std::runtime_error(std::string("blocked: ") + std::strerror(errno));
  return relu_cuda(x);
}
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
ext = load_inline(name="esc_kill", cpp_sources=cpp, cuda_sources=cuda, functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu(x.contiguous())
