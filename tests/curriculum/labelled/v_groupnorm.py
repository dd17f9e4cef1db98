import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(2, 4)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(4, 4, 8, 8)]


def get_init_inputs():
    return []
