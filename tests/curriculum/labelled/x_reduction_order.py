import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        # The summation order changes with every call: (big + x) - big against (big - big) + x.
        self.calls += 1
        big = x * 1e6
        parts = [big, x, -big] if self.calls % 2 else [big, -big, x]
        out = parts[0]
        for part in parts[1:]:
            out = out + part
        return out


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
