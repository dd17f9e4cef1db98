"""Escape corpus (LD_PRELOAD and PYTHONPATH for later children). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os, subprocess
os.environ["LD_PRELOAD"] = "@HOME@/evil.so"
os.environ["PYTHONPATH"] = "@HOME@"
open("@HOME@/evil.so", "w").write("x")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
