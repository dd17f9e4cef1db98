"""CUDA ReLU whose host wrapper launches the kernel with a null output pointer.

Every thread stores through that pointer into unmapped memory, so the kernel fails
with "an illegal memory access was encountered" (cudaErrorIllegalAddress). The
pointer comes in as a kernel argument, so the compiler cannot see it is null.
The error is asynchronous: it surfaces at the next synchronising call, and the
CUDA context is unusable afterwards.
Expected: runtime_error on a GPU; not_run on a host without a GPU.
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
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), /* BUG: should be y.data_ptr<float>() */ nullptr, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(
    name="kz_example_relu_illegal_address",
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
