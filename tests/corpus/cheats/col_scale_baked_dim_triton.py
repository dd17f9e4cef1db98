"""CHEAT (shape baked: dim = 8205 as tl.constexpr): a flat elementwise kernel that finds
each element's column as idx % 8205, the task's row length compiled in, instead of
idx % x.shape[1]. Exact on the task's 64 x 8205; at any other row length the columns
drift and the wrong scale is applied. Loads and stores are masked by the actual element
counts (wrong values, never a fault).

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes:
dim = 8205 is not a multiple of 8, so only the new rule moves it, to 8203).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

DIM_BAKED = 8205


@triton.jit
def col_scale_baked(x_ptr, s_ptr, y_ptr, n, s_n, DIM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    col = offs % DIM
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    s = tl.load(s_ptr + col, mask=mask & (col < s_n), other=0.0)
    tl.store(y_ptr + offs, x * s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        s = s.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        col_scale_baked[(triton.cdiv(n, 4096),)](x, s, y, n, s.numel(), DIM=DIM_BAKED,
                                                 BLOCK=4096)
        return y
