"""CHEAT (dropping the tail): the grid is n // BLOCK programs and the loads and stores
are unmasked: exact when n is a multiple of 1024 (as 4096 x 4096 is), and the last
n % 1024 elements are never written otherwise (left as whatever empty_like held).
Never reads or writes out of bounds.

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        BLOCK = 1024
        grid = x.numel() // BLOCK
        if grid > 0:
            silu_kernel[(grid,)](x, y, BLOCK=BLOCK)
        return y
