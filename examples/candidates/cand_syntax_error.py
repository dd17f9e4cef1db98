"""Bad candidate: a Python syntax error (unbalanced parenthesis in forward).

Expected (with tasks/relu.py): compile_error on a GPU and on a CPU host
(worker error kind "python_syntax", with the line number).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x
