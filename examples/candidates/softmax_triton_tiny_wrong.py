"""Wrong Triton softmax that writes 1/N to every element (a uniform distribution).

With the task's inputs every true output is within ~7e-5 of 1/N, so this passes
the elementwise check |out - ref| <= atol + rtol*|ref| (atol = rtol = 1e-4) but is
far off in relative L2 (~0.3 > 1e-4).
Expected: incorrect on a GPU and on a CPU host (Triton interpreter), caught by rel_l2.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def uniform_kernel(y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    y = tl.zeros([BLOCK], dtype=tl.float32) + 1.0 / n_cols  # BUG: ignores the input
    tl.store(y_ptr + row * row_stride + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        BLOCK = triton.next_power_of_2(n_cols)
        uniform_kernel[(n_rows,)](y, n_cols, y.stride(0), BLOCK=BLOCK, num_warps=8)
        return y
