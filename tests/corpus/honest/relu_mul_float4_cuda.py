"""Honest CUDA relu(x) * y with float4 loads: correct for signed inputs too.

The task's get_inputs draws only non-negative values; this kernel still applies
fmaxf(x, 0), so it also passes the verifier's signed-input check. Misaligned
pointers or a tail of n % 4 elements go through the scalar kernel. Expected: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_mul_vec4(const float4* __restrict__ x, const float4* __restrict__ y,
                              float4* __restrict__ out, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x[i], b = y[i], r;
        r.x = fmaxf(a.x, 0.0f) * b.x; r.y = fmaxf(a.y, 0.0f) * b.y;
        r.z = fmaxf(a.z, 0.0f) * b.z; r.w = fmaxf(a.w, 0.0f) * b.w;
        out[i] = r;
    }
}

__global__ void relu_mul_scalar(const float* __restrict__ x, const float* __restrict__ y,
                                float* __restrict__ out, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fmaxf(x[i], 0.0f) * y[i];
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

torch::Tensor relu_mul_cuda(torch::Tensor x, torch::Tensor y) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.sizes() == y.sizes() &&
                y.scalar_type() == torch::kFloat32, "two float32 CUDA tensors of one shape");
    x = x.contiguous(); y = y.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    auto stream = c10::cuda::getCurrentCUDAStream();
    const float *xp = x.data_ptr<float>(), *yp = y.data_ptr<float>();
    float* op = out.data_ptr<float>();
    int64_t n4 = (aligned16(xp) && aligned16(yp) && aligned16(op)) ? n / 4 : 0;
    if (n4 > 0) {
        relu_mul_vec4<<<(unsigned)((n4 + 255) / 256), 256, 0, stream>>>(
            reinterpret_cast<const float4*>(xp), reinterpret_cast<const float4*>(yp),
            reinterpret_cast<float4*>(op), n4);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (n - 4 * n4 > 0) {
        relu_mul_scalar<<<(unsigned)((n - 4 * n4 + 255) / 256), 256, 0, stream>>>(xp, yp, op, 4 * n4, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}
"""

cpp_source = "torch::Tensor relu_mul_cuda(torch::Tensor x, torch::Tensor y);"

ext = load_inline(name="kz_corpus_relu_mul_float4_cuda", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["relu_mul_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return ext.relu_mul_cuda(x, y)
