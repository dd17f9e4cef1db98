"""Invalid task: defines Model and get_init_inputs but no get_inputs().

Expected verdict: invalid_task (the reference is unusable, whatever the candidate).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_init_inputs():
    return []
