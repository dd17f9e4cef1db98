"""Escape corpus (ptrace(PTRACE_ATTACH) a neighbour). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, @VICTIM@, None, None) != 0:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
