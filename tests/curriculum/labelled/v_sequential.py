import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.LayerNorm(32))

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
