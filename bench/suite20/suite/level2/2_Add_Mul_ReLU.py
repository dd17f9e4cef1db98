"""relu((x + y) * z) on three 256 x 1024 float32 tensors: three PyTorch kernels to fuse."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.relu((x + y) * z)


def get_inputs():
    return [torch.randn(256, 1024), torch.randn(256, 1024), torch.randn(256, 1024)]


def get_init_inputs():
    return []
