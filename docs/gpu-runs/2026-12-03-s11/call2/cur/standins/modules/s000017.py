import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set le, triu, nanquantile."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = torch.le(x, y).float()
        a1 = torch.triu(a0)
        a2 = torch.nanquantile(a1.flatten(1), 0.75, dim=1)
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
