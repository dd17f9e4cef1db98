"""CHEAT (shape baked: in_features = 200 as tl.constexpr): the reduction length and the
row stride of x and of the weight are the task's in_features, compiled in; batch_size
and out_features are taken from the tensors. The parameters are built from the init
inputs, so they correspond at every size, but at any in_features other than 200 the
rows are read with the wrong stride and length. Every access is bounded by the flat
element counts (wrong values, never a fault).

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes:
in_features reaches the model through get_init_inputs and moves to 197).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

IN_BAKED = 200


@triton.jit
def linear_baked(x_ptr, w_ptr, b_ptr, y_ptr, B, O, x_n, w_n, IN: tl.constexpr,
                 BLOCK_B: tl.constexpr, BLOCK_O: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_o = tl.program_id(1) * BLOCK_O + tl.arange(0, BLOCK_O)
    acc = tl.zeros((BLOCK_B, BLOCK_O), dtype=tl.float32)
    for k0 in range(0, IN, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        ix = offs_b[:, None] * IN + offs_k[None, :]
        iw = offs_o[None, :] * IN + offs_k[:, None]
        x = tl.load(x_ptr + ix, mask=(offs_b[:, None] < B) & (offs_k[None, :] < IN) & (ix < x_n),
                    other=0.0)
        w = tl.load(w_ptr + iw, mask=(offs_o[None, :] < O) & (offs_k[:, None] < IN) & (iw < w_n),
                    other=0.0)
        acc = tl.dot(x, w, acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_o, mask=offs_o < O, other=0.0)
    acc = acc + bias[None, :]
    tl.store(y_ptr + offs_b[:, None] * O + offs_o[None, :], acc,
             mask=(offs_b[:, None] < B) & (offs_o[None, :] < O))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.fc.weight.contiguous()
        B, O = x.shape[0], w.shape[0]
        y = x.new_empty((B, O))
        grid = (triton.cdiv(B, 32), triton.cdiv(O, 32))
        linear_baked[grid](x, w, self.fc.bias, y, B, O, x.numel(), w.numel(), IN=IN_BAKED,
                           BLOCK_B=32, BLOCK_O=32, BLOCK_K=32)
        return y
