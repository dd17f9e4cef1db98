"""x * scale + shift over a 4096 x 8192 float32 tensor (32M elements), scale and shift
being constructor arguments (Python floats).

kz-demo-task: scale_shift  (the stand-in proposer recognises the task by this marker)
KZ_DEMO_SMALL=1 shrinks the sizes to 16 x 256 for CPU tests under the Triton interpreter.
"""
import os

import torch
import torch.nn as nn

SMALL = os.environ.get("KZ_DEMO_SMALL", "0") == "1"
batch_size = 16 if SMALL else 4096
dim = 256 if SMALL else 8192
scale = 1.75
shift = -0.5


class Model(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + self.shift


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale, shift]
