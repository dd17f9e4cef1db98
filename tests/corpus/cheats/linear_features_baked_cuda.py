"""CHEAT (shape baked: in_features = 200 as a compile-time constant): one thread per
output element, the dot product's length and the row stride of x and of the weight
fixed at the task's in_features (`constexpr int IN = 200`, loop fully unrolled).
batch_size and out_features come from the tensors, and the parameters are built from
the init inputs, so they correspond at every size; at any in_features other than 200
the rows are read with the wrong stride and length. Reads are bounded by the flat
element counts (wrong values, never a fault).

Expected: incorrect, caught by the perturbed-size check (correctness.perturbed_sizes:
in_features reaches the model through get_init_inputs and moves to 197).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int IN = 200;

__global__ void linear_in200(const float* __restrict__ x, const float* __restrict__ w,
                             const float* __restrict__ b, float* __restrict__ y, int64_t rows,
                             int64_t outs, int64_t x_n, int64_t w_n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * outs) return;
    int64_t r = i / outs, o = i % outs;
    float acc = b[o];
#pragma unroll 8
    for (int k = 0; k < IN; ++k) {
        int64_t ix = r * IN + k, iw = o * IN + k;
        acc += (ix < x_n ? x[ix] : 0.0f) * (iw < w_n ? w[iw] : 0.0f);
    }
    y[i] = acc;
}

torch::Tensor linear_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    x = x.contiguous();
    w = w.contiguous();
    auto y = torch::empty({x.size(0), w.size(0)}, x.options());
    int64_t total = y.numel();
    linear_in200<<<(unsigned)((total + 255) / 256), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),
        x.size(0), w.size(0), x.numel(), w.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kz_corpus_linear_features_baked_cuda",
                  cpp_sources="torch::Tensor linear_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=cuda_source, functions=["linear_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.linear_cuda(x, self.fc.weight, self.fc.bias)
