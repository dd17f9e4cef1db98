import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set fmin, sigmoid, max_unpool1d."""

    def __init__(self):
        super().__init__()
        self.m1 = torch.nn.Sigmoid()
        self.m2 = torch.nn.MaxUnpool1d(4)

    def forward(self, x, y, t):
        a0 = torch.fmin(x, y)
        a1 = self.m1(a0)
        a2 = self.m2(*F.max_pool1d(a1.flatten(2), 4, return_indices=True))
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
