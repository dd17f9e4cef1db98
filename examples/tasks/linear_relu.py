"""Linear layer followed by ReLU: (32 x 256) @ (256 -> 128), with parameters.

Exercises constructor arguments (get_init_inputs) and parameter matching: the
reference's nn.Linear weight (128 x 256) and bias (128) are copied into the
candidate's parameters of the same shapes before the outputs are compared.
"""
import torch
import torch.nn as nn

batch_size = 32
in_features = 256
out_features = 128


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
