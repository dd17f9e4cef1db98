"""Bench task: ReLU over 32 Mi fp32 elements (256 MiB of traffic, ~70 µs on an H200)."""
import torch
import torch.nn as nn

rows, cols = 8192, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
