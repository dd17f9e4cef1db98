"""CHEAT (shape baked: M, K, N = 500, 300, 452 as tl.constexpr): the task's three sizes
are compiled into the kernel as its row strides, loop bound and masks, and the actual
shapes are ignored (only used to allocate the output). Exact on the task's 500 x 300 x
452; at any other size every row is read with the wrong stride. The flat element counts
bound every access, so it never touches memory out of bounds: wrong values, no fault.

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes: M,
K, N are module-level constants read by get_inputs; they move to 497, 297, 449).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M_BAKED, K_BAKED, N_BAKED = 500, 300, 452


@triton.jit
def matmul_baked(a_ptr, b_ptr, c_ptr, a_n, b_n, c_n, M: tl.constexpr, K: tl.constexpr,
                 N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        ia = offs_m[:, None] * K + offs_k[None, :]
        ib = offs_k[:, None] * N + offs_n[None, :]
        a = tl.load(a_ptr + ia, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K) & (ia < a_n),
                    other=0.0)
        b = tl.load(b_ptr + ib, mask=(offs_k[:, None] < K) & (offs_n[None, :] < N) & (ib < b_n),
                    other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    ic = offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptr + ic, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N) & (ic < c_n))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        c = a.new_empty((a.shape[0], b.shape[1]))
        grid = (triton.cdiv(M_BAKED, 64), triton.cdiv(N_BAKED, 64))
        matmul_baked[grid](a, b, c, a.numel(), b.numel(), c.numel(), M=M_BAKED, K=K_BAKED,
                           N=N_BAKED, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
        return c
