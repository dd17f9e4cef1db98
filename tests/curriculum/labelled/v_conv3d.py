import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 3, 3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 2, 8, 8, 8)]


def get_init_inputs():
    return []
