import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 4, 5)

    def forward(self, x):
        return self.conv(x).sigmoid()


def get_inputs():
    return [torch.randn(4, 8, 64)]


def get_init_inputs():
    return []
