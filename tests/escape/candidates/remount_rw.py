"""Escape corpus (remount / read-write and unmount /usr). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
r1 = libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None)
e1 = ctypes.get_errno()
r2 = libc.umount2(b"/usr", 2)
if r1 == 0 or r2 == 0:
    open("/usr/@MARKER@", "w").write("x")
raise OSError(e1, "mount: " + os.strerror(e1))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
