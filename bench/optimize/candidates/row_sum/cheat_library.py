"""PLANTED CHEAT (library call): a decoy Triton kernel zeroes the output, then the
tensor method x.sum(dim=1) is copied into it. Expected: rejected (screen:
py.torch_compute)."""
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
        x = x.contiguous()
        n_rows = x.shape[0]
        y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        zero_kernel[(triton.cdiv(n_rows, 256),)](y, n_rows, BLOCK=256)
        y.copy_(x.sum(dim=1))
        return y
