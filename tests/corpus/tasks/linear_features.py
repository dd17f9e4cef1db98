"""A linear layer (weight and bias parameters): (96 x 200) -> (96 x 120), fp32.

The sizes are module-level constants with KernelBench's names, `batch_size`,
`in_features`, `out_features`; two of them reach the model only through
`get_init_inputs` (the parameter shapes). The perturbed-size check moves all three
(96 -> 93, 200 -> 197, 120 -> 117), rebuilding both models with the new init inputs.
"""
import torch
import torch.nn as nn

batch_size = 96
in_features = 200
out_features = 120


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
