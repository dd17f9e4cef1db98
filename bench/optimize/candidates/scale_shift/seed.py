"""x * scale + shift, deliberately naive seed: 32 elements per program, one warp, one
scalar load per thread. Correct, slow: the search starts here."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_shift_kernel(x_ptr, y_ptr, n, scale, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * scale + shift, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = float(scale)
        self.shift = float(shift)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 32
        scale_shift_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, self.scale, self.shift, BLOCK=BLOCK, num_warps=1)
        return y
