"""cusplit: where each top-level declaration of cuda.cu goes, the launch rewrite, the
#line mapping, and the constructs that must refuse to split (pure text; the real
compile of a split build is in tests/unit/compile: the C++ build driver calls op `cusplit`)."""

import pytest

from kz_worker import cusplit

PREFIX = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"

SOURCE = PREFIX + r'''
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#define CHECK(x) TORCH_CHECK(x.is_cuda(), #x " must be CUDA")  // brace in a comment: {
constexpr int BLOCK = 256;
struct Pair { float a, b; };
__constant__ float scale[4];
__device__ __forceinline__ float twice(float v) { return 2.0f * v; }
namespace kzk {
__global__ void __launch_bounds__(256) fill(float* __restrict__ y, Pair p, int n) {
    const char* s = "}";  // braces inside literals are not structure
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = twice(p.a) + scale[0];
}
}  // namespace kzk
void launch_fill(float* y, int n, cudaStream_t st) {
    kzk::fill<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, st>>>(y, Pair{1.f, 2.f}, n);
}
static cudaStream_t side = nullptr;
torch::Tensor run(torch::Tensor x) {
    CHECK(x);
    kzk::fill<<<dim3(1), dim3(BLOCK)>>>(x.data_ptr<float>(), Pair{0.f, 0.f}, (int)x.numel());
    launch_fill(x.data_ptr<float>(), (int)x.numel(), c10::cuda::getCurrentCUDAStream());
    return x;
}
'''


def chunks(text):
    """{cuda.cu line: text of the item} for each `#line N "cuda.cu"` block."""
    out = {}
    for block in text.split('#line ')[1:]:
        head, _, body = block.partition("\n")
        out[int(head.split()[0])] = body.strip()
    return out


def test_split_places_each_declaration():
    s = cusplit.split(SOURCE)
    assert s.kernels == ["fill"]
    dev, host = chunks(s.device), chunks(s.host)
    assert not any(k in s.device for k in ("torch/", "c10/", "torch::")), "device part is torch-free"
    assert "__global__ void __launch_bounds__(256) fill" in s.device
    assert "__device__ __forceinline__ float twice" in s.device and "twice" not in s.host
    assert "__constant__ float scale[4];" in s.device and "scale" not in s.host
    assert "static cudaStream_t side" in s.host and "cudaStream_t side" not in s.device  # host state, once
    assert "torch::Tensor run" in s.host and "run(" not in s.device
    for shared in ("constexpr int BLOCK = 256;", "struct Pair { float a, b; };", "#define CHECK"):
        assert shared in s.device and shared in s.host
    # A plain host function is defined once (device part) and declared in the host part.
    assert "void launch_fill(float* y, int n, cudaStream_t st) {" in s.device
    assert "void launch_fill(float* y, int n, cudaStream_t st);" in s.host
    # The kernel becomes a host prototype inside its namespace.
    assert "namespace kzk {" in s.host and "void fill(float* __restrict__ y, Pair p, int n);" in s.host
    assert 5 not in dev and host[5] == "#include <torch/extension.h>"


def test_line_directives_keep_cuda_cu_numbering():
    s = cusplit.split(SOURCE)
    lines = SOURCE.split("\n")
    for part in (s.device, s.host):
        for line, text in chunks(part).items():
            first = text.split("\n")[0].strip()
            if first and not first.startswith(("namespace", "}", "void fill(", "void launch_fill(float* y, int n, cudaStream_t st);")):
                assert lines[line - 1].strip().startswith(first[:20]), (line, first)


def test_launches_become_push_configuration_and_stub_calls():
    host = cusplit.split(SOURCE).host
    assert "<<<" not in host
    assert "(__cudaPushCallConfiguration(dim3(1), dim3(BLOCK))) ? (void)0 : kzk::fill(x.data_ptr<float>()" in host
    assert "extern \"C\" unsigned __cudaPushCallConfiguration" in host


def test_template_arguments_of_a_launched_kernel_are_kept():
    text = "void f() { ns::k<float, 4> <<<g, b, smem, s>>>(p); }"
    out = cusplit._launch_rewrite(text, cusplit._blank(text))
    assert out == "void f() { (__cudaPushCallConfiguration(g, b, smem, s)) ? (void)0 : ns::k<float, 4> (p); }"


