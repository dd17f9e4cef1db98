"""CUDA ReLU with an off-by-one bound: the last column of every row is never written.

The output comes from torch::empty_like, so those 16 elements hold whatever the
allocator left there (stale values, zeros or garbage), not relu(x).
Expected: incorrect on a GPU; not_run on a host without a GPU.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

// One block per row.
__global__ void relu_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    for (int64_t c = threadIdx.x; c < cols - 1; c += blockDim.x) {  // BUG: should be c < cols
        yr[c] = fmaxf(xr[c], 0.0f);
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    int64_t cols = x.size(-1);
    int64_t rows = x.numel() / cols;
    relu_rows_kernel<<<(unsigned)rows, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(
    name="kz_example_relu_wrong",
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
