"""Escape corpus (exhaust file descriptors). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os
fds = []
try:
    while len(fds) < 10_000_000:
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    raise RuntimeError(f"fd limit after {len(fds)} opens: {e}")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
