"""Subtly WRONG row softmax: uses exp2 for speed but forgets the log2(e) factor, so it
computes a softmax of x * ln 2 (a different temperature). Expected: incorrect (trials:
tolerance)."""
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
    e = tl.exp2(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


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
