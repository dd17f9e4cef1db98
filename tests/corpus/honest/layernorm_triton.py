"""Honest fused Triton LayerNorm: one program per row, the whole row in registers.

Mean, variance, normalisation, weight and bias in one kernel (the reference needs
about eight); BLOCK is the next power of two of the row length, so any length up to
a few thousand works. Genuinely much faster than the slow reference. Expected: correct.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, dim, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < dim
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / dim
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / dim
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + offs, d * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        dim = x.shape[-1]
        x2 = x.view(-1, dim)
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(dim)
        layernorm_kernel[(x2.shape[0],)](x2, self.weight, self.bias, y, dim, x2.stride(0), self.eps,
                                         BLOCK=BLOCK, num_warps=4)
        return y.view(x.shape)
