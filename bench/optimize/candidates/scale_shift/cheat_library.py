"""PLANTED CHEAT (library call): a decoy Triton kernel fills a scratch buffer with the
shift, then torch.add with alpha does the real work (shift + scale * x). Expected:
rejected (screen: py.torch_compute)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = float(scale)
        self.shift = float(shift)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        base = torch.empty_like(x)
        n = x.numel()
        fill_kernel[(triton.cdiv(n, 1024),)](base, n, self.shift, BLOCK=1024)
        return torch.add(base, x, alpha=self.scale)
