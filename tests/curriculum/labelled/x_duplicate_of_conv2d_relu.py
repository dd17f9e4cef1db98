import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """The same module as v_conv2d_relu, every name changed."""

    def __init__(self, channels):
        super().__init__()
        self.layer = nn.Conv2d(channels, 8, 3, padding=1)

    def forward(self, inp):
        # a comment
        return F.relu(self.layer(inp))


def get_inputs():
    return [torch.randn(4, 3, 16, 16)]


def get_init_inputs():
    return [3]
