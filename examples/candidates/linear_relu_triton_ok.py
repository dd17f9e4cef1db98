"""Correct Triton Linear + ReLU with its own parameters, named and ordered unlike nn.Linear.

The reference has linear.weight (out x in) then linear.bias (out); this candidate
declares self.b (out) first and self.w (out x in) second. The verifier matches them
by shape and copies the reference's values in before comparing.
The kernel is a plain fp32 multiply-accumulate: one program per (row of x, block of
output features), reducing over blocks of K with tl.sum, no tl.dot (no TF32), so it
matches nn.Linear to ~1e-6 on the GPU and under the interpreter alike.
Expected: correct on a GPU (and timed); correct on a CPU host (Triton interpreter).
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, K,
                       stride_xm, stride_wn, stride_ym,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    m = tl.program_id(0)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask_k = offs_k < K
        x = tl.load(x_ptr + m * stride_xm + offs_k, mask=mask_k, other=0.0)
        w = tl.load(w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :],
                    mask=mask_n[:, None] & mask_k[None, :], other=0.0)
        acc += tl.sum(w * x[None, :], axis=1)
    acc += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)
    tl.store(y_ptr + m * stride_ym + offs_n, tl.maximum(acc, 0.0), mask=mask_n)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        self.b = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        self.w = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.w.contiguous()
        b = self.b.contiguous()
        M, K = x.shape
        N = w.shape[0]
        y = x.new_empty((M, N))
        BLOCK_N, BLOCK_K = 32, 64
        grid = (M, triton.cdiv(N, BLOCK_N))
        linear_relu_kernel[grid](x, w, b, y, N, K, x.stride(0), w.stride(0), y.stride(0),
                                 BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
        return y
