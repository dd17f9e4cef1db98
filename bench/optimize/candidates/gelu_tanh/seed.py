"""GELU (tanh approximation), deliberately naive seed: 32 elements per program, one warp,
tanh spelled out with two exponentials. Correct, slow: the search starts here.
0.5 * x * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    u = tl.minimum(tl.maximum(u, -20.0), 20.0)  # tanh is +-1 to float precision there
    ep = tl.exp(u)
    em = tl.exp(-u)
    t = (ep - em) / (ep + em)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 32
        gelu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=1)
        return y
