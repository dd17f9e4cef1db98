"""Bad candidate for tasks/relu.py: right values, but returned as float64.

Expected: incorrect on a GPU and on a CPU host (output dtype mismatch: float64 vs
float32), even though every value is exactly relu(x).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x).double()  # BUG: wrong dtype
