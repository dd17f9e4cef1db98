import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set avg_pool2d, max_unpool3d, multilabel_soft_margin_loss."""

    def __init__(self):
        super().__init__()
        self.m0 = torch.nn.AvgPool2d(2)
        self.m1 = torch.nn.MaxUnpool3d(2)

    def forward(self, x, y, t):
        a0 = self.m0(x)
        a1 = self.m1(*F.max_pool3d(x.unsqueeze(1), 2, return_indices=True))
        a2 = F.multilabel_soft_margin_loss(x.flatten(1), (y.flatten(1) > 0).float(), reduction='none')
        return torch.cat([a0.reshape(-1), a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
