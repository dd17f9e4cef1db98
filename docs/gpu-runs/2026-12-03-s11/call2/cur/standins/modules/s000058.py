import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set clamp, erfinv, multilabel_soft_margin_loss."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = torch.clamp(x, -0.5, 0.5)
        a1 = torch.erfinv(torch.tanh(a0) * 0.9)
        a2 = F.multilabel_soft_margin_loss(a1.flatten(1), (y.flatten(1) > 0).float(), reduction='none')
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
