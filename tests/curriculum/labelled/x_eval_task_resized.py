import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out, factor):
        super(Model, self).__init__()
        self.proj = nn.Linear(n_in, n_out)
        self.factor = factor

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        # the evaluation task 1_Gemm_Scale_Relu, renamed, at other sizes
        h = self.proj(h)
        h = h * self.factor
        return torch.relu(h)


rows = 128
n_in = 256
n_out = 96
factor = 2.0


def get_inputs():
    return [torch.randn(rows, n_in)]


def get_init_inputs():
    return [n_in, n_out, factor]
