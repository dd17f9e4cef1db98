import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __call__(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
