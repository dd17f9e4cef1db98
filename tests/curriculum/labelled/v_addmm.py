import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(16))
        self.w = nn.Parameter(torch.randn(64, 16))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.w)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
