"""Escape corpus (fill the disk). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os
written = 0
chunk = b"\0" * (1 << 20)
try:
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "fill.bin"), "wb") as f:
        while written < (64 << 30):
            f.write(chunk)
            written += len(chunk)
except OSError as e:
    raise RuntimeError(f"disk full after {written >> 20} MiB: {e}")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
