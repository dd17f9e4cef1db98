import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(64)
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return self.fc(self.norm(x))


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
