"""Escape corpus (connect to a TCP server on the host's loopback). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import socket
socket.create_connection(("127.0.0.1", @PORT@), timeout=5).sendall(b"@MARKER@")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
