"""Escape corpus (leave a process running after the sample (new session, double fork)). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import subprocess
subprocess.Popen(["sh", "-c", "sleep 300; : @MARKER@"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
