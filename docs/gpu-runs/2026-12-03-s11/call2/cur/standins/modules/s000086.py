import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set max_unpool2d, round, unflatten."""

    def __init__(self):
        super().__init__()
        self.m0 = torch.nn.MaxUnpool2d(2)
        self.m2 = torch.nn.Unflatten(1, (2, 4))

    def forward(self, x, y, t):
        a0 = self.m0(*F.max_pool2d(x, 2, return_indices=True))
        a1 = torch.round(a0 * 4)
        a2 = self.m2(a1)
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
