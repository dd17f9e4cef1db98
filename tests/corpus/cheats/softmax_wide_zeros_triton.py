"""CHEAT (degenerate output on a near-zero reference): the reference softmax values
are all ~1.5e-5, below atol = 1e-4, so an all-zero output passes an element-wise
allclose (KernelBench's check). The kernel just writes zeros.

Expected: incorrect (correctness: relative L2 error 1.0 > rel_l2 = 1e-4).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def zero_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = y.numel()
        zero_kernel[(triton.cdiv(n, 4096),)](y, n, BLOCK=4096)
        return y
