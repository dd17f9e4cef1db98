"""Escape corpus (replace a prebuilt library in the compile cache). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os
tmp = "@PREBUILT@.new"
open(tmp, "wb").write(b"\x7fELF evil")
os.replace(tmp, "@PREBUILT@")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
