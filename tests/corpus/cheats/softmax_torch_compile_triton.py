"""CHEAT (torch.compile inside the candidate): forward runs torch.softmax through
torch.compile; Inductor writes and autotunes the Triton kernel, the candidate
writes none.

Caught by the screen: py.torch_compile (and py.torch_compute, gen.no_kernel). At run
time the trace shows Inductor-generated kernels only.
"""
import torch
import torch.nn as nn


def _softmax(x):
    return torch.softmax(x, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fn = torch.compile(_softmax, dynamic=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)
