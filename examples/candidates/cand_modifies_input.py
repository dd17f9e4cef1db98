"""Bad candidate for tasks/relu.py: the output is right, but the kernel also zeroes its input.

The Triton kernel stores relu(x) into y and then 0 into x, in place.
Expected: incorrect on a GPU and on a CPU host (Triton interpreter), with
inputs_modified = true in the failing trial.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_and_clobber_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)
    tl.store(x_ptr + offs, x * 0.0, mask=mask)  # BUG: writes to the input


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The task's input is contiguous, so the kernel writes to the caller's tensor itself.
        y = torch.empty_like(x)
        n = x.numel()
        relu_and_clobber_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
