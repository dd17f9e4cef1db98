"""Escape corpus (delete the job store). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os
os.remove("@STORE@")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
