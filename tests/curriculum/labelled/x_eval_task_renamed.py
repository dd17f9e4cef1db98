import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out, factor):
        super(Model, self).__init__()
        self.fc = nn.Linear(n_in, n_out)
        self.factor = factor

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        # renamed copy of the evaluation task 1_Gemm_Scale_Relu
        inp = self.fc(inp)
        inp = inp * self.factor
        return torch.relu(inp)


B = 32
N_IN = 64
N_OUT = 48
FACTOR = 0.5


def get_inputs():
    return [torch.randn(B, N_IN)]


def get_init_inputs():
    return [N_IN, N_OUT, FACTOR]
