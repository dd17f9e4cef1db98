"""Softmax over very wide rows: 64 x 65536 fp32, inputs in [0, 1).

Every output lies near 1/65536 = 1.5e-5, far below atol = 1e-4, so an all-zero
output passes the element-wise allclose check; only the relative-L2 check
(rel_l2 = 1e-4) separates a real softmax from a degenerate one.
"""
import torch
import torch.nn as nn

batch = 64
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(batch, dim)]


def get_init_inputs():
    return []
