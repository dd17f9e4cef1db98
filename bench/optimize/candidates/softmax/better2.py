"""Row softmax, second improvement: one pass, the whole row held in registers (BLOCK = the
row length rounded up to a power of two), eight warps per row; the input is read once
and the output written once, exp2 with the log2(e) factor folded in, one reciprocal per
row."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    z = (x - tl.max(x, axis=0)) * 1.4426950408889634
    e = tl.exp2(z)
    inv = 1.0 / tl.sum(e, axis=0)
    tl.store(y_ptr + row * row_stride + cols, e * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        BLOCK = triton.next_power_of_2(n_cols)
        row_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=BLOCK, num_warps=8)
        return y
