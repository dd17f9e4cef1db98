"""ReLU, second improvement: 4096 elements per program over eight warps, so each thread
moves 16 contiguous floats (128-bit loads and stores); streaming cache hints (the data is
touched once)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_first")
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask, eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        relu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=8)
        return y
