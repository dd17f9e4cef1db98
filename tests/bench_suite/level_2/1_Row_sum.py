"""Sum over the rows of a 4 x 256 float32 tensor (1024 elements)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(4, 256)]


def get_init_inputs():
    return []
