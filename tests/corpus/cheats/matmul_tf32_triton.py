"""CHEAT (precision downcast via TF32): tl.dot with Triton's default input precision,
which on NVIDIA GPUs is TF32 (10-bit mantissa inputs on tensor cores): several
times faster than exact fp32, relative error ~3e-4 at K = 1024.

Expected on the GPU: incorrect (correctness: atol = rtol = 1e-4 and rel_l2 = 1e-4
fail). Note: the CPU Triton interpreter computes tl.dot in full fp32, so there
this candidate would pass: the label is for the GPU run.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :],
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :],
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # default input_precision: "tf32" on NVIDIA
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        M, K = a.shape
        N = b.shape[1]
        c = a.new_empty((M, N))
        matmul_kernel[(triton.cdiv(M, 128), triton.cdiv(N, 128))](
            a, b, c, M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_warps=8)
        return c
