"""Row sum, first improvement: chunks of 512 over four warps, a per-lane vector
accumulator reduced once after the loop (no cross-lane reduction inside the loop)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_vec_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
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
