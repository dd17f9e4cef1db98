"""ReLU over a 4096 x 8192 float32 tensor (32M elements, 128 MiB in and out).

kz-demo-task: relu  (the stand-in proposer recognises the task by this marker)
KZ_DEMO_SMALL=1 shrinks the sizes to 16 x 256 for CPU tests under the Triton interpreter.
"""
import os

import torch
import torch.nn as nn

SMALL = os.environ.get("KZ_DEMO_SMALL", "0") == "1"
batch_size = 16 if SMALL else 4096
dim = 256 if SMALL else 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
