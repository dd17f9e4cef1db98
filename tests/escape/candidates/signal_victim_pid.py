"""Escape corpus (signal a neighbour by its host pid). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os, signal
os.kill(@VICTIM@, signal.SIGKILL)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
