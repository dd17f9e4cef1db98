"""alpha * x + y on two 256 x 1024 float32 tensors; alpha is a constructor argument."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * self.alpha + y


def get_inputs():
    return [torch.randn(256, 1024), torch.randn(256, 1024)]


def get_init_inputs():
    return [2.5]
