import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set erf, normalize, pad."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = torch.erf(x)
        a1 = F.normalize(a0, dim=1)
        a2 = F.pad(a1, (1, 1, 2, 2))
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
