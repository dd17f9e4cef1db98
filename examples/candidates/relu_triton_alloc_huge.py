"""Triton ReLU that also allocates a 10 TB scratch buffer on its device in forward, far
beyond the task's footprint (64 KiB of inputs).

Expected: runtime_error on a GPU and on a CPU host, the reason naming the allocation
(CUDA out of memory / the CPU allocator's refusal); only this sample's child is affected,
the next sample verifies as usual.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scratch = torch.empty(10**13, dtype=torch.uint8, device=x.device)
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        del scratch
        return y
