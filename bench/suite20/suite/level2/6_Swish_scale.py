"""x * sigmoid(x) * scale on a 256 x 1024 float32 tensor; scale is a constructor argument."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) * self.scale


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [1.5]
