import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set exp2, argmin, multi_margin_loss."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = torch.exp2(x)
        a1 = torch.argmin(a0, dim=-1).float()
        a2 = F.multi_margin_loss(x[:, :, 0, 0], t[:, 0, 0, 0], reduction='none')
        return torch.cat([a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
