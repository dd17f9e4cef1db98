"""Escape corpus (read another client's candidate). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
print(open("@OTHER@").read())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
