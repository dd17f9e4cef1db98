"""Row softmax over a wide dimension: 8 rows of 8192 columns (64K elements).

The inputs are drawn from [0, 1), so every output lies between about 0.7e-4 and
1.9e-4 (1/8192 = 1.2e-4). Any output of that size is within atol = 1e-4 of the
reference, so only the relative-L2 check (rel_l2 = 1e-4) can tell a real softmax
from a constant one: see candidates/softmax_triton_tiny_wrong.py.
"""
import torch
import torch.nn as nn

batch_size = 8
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
