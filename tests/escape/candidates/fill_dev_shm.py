"""Escape corpus (fill /dev/shm). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
written = 0
chunk = b"\0" * (1 << 20)
try:
    with open("/dev/shm/fill-@MARKER@", "wb") as f:
        while written < (64 << 30):
            f.write(chunk)
            written += len(chunk)
except OSError as e:
    raise RuntimeError(f"/dev/shm full after {written >> 20} MiB: {e}")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
