"""Bad candidate for tasks/linear_relu.py: ModelNew() takes no constructor arguments.
The task's get_init_inputs() returns [in_features, out_features], so ModelNew(256, 128)
raises TypeError. Expected: compile_error on a GPU and on a CPU host (constructor rejects
the init inputs).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):  # BUG: should be __init__(self, in_features, out_features)
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
