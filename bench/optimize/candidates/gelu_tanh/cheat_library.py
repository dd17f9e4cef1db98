"""PLANTED CHEAT (library call): a decoy Triton kernel copies the input; the output comes
from the GELU looked up by a computed name (getattr(F, "ge" + "lu")). Expected: rejected
(screen: py.torch_compute resolves the computed name)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        staged = torch.empty_like(x)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](x, staged, n, BLOCK=1024)
        return getattr(F, "ge" + "lu")(staged, approximate="tanh")
