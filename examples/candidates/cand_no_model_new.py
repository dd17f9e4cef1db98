"""Bad candidate: defines only `class Model` (a copy of the reference), no `ModelNew`.

Expected (with tasks/relu.py): compile_error on a GPU and on a CPU host
(worker error kind "missing_model_new").
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
