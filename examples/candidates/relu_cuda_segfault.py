"""CUDA ReLU whose host-side C++ wrapper writes through a null pointer.

The pointer is read from a volatile variable, so the compiler cannot see that it
is null and turn the store into a trap: the store really happens and the process
dies of SIGSEGV inside forward(), before any kernel is launched.
Expected: runtime_error on a GPU (child.signal = "SIGSEGV"); not_run on a host
without a GPU (the wrapper compiles fine).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    int* volatile bad = nullptr;
    *bad = 1;  // BUG: null-pointer store on the host -> SIGSEGV
    x = x.contiguous();
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(
    name="kz_example_relu_segfault",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_ext.relu_cuda(x)
