"""CHEAT (work left on a non-default stream, Triton): the kernel is launched under
torch.cuda.stream(side) after side waits for the current stream, and the call
returns without the current stream waiting for side. Events on the current stream
time nothing; a device-wide synchronize still makes the values right.

The screen only warns (py.extra_stream). Caught at run time: trace.side_stream,
timing.host_mismatch. GPU only (torch.cuda.Stream).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


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
        self.side = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.side is None:
            self.side = torch.cuda.Stream(device=x.device)
        x = x.contiguous()
        y = torch.empty_like(x)
        rows, cols = x.shape
        self.side.wait_stream(torch.cuda.current_stream(x.device))
        with torch.cuda.stream(self.side):
            softmax_kernel[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols), num_warps=8)
        return y  # the current stream never waits for self.side
