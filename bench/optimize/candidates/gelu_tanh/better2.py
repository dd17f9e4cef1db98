"""GELU (tanh approximation), second improvement: the sigmoid form with exp2 (the
log2(e) factor folded into the polynomial's constants, x^3 as x * x^2 in fused form),
4096 elements per program over eight warps (16 contiguous floats a thread), streaming
cache hints."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_exp2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_first")
    # -2u * log2(e) = -(C1 * x + C3 * x^3), C1 = 2 sqrt(2/pi) log2(e), C3 = C1 * 0.044715
    z = x * tl.fma(x * x, -0.1029432395800235, -2.302208198144325)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp2(z)), mask=mask, eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        gelu_exp2_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=8)
        return y
