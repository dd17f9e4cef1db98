import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set view_as, cosine_embedding_loss, pad."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        a0 = x.view_as(y)
        a1 = F.cosine_embedding_loss(a0.flatten(1), y.flatten(1), torch.sign(y[:, 0, 0, 0]), reduction='none')
        a2 = F.pad(x, (1, 1, 2, 2))
        return torch.cat([a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
