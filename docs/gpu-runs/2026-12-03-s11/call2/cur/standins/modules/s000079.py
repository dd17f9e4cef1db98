import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set softshrink, flatten, max_unpool3d."""

    def __init__(self):
        super().__init__()
        self.m0 = torch.nn.Softshrink()
        self.m1 = torch.nn.Flatten()
        self.m2 = torch.nn.MaxUnpool3d(2)

    def forward(self, x, y, t):
        a0 = self.m0(x)
        a1 = self.m1(a0)
        a2 = self.m2(*F.max_pool3d(x.unsqueeze(1), 2, return_indices=True))
        return torch.cat([a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
