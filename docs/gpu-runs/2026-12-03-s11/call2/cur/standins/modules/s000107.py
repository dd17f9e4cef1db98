import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set gaussian_nll_loss, kl_div, margin_ranking_loss."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = F.gaussian_nll_loss(x, y, y.abs() + 0.5, reduction='none')
        a1 = F.kl_div(F.log_softmax(a0, dim=1), F.softmax(y, dim=1), reduction='none')
        a2 = F.margin_ranking_loss(a1, y, torch.sign(y), reduction='none')
        return a2


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
