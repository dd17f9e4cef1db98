"""Row softmax, deliberately naive seed: one single-warp program per row, three passes
over the row in chunks of 32 (the max, the sum of exponentials, then the output), each
chunk reduced to a scalar. Correct (numerically stable), slow: the search starts here."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    row_max = -float("inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        row_max = tl.maximum(row_max, tl.max(x, axis=0))
    denom = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        denom += tl.sum(tl.exp(x - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf"))
        tl.store(y_row + cols, tl.exp(x - row_max) / denom, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=32, num_warps=1)
        return y
