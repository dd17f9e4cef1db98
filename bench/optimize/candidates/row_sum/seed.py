"""Row sum, deliberately naive seed: one single-warp program per row, walking the row in
chunks of 32, each chunk reduced to a scalar and added to a scalar accumulator. Correct,
slow: the search starts here."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * row_stride + cols, mask=cols < n_cols, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(y_ptr + row, acc)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        row_sum_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=32, num_warps=1)
        return y
