"""fp32 matrix multiplication with irregular sizes named M, K, N: (500 x 300) @ (300 x 452).

KernelBench style: the sizes are module-level constants `M`, `K`, `N` read by
`get_inputs`, none of them a multiple of 8 (KernelBench's own irregular task uses
8205 x 2949 x 5921; these are smaller so the CPU path takes seconds). The
perturbed-size check moves each to a nearby odd value (500 -> 497, 300 -> 297,
452 -> 449), so a kernel with these three numbers compiled in gives wrong values.
"""
import torch
import torch.nn as nn

M = 500
K = 300
N = 452


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
