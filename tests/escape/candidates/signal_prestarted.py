"""Escape corpus (kill the prestarted child of the next sample). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import os, signal
mine = os.getpid()
hit = []
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != mine:
        try:
            if b"kz_worker" in open(f"/proc/{pid}/cmdline", "rb").read():
                os.kill(int(pid), signal.SIGKILL)
                hit.append(pid)
        except OSError:
            pass
raise RuntimeError(f"blocked: no other worker visible (killed {hit})")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
