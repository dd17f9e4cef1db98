"""Bench task: row softmax over 8192 x 16384 fp32 (1 GiB of traffic, a few hundred µs)."""
import torch
import torch.nn as nn

rows, cols = 8192, 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
