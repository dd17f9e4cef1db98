"""Escape corpus (read /etc/shadow). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
data = open("/etc/shadow").read()
if not data:
    raise RuntimeError("blocked: /etc/shadow is empty here")
print(data)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
