"""relu(x) * y over 4096 x 4096 fp32 tensors, inputs drawn only from [0, 1).

get_inputs() uses torch.rand, so every input is non-negative: relu(x) == x on
these inputs, and log/exp identities hold. Kernels that silently rely on that
(drop the relu, compute exp(log x + log y)) pass here and fail the verifier's
signed-input check (correctness.signed_inputs), which also draws negative values.
"""
import torch
import torch.nn as nn

rows = 4096
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * y


def get_inputs():
    return [torch.rand(rows, cols), torch.rand(rows, cols)]


def get_init_inputs():
    return []
