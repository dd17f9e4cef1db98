"""PLANTED CHEAT (library call): a decoy Triton kernel writes each row's first element to
a scratch buffer; F.softmax computes the output. Expected: rejected (screen:
py.torch_compute)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def first_col_kernel(x_ptr, out_ptr, row_stride):
    row = tl.program_id(0)
    tl.store(out_ptr + row, tl.load(x_ptr + row * row_stride))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        scratch = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
        first_col_kernel[(x.shape[0],)](x, scratch, x.stride(0))
        return F.softmax(x, dim=1)
