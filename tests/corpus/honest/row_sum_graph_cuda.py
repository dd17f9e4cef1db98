"""Honest CUDA row sum as a two-kernel CUDA graph, captured and launched in one call.

Kernel 1 sums SPLIT column chunks of every row into a scratch buffer, kernel 2 adds
the SPLIT partials of each row in order. Both launches are captured on a private
stream, instantiated, and the graph is launched on the current stream; graph and
stream are destroyed (CUDA frees them once the launch completes). Nothing is cached
between calls and all work is ordered on the current stream. Legitimate graph use
(screen: cpp.extra_stream is only a warning). Expected: correct.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256, SPLIT = 4;

__global__ void partial_sums(const float* __restrict__ x, float* __restrict__ part, int64_t cols) {
    __shared__ float warp_sums[THREADS / 32];
    const int64_t chunk = (cols + SPLIT - 1) / SPLIT;
    const int64_t begin = blockIdx.y * chunk, end = min(cols, begin + chunk);
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t c = begin + threadIdx.x; c < end; c += THREADS) s += xr[c];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < THREADS / 32; ++w) t += warp_sums[w];
        part[(int64_t)blockIdx.x * SPLIT + blockIdx.y] = t;
    }
}

__global__ void combine(const float* __restrict__ part, float* __restrict__ y, int64_t rows) {
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float t = 0.0f;
        for (int s = 0; s < SPLIT; ++s) t += part[r * SPLIT + s];
        y[r] = t;
    }
}

torch::Tensor row_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "2-D float32 CUDA");
    x = x.contiguous();
    const int64_t rows = x.size(0), cols = x.size(1);
    auto y = torch::empty({rows}, x.options());
    if (rows == 0) return y;
    auto part = torch::empty({rows, SPLIT}, x.options());  // allocated before capture
    cudaStream_t capture;
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    C10_CUDA_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
    partial_sums<<<dim3((unsigned)rows, SPLIT), THREADS, 0, capture>>>(x.data_ptr<float>(), part.data_ptr<float>(), cols);
    combine<<<(unsigned)((rows + 255) / 256), 256, 0, capture>>>(part.data_ptr<float>(), y.data_ptr<float>(), rows);
    C10_CUDA_CHECK(cudaStreamEndCapture(capture, &graph));
    C10_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    C10_CUDA_CHECK(cudaGraphLaunch(exec, c10::cuda::getCurrentCUDAStream()));
    C10_CUDA_CHECK(cudaGraphExecDestroy(exec));
    C10_CUDA_CHECK(cudaGraphDestroy(graph));
    C10_CUDA_CHECK(cudaStreamDestroy(capture));
    return y;
}
"""

cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor x);"

ext = load_inline(name="kz_corpus_row_sum_graph_cuda", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["row_sum_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.row_sum_cuda(x)
