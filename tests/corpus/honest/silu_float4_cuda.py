"""Honest CUDA SiLU with vectorised float4 loads and stores, scalar tail.

The body runs on float4 (16-byte) loads when both pointers are 16-byte aligned;
the last n % 4 elements (or everything, if misaligned) go through a scalar kernel,
so any size works. One fused kernel against the reference's two. Expected: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }

__global__ void silu_vec4(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = x[i];
        v.x = silu(v.x); v.y = silu(v.y); v.z = silu(v.z); v.w = silu(v.w);
        y[i] = v;
    }
}

__global__ void silu_scalar(const float* __restrict__ x, float* __restrict__ y,
                            int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = silu(x[i]);
}

torch::Tensor silu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected float32 CUDA");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    auto stream = c10::cuda::getCurrentCUDAStream();
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    bool aligned = (reinterpret_cast<uintptr_t>(xp) % 16 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
    int64_t n4 = aligned ? n / 4 : 0;
    if (n4 > 0) {
        int blocks = (int)std::min<int64_t>((n4 + 255) / 256, 132 * 16);
        silu_vec4<<<blocks, 256, 0, stream>>>(reinterpret_cast<const float4*>(xp),
                                              reinterpret_cast<float4*>(yp), n4);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    int64_t rest = n - 4 * n4;
    if (rest > 0) {
        silu_scalar<<<(unsigned)((rest + 255) / 256), 256, 0, stream>>>(xp, yp, 4 * n4, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

cpp_source = "torch::Tensor silu_cuda(torch::Tensor x);"

ext = load_inline(name="kz_corpus_silu_float4_cuda", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["silu_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.silu_cuda(x)
