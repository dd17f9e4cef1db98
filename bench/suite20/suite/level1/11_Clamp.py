"""Clamp a 256 x 1024 float32 tensor to [lo, hi] (constructor arguments)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, lo: float, hi: float):
        super().__init__()
        self.lo = lo
        self.hi = hi

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=self.lo, max=self.hi)


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [-0.5, 0.5]
