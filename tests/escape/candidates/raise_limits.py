"""Escape corpus (raise its own process and file limits). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import resource
resource.setrlimit(resource.RLIMIT_NPROC, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
