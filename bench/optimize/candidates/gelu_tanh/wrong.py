"""Subtly WRONG GELU: drops the cubic term of the tanh approximation (tanh(sqrt(2/pi) x)
instead of tanh(sqrt(2/pi) (x + 0.044715 x^3))). Expected: incorrect (trials: tolerance)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-1.5957691216057308 * x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 512
        gelu_sigmoid_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
        return y
