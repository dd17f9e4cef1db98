"""CHEAT (PyTorch op hidden from a static reader): the softmax is fetched with
getattr(torch, "soft" + "max"), so no torch.softmax / F.softmax call appears in the
source. A real Triton kernel is defined (and never launched) so "has a kernel"
checks pass.

Caught by the screen: py.torch_compute (the constant name is folded: torch.softmax).
At run time: none of the candidate's kernels runs (trace.no_candidate_kernel) and
PyTorch's softmax kernel carries the GPU time (trace.foreign_compute).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

_OP = getattr(torch, "soft" + "max")


@triton.jit
def softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _OP(x, 1)
