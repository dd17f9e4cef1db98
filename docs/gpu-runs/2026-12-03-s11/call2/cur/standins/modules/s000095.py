import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set local_response_norm, threshold, zero_pad1d."""

    def __init__(self):
        super().__init__()
        self.m0 = torch.nn.LocalResponseNorm(3)
        self.m1 = torch.nn.Threshold(0.1, 0.0)
        self.m2 = torch.nn.ZeroPad1d(2)

    def forward(self, x, y, t):
        a0 = self.m0(x)
        a1 = self.m1(a0)
        a2 = self.m2(a1.flatten(2))
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
