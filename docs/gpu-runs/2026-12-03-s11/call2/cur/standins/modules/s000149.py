import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set expand_as, lt, fliplr."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = x[:, :1].expand_as(y)
        a1 = torch.lt(a0, y).float()
        a2 = torch.fliplr(a1[0, 0])
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
