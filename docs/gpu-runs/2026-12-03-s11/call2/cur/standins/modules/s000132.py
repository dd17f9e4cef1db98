import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set bilinear, block_diag, unsqueeze."""

    def __init__(self):
        super().__init__()
        self.m0 = torch.nn.Bilinear(16, 16, 8)

    def forward(self, x, y, t):
        a0 = self.m0(x, y)
        a1 = torch.block_diag(x[0, 0], y[0, 0])
        a2 = torch.unsqueeze(x, 1)
        return torch.cat([a0.reshape(-1), a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
