"""Sum-reduction over the last dimension: (4096 x 4096) fp32 -> (4096,).

Sizes are module-level constants (multiples of 1024) the verifier may perturb.
"""
import torch
import torch.nn as nn

rows = 4096
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
