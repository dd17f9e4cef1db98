import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Stand-in module for the API set max_unpool2d, lstm, vstack."""

    def __init__(self):
        super().__init__()
        self.m0 = torch.nn.MaxUnpool2d(2)
        self.m1 = torch.nn.LSTM(16, 16, batch_first=True)

    def forward(self, x, y, t):
        a0 = self.m0(*F.max_pool2d(x, 2, return_indices=True))
        a1 = self.m1(a0.flatten(0, 1))[0]
        a2 = torch.vstack([x, y])
        return torch.cat([a1.reshape(-1), a2.reshape(-1)])


def get_inputs():
    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]


def get_init_inputs():
    return []
