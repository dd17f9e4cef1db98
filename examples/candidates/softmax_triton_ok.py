"""Correct, numerically stable Triton row softmax: one program per row.

Each program loads its whole row (BLOCK = next power of two >= the row length),
subtracts the row max before exp, and divides by the row sum.
Expected: correct on a GPU (and timed); correct on a CPU host (Triton interpreter).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)  # masked lanes: exp(-inf) = 0
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * row_stride + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        BLOCK = triton.next_power_of_2(n_cols)
        softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=BLOCK, num_warps=8)
        return y
