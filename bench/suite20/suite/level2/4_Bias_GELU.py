"""gelu(x + bias) on a 256 x 1024 float32 tensor with a learned bias of 1024 (a parameter)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x + self.bias)


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [1024]
