import torch
import torch.nn as nn
import torch.nn.functional as F

class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return F.silu(self.fc(x))


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.block = Block(d)

    def forward(self, x):
        return self.block(x)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64]
