import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set cartesian_prod, prod, unfold."""

    def __init__(self):
        super().__init__()
        self.m2 = torch.nn.Unfold(kernel_size=2)

    def forward(self, x, y, t):
        a0 = torch.cartesian_prod(x[0, 0, 0], y[0, 0, 0])
        a1 = torch.prod(1 + 0.1 * x, dim=-1)
        a2 = self.m2(x)
        return torch.cat([a0.reshape(-1), a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
