"""SiLU over a 4096 x 4096 fp32 tensor: x * sigmoid(x) (two PyTorch kernels).

Signed inputs (torch.randn). The sizes are module-level constants that are
multiples of 1024, so the verifier can perturb them (e.g. 4096 -> 4093) to catch
kernels that only work for multiples of their block size or for this one shape.
"""
import torch
import torch.nn as nn

rows = 4096
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
