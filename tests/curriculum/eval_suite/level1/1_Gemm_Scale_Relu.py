import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A KernelBench-style evaluation task (written for kz's tests): a GEMM, a scale, a ReLU.
    """

    def __init__(self, in_features, out_features, scale):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: (batch_size, in_features)
        """
        x = self.linear(x)
        x = x * self.scale
        return torch.relu(x)


batch_size = 32
in_features = 64
out_features = 48
scale = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
