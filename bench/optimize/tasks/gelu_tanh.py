"""GELU, tanh approximation, over a 4096 x 4096 float32 tensor (16M elements).

kz-demo-task: gelu_tanh  (the stand-in proposer recognises the task by this marker)
KZ_DEMO_SMALL=1 shrinks the sizes to 16 x 256 for CPU tests under the Triton interpreter.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

SMALL = os.environ.get("KZ_DEMO_SMALL", "0") == "1"
batch_size = 16 if SMALL else 4096
dim = 256 if SMALL else 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
