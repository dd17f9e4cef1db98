"""x * scale + shift, first improvement: 256 elements per program over four warps (two
contiguous floats a thread, 64-bit accesses), eight times fewer programs than the seed."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(src, dst, count, a, b, TILE: tl.constexpr):
    idx = tl.program_id(0) * TILE + tl.arange(0, TILE)
    keep = idx < count
    v = tl.load(src + idx, mask=keep)
    tl.store(dst + idx, v * a + b, mask=keep)


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = float(scale)
        self.shift = float(shift)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        src = x.contiguous()
        dst = torch.empty_like(src)
        count = src.numel()
        TILE = 256
        grid = (triton.cdiv(count, TILE),)
        affine_kernel[grid](src, dst, count, self.scale, self.shift, TILE=TILE, num_warps=4)
        return dst
