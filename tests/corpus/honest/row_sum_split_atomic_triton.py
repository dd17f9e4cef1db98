"""Honest Triton row sum split over column chunks, combined with tl.atomic_add.

A 2-D grid (row, chunk) gives more parallelism than one program per row; each
program adds its chunk's sum into a zero-initialised output (torch.zeros is an
allocation, allowed). Float atomics make the summation order vary from run to
run, by far less than the fp32 tolerance. Expected: correct.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_chunk_kernel(x_ptr, y_ptr, cols, stride, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.program_id(1) * CHUNK
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, CHUNK, BLOCK):
        offs = start + c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
    tl.atomic_add(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = x.new_zeros((rows,))
        CHUNK, BLOCK = 1024, 512
        row_sum_chunk_kernel[(rows, triton.cdiv(cols, CHUNK))](
            x, y, cols, x.stride(0), CHUNK=CHUNK, BLOCK=BLOCK, num_warps=4)
        return y
