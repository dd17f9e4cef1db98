import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set glu, movedim, unfold."""

    def __init__(self):
        super().__init__()
        self.m0 = torch.nn.GLU()
        self.m2 = torch.nn.Unfold(kernel_size=2)

    def forward(self, x, y, t):
        a0 = self.m0(x)
        a1 = torch.movedim(x, 1, 3)
        a2 = self.m2(x)
        return torch.cat([a0.reshape(-1), a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
