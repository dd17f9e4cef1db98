import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(16, 8, batch_first=True)

    def forward(self, x):
        out, h = self.rnn(x)
        return out


def get_inputs():
    return [torch.randn(4, 12, 16)]


def get_init_inputs():
    return []
