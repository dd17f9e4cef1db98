"""Softmax over the rows (dim=1) of an 8192 x 4096 float32 tensor (32M elements).

kz-demo-task: softmax  (the stand-in proposer recognises the task by this marker)
KZ_DEMO_SMALL=1 shrinks the sizes to 16 x 256 for CPU tests under the Triton interpreter.
"""
import os

import torch
import torch.nn as nn

SMALL = os.environ.get("KZ_DEMO_SMALL", "0") == "1"
rows = 16 if SMALL else 8192
cols = 256 if SMALL else 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
