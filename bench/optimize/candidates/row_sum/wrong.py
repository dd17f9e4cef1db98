"""Subtly WRONG row sum: the chunk loop starts at BLOCK instead of 0 (an off-by-one in
the chunk index), so each row's first 512 elements are never added. Expected: incorrect
(trials: tolerance)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_vec_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(BLOCK, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * row_stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        row_sum_vec_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=512, num_warps=4)
        return y
