"""CUDA ReLU whose kernel never finishes: every thread waits for a flag that nobody sets.

The flag is a zeroed int in global memory, read through a volatile pointer, so the
compiler must re-load it on every iteration and cannot delete the loop (a spin on a
volatile *local* variable is not enough: nvcc removed that one). The launch returns
at once; the process then blocks forever in the first call that waits for the GPU.
Expected: timeout on a GPU (the process group is killed); not_run on a host
without a GPU.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                            const int* flag) {
    while (*(const volatile int*)flag == 0) {  // BUG: nothing ever sets the flag
        __nanosleep(1000);
    }
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    auto flag = torch::zeros({1}, x.options().dtype(torch::kInt32));
    int64_t n = x.numel();
    relu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n, flag.data_ptr<int>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(
    name="kz_example_relu_hang",
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
