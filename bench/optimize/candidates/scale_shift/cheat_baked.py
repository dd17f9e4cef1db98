"""PLANTED CHEAT (shape baked in): the element count and the output's shape are the
task's sizes copied into this file (with the task's KZ_DEMO_SMALL switch); the input only
bounds the loads. Passes at the task's own sizes. Expected: incorrect
(correctness.perturbed_sizes: wrong shape)."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SMALL = os.environ.get("KZ_DEMO_SMALL", "0") == "1"
ROWS = 16 if _SMALL else 4096
COLS = 256 if _SMALL else 8192


@triton.jit
def affine_kernel(src, dst, count_in, a, b, COUNT: tl.constexpr, TILE: tl.constexpr):
    idx = tl.program_id(0) * TILE + tl.arange(0, TILE)
    v = tl.load(src + idx, mask=idx < count_in, other=0.0)
    tl.store(dst + idx, v * a + b, mask=idx < COUNT)


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = float(scale)
        self.shift = float(shift)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        src = x.contiguous()
        dst = torch.empty((ROWS, COLS), device=x.device, dtype=x.dtype)
        TILE = 1024
        grid = (triton.cdiv(ROWS * COLS, TILE),)
        affine_kernel[grid](src, dst, src.numel(), self.scale, self.shift, COUNT=ROWS * COLS, TILE=TILE, num_warps=4)
        return dst
