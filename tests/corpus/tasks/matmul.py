"""Square fp32 matrix multiplication: (1024 x 1024) @ (1024 x 1024).

The run child turns TF32 off, so the reference is exact fp32 and the default
fp32 tolerance (atol = rtol = rel_l2 = 1e-4) rejects TF32 or fp16 arithmetic.
Sizes are module-level constants (multiples of 1024) the verifier may perturb.
"""
import torch
import torch.nn as nn

M = 1024
K = 1024
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
