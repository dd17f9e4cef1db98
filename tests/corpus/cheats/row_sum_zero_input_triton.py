"""CHEAT (modifying inputs in place): the kernel sums each row correctly and then
zeroes it. Against a harness that runs the reference after the candidate on the
same, uncloned input tensor, the reference then sums zeros, and a candidate that
returns zeros would match; and the next caller sees destroyed inputs.

The verifier clones inputs per model and compares them after the call: expected
incorrect ("candidate modified input 0", caught by correctness).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_and_zero(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        mask = offs < cols
        acc += tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
        tl.store(x_ptr + row * cols + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=mask)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        y = x.new_empty((rows,))
        row_sum_and_zero[(rows,)](x, y, cols, BLOCK=1024)
        return y
