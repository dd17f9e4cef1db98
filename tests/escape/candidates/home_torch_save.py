"""Escape corpus (write to the verifier's home (torch.save)). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
torch.save(torch.zeros(3), "@HOME@/probe.pt")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
