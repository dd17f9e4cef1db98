"""A weak task (KernelBench level 2 style): Linear, max over dim 1, minus its mean, GELU.

max(dim=1, keepdim=True) leaves one column, whose mean over dim 1 is itself, so
the subtraction gives exactly 0 and GELU(0) = 0: the reference output is all
zeros whatever the inputs and weights. Any kernel that writes zeros matches it
exactly. The verifier must flag the task as degenerate (dataflow.weak_task)
instead of crediting a speedup.
"""
import torch
import torch.nn as nn

batch = 1024
in_features = 1024
out_features = 512


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = torch.max(x, dim=1, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
