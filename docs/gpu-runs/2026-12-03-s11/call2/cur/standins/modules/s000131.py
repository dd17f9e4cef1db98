import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set binary_cross_entropy, logaddexp2, diagonal."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = F.binary_cross_entropy(torch.sigmoid(x), torch.sigmoid(y), reduction='none')
        a1 = torch.logaddexp2(a0, y)
        a2 = torch.diagonal(a1, dim1=2, dim2=3)
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
