"""Bad candidate for tasks/relu.py: drops the last column, returning shape (16, 1023).

Expected: incorrect on a GPU and on a CPU host (output shape mismatch).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)[:, :-1]  # BUG: wrong shape
