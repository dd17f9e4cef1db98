"""CHEAT (no boundary masks): 64 x 64 x 32 tiles with unmasked loads and stores,
launched on floor(M / 64) x floor(N / 64) programs and looping over floor(K / 32)
steps. Exact for multiples of the tile sizes (1024 is one); for other sizes the last
rows and columns are never written and the last K / 32 remainder is never added.
Never touches memory out of bounds.

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, (K // BLOCK_K) * BLOCK_K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
        b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        M, K = a.shape
        N = b.shape[1]
        c = a.new_empty((M, N))
        if M >= 64 and N >= 64:
            matmul_kernel[(M // 64, N // 64)](a, b, c, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
        return c
