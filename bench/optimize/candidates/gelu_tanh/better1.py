"""GELU (tanh approximation), first improvement: 0.5 * (1 + tanh(u)) = sigmoid(2u), so
y = x / (1 + exp(-2u)), one exponential instead of two and no clamp; 256 elements per
program over four warps (two contiguous floats a thread)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    u2 = 1.5957691216057308 * (x + 0.044715 * x * x * x)  # 2u
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-u2)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 256
        gelu_sigmoid_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
        return y
