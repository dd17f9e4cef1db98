"""Escape corpus (kill(-1, SIGKILL): every process it may signal). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os, signal
os.kill(-1, signal.SIGKILL)
raise RuntimeError("blocked: kill(-1) reached only this sandbox")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
