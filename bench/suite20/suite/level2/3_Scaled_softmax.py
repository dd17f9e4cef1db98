"""softmax(x * scale, dim=1) on a 256 x 1024 float32 tensor; scale is a constructor argument."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * self.scale, dim=1)


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [0.125]
