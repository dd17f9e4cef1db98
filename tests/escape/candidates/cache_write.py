"""Escape corpus (write into the compile cache). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
open("@CACHE@/poison-@MARKER@.txt", "w").write("x")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
