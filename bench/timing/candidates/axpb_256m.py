"""Triton y = 2.5 x + 1, 8192 elements per program."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def axpb_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2.5 + 1.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        axpb_kernel[(triton.cdiv(n, 8192),)](x, y, n, BLOCK=8192, num_warps=8)
        return y
