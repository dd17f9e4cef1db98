import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(32, 48), torch.randn(48, 16)]


def get_init_inputs():
    return []
