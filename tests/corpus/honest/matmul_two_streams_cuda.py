"""Honest CUDA matmul that splits the rows over two side streams and joins them.

The top and bottom halves of C are computed concurrently on two streams from
PyTorch's pool. Both streams first wait on an event recorded on the current stream
(so they see the inputs), and the current stream waits on an event from each
before the call returns: all work is ordered before anything later on the current
stream, so CUDA-event timing on that stream covers it. Legitimate multi-stream use
(screen: cpp.extra_stream is only a warning). Plain 32x32 shared-memory tiles,
fp32 FMA. Expected: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int TILE = 32;

__global__ void matmul_rows(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int row_begin, int row_end, int N, int K) {
    __shared__ float As[TILE][TILE + 1], Bs[TILE][TILE + 1];
    const int r = row_begin + blockIdx.y * TILE + threadIdx.y;
    const int c = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = (r < row_end && k0 + threadIdx.x < K) ? A[(int64_t)r * K + k0 + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && c < N) ? B[(int64_t)(k0 + threadIdx.y) * N + c] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (r < row_end && c < N) C[(int64_t)r * N + c] = acc;
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.scalar_type() == torch::kFloat32 &&
                b.scalar_type() == torch::kFloat32 && a.size(1) == b.size(0), "float32 CUDA, K matches");
    a = a.contiguous(); b = b.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    auto current = c10::cuda::getCurrentCUDAStream();
    cudaEvent_t ready;
    C10_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    C10_CUDA_CHECK(cudaEventRecord(ready, current));
    const int half = (M + 1) / 2;
    for (int part = 0; part < 2; ++part) {
        const int begin = part * half, end = part == 0 ? half : M;
        if (end <= begin) continue;
        auto side = c10::cuda::getStreamFromPool();
        C10_CUDA_CHECK(cudaStreamWaitEvent(side, ready, 0));
        dim3 grid((N + TILE - 1) / TILE, (end - begin + TILE - 1) / TILE);
        matmul_rows<<<grid, dim3(TILE, TILE), 0, side>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                          c.data_ptr<float>(), begin, end, N, K);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        cudaEvent_t done;
        C10_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        C10_CUDA_CHECK(cudaEventRecord(done, side));
        C10_CUDA_CHECK(cudaStreamWaitEvent(current, done, 0));  // join back before returning
        C10_CUDA_CHECK(cudaEventDestroy(done));
    }
    C10_CUDA_CHECK(cudaEventDestroy(ready));
    return c;
}
"""

cpp_source = "torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);"

ext = load_inline(name="kz_corpus_matmul_two_streams_cuda", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["matmul_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ext.matmul_cuda(a, b)
