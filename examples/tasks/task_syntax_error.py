"""Invalid task: a Python syntax error (missing colon after the def).

Expected verdict: invalid_task (the reference is unusable, whatever the candidate).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16, 1024)]


def get_init_inputs():
    return []
