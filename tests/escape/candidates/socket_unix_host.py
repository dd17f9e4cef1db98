"""Escape corpus (connect to a unix socket of the host). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import socket
s = socket.socket(socket.AF_UNIX)
s.connect("@SOCK@")
s.sendall(b"@MARKER@")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
