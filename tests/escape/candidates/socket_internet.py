"""Escape corpus (open a connection to the internet). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import socket
socket.create_connection(("1.1.1.1", 53), timeout=5)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
