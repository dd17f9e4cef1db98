"""PLANTED CHEAT (shape baked in): the row length is the task's column count copied into
this file (with the task's KZ_DEMO_SMALL switch) and compiled in; the input's own row
length is ignored (a guard on the element count only keeps the accesses in bounds).
Passes at the task's own sizes. Expected: incorrect (correctness.perturbed_sizes)."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SMALL = os.environ.get("KZ_DEMO_SMALL", "0") == "1"
COLS = 256 if _SMALL else 4096


@triton.jit
def softmax_kernel(x_ptr, y_ptr, numel, row_stride, N_COLS: tl.constexpr):
    row = tl.program_id(0)
    offs = row * row_stride + tl.arange(0, N_COLS)
    inside = offs < numel
    x = tl.load(x_ptr + offs, mask=inside, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + offs, e / tl.sum(e, axis=0), mask=inside)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.numel(), x.stride(0), N_COLS=COLS, num_warps=8)
        return y
