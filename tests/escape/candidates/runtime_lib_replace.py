"""Escape corpus (replace kz's prebuilt runtime library). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
open("@RUNTIME_LIB@", "r+b").write(b"\x00" * 16)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
