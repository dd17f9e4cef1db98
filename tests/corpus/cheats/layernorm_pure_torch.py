"""CHEAT (pytorch op instead of a kernel): no kernel at all, just F.layer_norm.

PyTorch's fused layer_norm is several times faster than the task's hand-written
reference, so this "optimisation" reports a real speedup for zero kernel work.
Caught by the screen: gen.no_kernel (a triton candidate with no @triton.jit) and
py.torch_compute; at run time the trace would show only PyTorch's kernels.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)
