"""Row sum, second improvement: each program loads a tile of ROWS rows x the whole row
(the row length rounded up to a power of two) in one go and reduces along the columns;
eight warps, 16 floats a thread per row, streaming loads, no loop."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, row_stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    tile = tl.load(x_ptr + rows[:, None] * row_stride + cols[None, :], mask=mask, other=0.0,
                   eviction_policy="evict_first")
    tl.store(y_ptr + rows, tl.sum(tile, axis=1), mask=rows < n_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        ROWS = 2
        BLOCK = triton.next_power_of_2(n_cols)
        row_sum_tile_kernel[(triton.cdiv(n_rows, ROWS),)](x, y, n_rows, n_cols, x.stride(0),
                                                          ROWS=ROWS, BLOCK=BLOCK, num_warps=16)
        return y
