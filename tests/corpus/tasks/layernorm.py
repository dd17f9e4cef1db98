"""LayerNorm over the last dimension of a 512 x 1024 fp32 tensor, written out by hand.

The reference is deliberately the slow textbook formula (mean, centred square,
mean, sqrt, divide, scale, shift: about eight launch-bound PyTorch kernels), so a
fused kernel is honestly several times faster. weight and bias are parameters of
shape (dim,), initialised away from 1 and 0 so kernels that ignore them fail.
"""
import torch
import torch.nn as nn

batch = 512
dim = 1024


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim]
