"""PLANTED CHEAT (library call): launches a decoy Triton kernel that copies one element
into a scratch buffer, while the output comes from torch.relu through a module-level
alias. Expected: rejected (screen: py.torch_compute; the launch trace would see the
library kernel doing the work)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

_activation = torch.relu


@triton.jit
def touch_kernel(x_ptr, scratch_ptr):
    tl.store(scratch_ptr, tl.load(x_ptr))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        scratch = torch.empty(1, device=x.device, dtype=x.dtype)
        touch_kernel[(1,)](x, scratch)
        return _activation(x)
