import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set binary_cross_entropy, reciprocal, argmin."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = F.binary_cross_entropy(torch.sigmoid(x), torch.sigmoid(y), reduction='none')
        a1 = torch.reciprocal(a0.abs() + 0.5)
        a2 = torch.argmin(a1, dim=-1).float()
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
