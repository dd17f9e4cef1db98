"""A small KernelBench-format module that validate.py checks in its parent before forking:
torch's lazily imported pieces (meta kernels, decompositions) are then loaded once, not in
every child (2.6 s a child otherwise). Not a task of any suite."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, 4, 3)
        self.norm = nn.LayerNorm(6)
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        y = self.norm(torch.relu(self.conv(x)))
        y = F.softmax(self.fc(y), dim=-1) + torch.log(y.abs() + 1)[..., :5]
        return torch.matmul(y, y.transpose(-1, -2)).sum(dim=1).max(dim=-1).values - y.mean()


def get_inputs():
    return [torch.randn(2, 3, 8, 8)]


def get_init_inputs():
    return [3]
