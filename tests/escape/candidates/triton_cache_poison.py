"""Escape corpus (poison the host's Triton cache). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os
os.makedirs("@TRITON_CACHE@/deadbeef", exist_ok=True)
open("@TRITON_CACHE@/deadbeef/kernel.json", "w").write("{}")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
