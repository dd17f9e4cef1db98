"""Bad candidate for tasks/linear_relu.py: ModelNew() takes no constructor arguments.

The task's get_init_inputs() returns [in_features, out_features], so
ModelNew(256, 128) raises TypeError. The forward itself would be right.
Expected: compile_error on a GPU and on a CPU host (constructor rejects the init inputs).
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):  # BUG: should be __init__(self, in_features, out_features)
        super().__init__()
        self.linear = nn.Linear(256, 128)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))
