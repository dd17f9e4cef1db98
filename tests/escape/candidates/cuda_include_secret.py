"""Escape corpus (CUDA: #include another client's candidate at compile time). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp = """
#include <torch/extension.h>
#include "@OTHER@"
torch::Tensor relu(torch::Tensor x) { return x; }
"""
cuda = """
__global__ void k() {}
"""
ext = load_inline(name="esc_include", cpp_sources=cpp, cuda_sources=cuda, functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu(x)
