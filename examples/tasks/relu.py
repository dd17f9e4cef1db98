"""Elementwise ReLU on a 16 x 1024 float32 tensor (16K elements).

The simplest task: no parameters, one input, one output of the same shape.
"""
import torch
import torch.nn as nn

batch_size = 16
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
