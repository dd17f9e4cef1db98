"""Escape corpus (write to the verifier's home, path hidden in base64). Placeholders @...@ are filled by run_escape.py."""
import torch
import torch.nn as nn
import base64, importlib
p = importlib.import_module("path" + "lib").Path(base64.b64decode("@HOME_B64@").decode())
getattr(p / "probe_b64.txt", "write_" + "text")("owned")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
