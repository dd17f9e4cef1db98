"""Column scaling, elementwise with broadcast: x * s for x of 64 x 8205 and s of 8205.

The sizes are `batch_size` and `dim` (KernelBench's names for elementwise tasks), and
`dim` is irregular (8205, odd): the old perturbed-size check, which only moved multiples
of 8, never changed it. Now it becomes 8203, so a kernel that finds the column of a flat
index with the row length compiled in (idx % 8205) scales by the wrong entries.
"""
import torch
import torch.nn as nn

batch_size = 64
dim = 8205


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return x * s


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(dim)]


def get_init_inputs():
    return []
