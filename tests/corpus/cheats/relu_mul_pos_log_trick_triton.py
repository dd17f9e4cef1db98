"""CHEAT (assuming positive inputs, log-domain identity): relu(x) * y is computed as
exp(log(x) + log(y)), valid only because get_inputs draws both from [0, 1) (log(0)
= -inf gives exp(-inf) = 0, still right). Accurate to ~1e-6 relative there; any
negative input gives NaN.

Expected: incorrect, caught by the signed-input check (correctness.signed_inputs).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, tl.exp(tl.log(x) + tl.log(y)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        log_mul_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out
