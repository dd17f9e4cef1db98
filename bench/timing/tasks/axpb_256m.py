"""Bench task: y = 2.5 * x + 1 over 256 Mi fp32 elements (2 GiB of traffic, ~0.5 ms)."""
import torch
import torch.nn as nn

rows, cols = 16384, 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.5 + 1.0


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
