"""x * scale + shift, second improvement: each program walks 4 tiles of 2048 elements
(8192 in all) over eight warps, a fused multiply-add per element, streaming cache hints;
a grid of 4096 programs instead of the seed's million."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_tiles_kernel(src, dst, count, a, b, TILE: tl.constexpr, TILES: tl.constexpr):
    base = tl.program_id(0) * (TILE * TILES)
    for t in tl.static_range(TILES):
        idx = base + t * TILE + tl.arange(0, TILE)
        keep = idx < count
        v = tl.load(src + idx, mask=keep, eviction_policy="evict_first")
        tl.store(dst + idx, tl.fma(v, a, b), mask=keep, eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = float(scale)
        self.shift = float(shift)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        src = x.contiguous()
        dst = torch.empty_like(src)
        count = src.numel()
        TILE, TILES = 2048, 4
        grid = (triton.cdiv(count, TILE * TILES),)
        affine_tiles_kernel[grid](src, dst, count, self.scale, self.shift, TILE=TILE, TILES=TILES, num_warps=8)
        return dst
