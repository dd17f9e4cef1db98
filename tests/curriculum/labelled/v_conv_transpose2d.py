import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 4, 2, stride=2)

    def forward(self, x):
        return self.up(x)


def get_inputs():
    return [torch.randn(4, 3, 16, 16)]


def get_init_inputs():
    return []
