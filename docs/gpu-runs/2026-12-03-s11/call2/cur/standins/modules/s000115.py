import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set eq, scatter, type_as."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = torch.eq(torch.round(x), torch.round(y)).float()
        a1 = torch.scatter(a0, 1, t, y)
        a2 = a1 + t.type_as(a1)
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
