"""Subtly WRONG x * scale + shift: applies the shift before the scale, (x + shift) *
scale, off by shift * (scale - 1). Expected: incorrect (trials: tolerance)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(src, dst, count, a, b, TILE: tl.constexpr):
    idx = tl.program_id(0) * TILE + tl.arange(0, TILE)
    keep = idx < count
    v = tl.load(src + idx, mask=keep)
    tl.store(dst + idx, (v + b) * a, mask=keep)


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = float(scale)
        self.shift = float(shift)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        src = x.contiguous()
        dst = torch.empty_like(src)
        count = src.numel()
        TILE = 1024
        affine_kernel[(triton.cdiv(count, TILE),)](src, dst, count, self.scale, self.shift, TILE=TILE, num_warps=4)
        return dst
