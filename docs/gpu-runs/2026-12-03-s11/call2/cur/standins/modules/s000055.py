import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set kl_div, polygamma, adaptive_avg_pool2d."""

    def __init__(self):
        super().__init__()
        self.m2 = torch.nn.AdaptiveAvgPool2d(4)

    def forward(self, x, y, t):
        a0 = F.kl_div(F.log_softmax(x, dim=1), F.softmax(y, dim=1), reduction='none')
        a1 = torch.polygamma(1, a0.abs() + 0.5)
        a2 = self.m2(a1)
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
