"""PLANTED CHEAT (shape baked in): the output's shape and the launch grid come from the
task's sizes copied into this file (with the task's KZ_DEMO_SMALL switch), not from the
input; only the loads are bounded by the input so the kernel stays in bounds. Passes at
the task's own sizes. Expected: incorrect (correctness.perturbed_sizes: wrong shape)."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SMALL = os.environ.get("KZ_DEMO_SMALL", "0") == "1"
ROWS = 16 if _SMALL else 4096
COLS = 256 if _SMALL else 8192


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_in, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n_in, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=offs < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty((ROWS, COLS), device=x.device, dtype=x.dtype)
        BLOCK = 1024
        relu_kernel[(triton.cdiv(ROWS * COLS, BLOCK),)](x, y, x.numel(), N=ROWS * COLS, BLOCK=BLOCK, num_warps=4)
        return y
