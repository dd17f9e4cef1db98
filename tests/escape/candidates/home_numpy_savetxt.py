"""Escape corpus (write to the verifier's home (numpy.savetxt)). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import numpy
numpy.savetxt("@HOME@/probe_numpy.txt", numpy.zeros(3))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
