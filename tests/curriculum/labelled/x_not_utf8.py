import torch
# café in latin-1
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