def test_literals_and_comments_are_blanked_but_keep_length():
    src = 'a = "x{y}"; // }\nb = R"d(})d"; c = \'}\'; /* { */ d = 1\'000;'
    blank = cusplit._blank(src)
    assert len(blank) == len(src) and "{" not in blank and "}" not in blank
    assert "1'000" not in src or "d = 1" in blank


WRAP = "torch::Tensor f(torch::Tensor x) {{ float* p = x.data_ptr<float>(); {} return x; }}\n"


TEMPLATE_SOURCE = PREFIX + (
    "#define BLOCK 256\n"
    "template <int N, typename T = float>\n"
    "__global__ void __launch_bounds__(N) scale(T* __restrict__ y, const T* x, int n) {\n"
    "  int i = blockIdx.x * N + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }\n"
    + WRAP.format("dim3 g(1); cudaStream_t s = 0; scale<BLOCK><<<g, BLOCK, 0, s>>>(p, p, 4); "
                  "scale<BLOCK, float><<<1, 1>>>(p, p, 4); "
                  "scale<128, double><<<1, 1>>>((double*)p, (double*)p, 2);"))


def test_kernel_templates_launch_through_external_launchers():
    s = cusplit.split(TEMPLATE_SOURCE)
    assert s.kernels == ["scale"]
    launcher0 = ("void kz_tl_0(KzLaunch kz_l, float* __restrict__ y, const float* x, int n) "
                 "{ scale<BLOCK><<<kz_l.g, kz_l.b, kz_l.s, kz_l.st>>>(y, x, n); }")
    assert launcher0 in s.device
    assert "void kz_tl_2(KzLaunch kz_l, double* __restrict__ y, const double* x, int n)" in s.device
    assert "kz_tl_0(KzLaunch(g, BLOCK, 0, s), p, p, 4);" in s.host
    assert "kz_tl_1(KzLaunch(1, 1), p, p, 4);" in s.host
    assert s.host.count("void kz_tl_") == 3 and "<<<" not in s.host
    assert s.host.index("void kz_tl_0(") < s.host.index("torch::Tensor f("), "prototypes before use"


@pytest.mark.parametrize("source, reason", [
    ("template <typename T> __global__ void k(T* y) {}\n" + WRAP.format("k<<<1, 1>>>(p);"),
     "kernel template k launched with deduced arguments"),
    ("template <typename T> __global__ void k(T* y) {}\n" + WRAP.format("k<scalar_t><<<1, 1>>>(p);"),
     "kernel template k<scalar_t> depends on host names: scalar_t"),
    ("__global__ void k(at::Half* y) {}", "kernel uses torch/ATen types"),
    ("__global__ void k() {}\n__device__ c10::Half h(float v) { return v; }", "device code uses torch/ATen types"),
    ("__global__ void k() {}\nint counter = 0;", "mutable global variable with external linkage"),
    ("__global__ void k() {}\nstatic int once() { static int n = 0; return ++n; }", "once has static locals and would be duplicated"),
    ("__global__ void k() {}\nstruct S { void f(); };\nvoid S::f() {}", "out-of-class definition S::f"),
    ("static __global__ void k() {}", "kernel k is static or qualified"),
    ("void host_only() {}", "no __global__ kernel"),
    ("__global__ void k() {", "source ends inside a declaration"),
])
def test_unsplittable_constructs_refuse_with_a_reason(source, reason):
    with pytest.raises(cusplit.Unsplittable) as exc:
        cusplit.split(PREFIX + source)
    assert str(exc.value) == reason


def test_half_headers_only_for_sources_naming_their_types_or_intrinsics():
    plain = cusplit.split(PREFIX + "__global__ void k(float* y) { y[0] = 1.f; }\n").device
    assert "cuda_fp16.h" not in plain and "cuda_bf16.h" not in plain and "cuda_runtime.h" in plain
    for body in ("__half* y", "__nv_bfloat16* y", "float* y) { y[0] = __hmul(a, b); } void x(float* y"):
        dev = cusplit.split(PREFIX + f"__global__ void k({body}) {{}}\n").device
        assert cusplit.HALF_PRELUDE in dev, body
