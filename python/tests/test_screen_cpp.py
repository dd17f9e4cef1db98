"""Static screen: the C++/CUDA sources passed to load_inline are found statically
(literals, constants, concatenation, f-strings, joins) and screened with comments and
strings blanked; findings carry the candidate file's line."""

import textwrap

import pytest

from kz_worker.screen import screen_source
from kz_worker.screen.cpp_text import strip_code

KERNEL = "__global__ void kern(float* y) { y[threadIdx.x] = 0.f; }\n"


def candidate(cuda_body, cpp="torch::Tensor f(torch::Tensor x);", extra=""):
    """A CUDA candidate whose cuda_sources are KERNEL followed by `cuda_body`."""
    return (
        "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n"
        f'cuda_src = r"""\n{KERNEL}{textwrap.dedent(cuda_body)}"""\n\n'
        f"ext = load_inline(name='e', cpp_sources={cpp!r}, cuda_sources=cuda_src, "
        f"functions=['f']{extra})\n\n\nclass ModelNew(nn.Module):\n"
        "    def forward(self, x):\n        return ext.f(x)\n")


def findings(src, rule=None, policy="strict"):
    result = screen_source(src, "cuda", policy)
    return [f for f in result["findings"] if rule is None or f["rule"] == rule]


def line_of(src, text):
    return next(i for i, l in enumerate(src.splitlines(), 1) if text in l)


CHEATS = {
    "torch::matmul": ("cpp.aten_compute", "auto h = torch::matmul(a, a);"),
    "at::mm": ("cpp.aten_compute", "auto y = at::mm(a, b);"),
    "method mm": ("cpp.aten_compute", "auto y = a.mm(b);"),
    "arrow method": ("cpp.aten_compute", "auto y = p->softmax(1);"),
    "torch::relu": ("cpp.aten_compute", "return torch::relu(x);"),
    "at::native": ("cpp.aten_compute", "at::native::add_out(y, a, b);"),
    "nn functional": ("cpp.aten_compute", "return torch::nn::functional::gelu(x);"),
    "templated": ("cpp.aten_compute", "return at::sum<float>(x);"),
    "dispatcher": ("cpp.aten_compute",
                   'auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::mm", "");'),
    "in-place method": ("cpp.aten_compute", "x.add_(1);"),
    "namespace alias": ("cpp.aten_compute", "namespace G = torch::nn::functional; G::gelu(x);"),
    "using namespace": ("cpp.aten_compute", "using namespace at; auto y = mm(a, b);"),
    "operator reference": ("cpp.aten_compute", "auto f = &at::mm;"),
    "macro reference": ("cpp.aten_compute", "#define MM at::matmul"),
    "cublas header": ("cpp.vendor_library", "#include <cublas_v2.h>"),
    "cublas quoted header": ("cpp.vendor_library", '#include "cublasLt.h"'),
    "cudnn call": ("cpp.vendor_library", "cudnnConvolutionForward(h, 0, 0, 0, 0, 0);"),
    "cublas call": ("cpp.vendor_library", "cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1);"),
    "aten blas": ("cpp.vendor_library", "at::cuda::blas::gemm<float>('n', 'n', 1, 1, 1);"),
    "blas handle": ("cpp.vendor_library", "auto h = at::cuda::getCurrentCUDABlasHandle();"),
    "cufft": ("cpp.vendor_library", "#include <cufft.h>"),
    "nccl": ("cpp.vendor_library", "ncclAllReduce(a, b, 1, ncclFloat, ncclSum, c, s);"),
    "dlopen": ("cpp.vendor_library", 'void* h = dlopen("libcublas.so", RTLD_NOW);'),
    "stream create": ("cpp.extra_stream", "cudaStream_t s; cudaStreamCreate(&s);"),
    "per-thread stream": ("cpp.extra_stream", "kern<<<1, 1, 0, cudaStreamPerThread>>>(p);"),
    "graph": ("cpp.extra_stream", "cudaGraphLaunch(g, 0);"),
    "stream pool": ("cpp.extra_stream", "auto s = at::cuda::getStreamFromPool();"),
    "std::thread": ("cpp.host_thread", "std::thread t([] {}); t.join();"),
    "std::async": ("cpp.host_thread", "auto f = std::async(std::launch::async, [] {});"),
    "pthread": ("cpp.host_thread", "pthread_create(&t, nullptr, run, nullptr);"),
    "omp": ("cpp.host_thread", "#pragma omp parallel for\nfor (int i = 0; i < 4; ++i) {}"),
    "fork": ("cpp.host_thread", "int pid = fork();"),
    "system": ("cpp.host_thread", 'system("true");'),
}


@pytest.mark.parametrize("rule,body", CHEATS.values(), ids=CHEATS.keys())
def test_each_cpp_rule_catches_its_cheat(rule, body):
    src = candidate("void g(torch::Tensor a, torch::Tensor b, torch::Tensor x, torch::Tensor y) {\n"
                    + body + "\n}\n")
    got = findings(src, rule)
    assert got, findings(src)
    assert got[0]["severity"] == ("warn" if rule == "cpp.extra_stream" else "reject")
    assert got[0]["line"] == line_of(src, body.splitlines()[0])


def test_compute_and_vendor_rules_warn_under_kernelbench():
    src = candidate("auto y = torch::matmul(a, a);\n#include <cublas_v2.h>\nstd::thread t;\n")
    got = {f["rule"]: f["severity"] for f in findings(src, policy="kernelbench")}
    assert got == {"cpp.aten_compute": "warn", "cpp.vendor_library": "warn",
                   "cpp.host_thread": "reject"}


ALLOWED = [
    "auto y = torch::empty_like(x); auto z = torch::zeros({4}, x.options());",
    "auto e = at::empty({n}, x.options().dtype(torch::kFloat32));",
    "TORCH_CHECK(x.is_cuda() && x.dim() == 2, \"x must be 2-D\"); x = x.contiguous();",
    "int64_t n = x.numel() * x.size(0) + x.stride(0); auto s = x.sizes();",
    "float* p = x.data_ptr<float>(); auto v = x.view({-1}).reshape({2, -1});",
    "kern<<<1, 256, 0, at::cuda::getCurrentCUDAStream()>>>(p);",
    "auto s = c10::cuda::getCurrentCUDAStream(); at::cuda::OptionalCUDAGuard g(device_of(x));",
    "AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), \"k\", ([&] { kern<<<1, 1>>>(p); }));",
    "float m = fmaxf(a, b); float big = std::numeric_limits<float>::max(); int k = std::max(1, 2);",
    "// torch::matmul(a, b) cublasSgemm std::thread\n/* at::mm(a, b) */",
    'printf("torch::matmul at::mm cublasSgemm std::thread %d\\n", 1);',
    "bool any = tile.any(v > 0); float s = BlockReduce(tmp).Sum(v);",
    "auto t = x.index({torch::indexing::Slice(0, 4)}); x.copy_(t); auto h = x.to(torch::kHalf);",
    "struct S { void fork_like(); }; s.fork(); obj->system(1); my::fork();",
    "using namespace at; float m = max(a, b); float e = exp(x); float s = sqrtf(y);",
    "at::ScalarType t = at::kFloat; torch::Dtype d = torch::kFloat32;",
    "#include <torch/extension.h>\n#include <cuda_runtime.h>\n#include <c10/cuda/CUDAStream.h>",
]


@pytest.mark.parametrize("body", ALLOWED)
def test_allowed_extension_code(body):
    assert findings(candidate(body)) == []


def test_comments_and_literals_are_blanked_keeping_offsets():
    src = 'a // torch::mm(x)\nb /* at::mm\n */ "at::mm \\" q" \'\\\'\' R"d(at::mm\n)d" c\n'
    code, no_comments = strip_code(src)
    assert len(code) == len(no_comments) == len(src)
    assert code.count("\n") == src.count("\n")
    assert "mm" not in code
    assert code.split() == ["a", "b", '"', '"', "'", "'", 'R"', '"', "c"]
    assert 'at::mm \\" q' in no_comments and "torch::mm" not in no_comments


def test_no_global_function_is_gen_no_kernel():
    src = candidate("").replace(KERNEL, "void host_only() {}\n")
    got = findings(src)
    assert [(f["rule"], f["severity"], f["line"]) for f in got] == \
        [("gen.no_kernel", "reject", line_of(src, "ext = load_inline"))]


def test_cuda_candidate_without_load_inline_is_gen_no_kernel():
    src = ("import torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
           "    def forward(self, x):\n        return x\n")
    got = findings(src)
    assert [f["rule"] for f in got] == ["gen.no_kernel"]


SOURCE_FORMS = {
    "concatenation": ("HEAD = '#include <torch/extension.h>\\n'\n"
                      "BODY = '''\n__global__ void k2() {}\nvoid h() { torch::relu(x); }\n'''\n"
                      "SRC = HEAD + BODY", "SRC"),
    "augmented": ("SRC = ''\nSRC += '''\n__global__ void k2() {}\n"
                  "void h() { torch::relu(x); }\n'''", "SRC"),
    "f-string": ("N = 256\nSRC = f'''\n__global__ void k2() {{ int n = {N}; }}\n"
                 "void h() {{ torch::relu(x); }}\n'''", "SRC"),
    "join": ("A = '__global__ void k2() {}'\nB = 'void h() { torch::relu(x); }'\n"
             "SRC = '\\n'.join([A, B])", "SRC"),
    "list": ("A = '__global__ void k2() {}'\nB = 'void h() { torch::relu(x); }'", "[A, B]"),
    "dedent": ("import textwrap\nSRC = textwrap.dedent('''\n    __global__ void k2() {}\n"
               "    void h() { torch::relu(x); }\n''')", "SRC"),
    "format": ("T = '''\n__global__ void k2() {{ {body} }}\nvoid h() {{ torch::relu(x); }}\n'''\n"
               "SRC = T.format(body='return;')", "SRC"),
}


@pytest.mark.parametrize("prelude,arg", SOURCE_FORMS.values(), ids=SOURCE_FORMS.keys())
def test_sources_are_resolved_statically(prelude, arg):
    src = ("import torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
           f"{prelude}\next = load_inline('e', '', {arg}, functions=['h'])\n\n"
           "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.h(x)\n")
    result = screen_source(src, "cuda", "strict")
    assert [f["rule"] for f in result["findings"]] == ["cpp.aten_compute"], result
    assert result["notes"] == []
    if arg == "SRC" and "join" not in prelude and "f'''" not in prelude:
        assert result["findings"][0]["line"] == line_of(src, "torch::relu")


def test_sources_inside_a_function_and_keywords():
    src = textwrap.dedent('''
        import torch.nn as nn
        from torch.utils import cpp_extension

        CPP = "torch::Tensor f(torch::Tensor x);"

        def build():
            cuda = """
        __global__ void k() {}
        torch::Tensor f(torch::Tensor x) { return at::exp(x); }
        """
            return cpp_extension.load_inline(name="e", cpp_sources=[CPP], cuda_sources=[cuda],
                                             functions=["f"], extra_ldflags=["-lcudnn"])

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.ext = build()

            def forward(self, x):
                return self.ext.f(x)
        ''')
    got = {(f["rule"], f["line"]) for f in findings(src)}
    assert got == {("cpp.aten_compute", line_of(src, "at::exp")),
                   ("cpp.vendor_library", line_of(src, "return cpp_extension.load_inline"))}


def test_unknown_sources_are_a_note_not_a_failure():
    src = textwrap.dedent('''
        import torch.nn as nn
        from torch.utils.cpp_extension import load_inline

        def make_source():
            return "__global__ void k() {}"

        ext = load_inline(name="e", cpp_sources="", cuda_sources=make_source(), functions=["f"])

        class ModelNew(nn.Module):
            def forward(self, x):
                return ext.f(x)
        ''')
    result = screen_source(src, "cuda", "strict")
    assert result["verdict"] == "pass" and result["findings"] == []
    assert [n["line"] for n in result["notes"]] == [line_of(src, "ext = load_inline")]
    assert "sources not statically known" in result["notes"][0]["message"]


def test_partly_known_sources_are_still_screened():
    src = textwrap.dedent('''
        import torch.nn as nn
        from torch.utils.cpp_extension import load_inline
        import os

        SRC = "void h() { torch::relu(x); }" + os.environ.get("EXTRA", "")
        ext = load_inline(name="e", cpp_sources="", cuda_sources=[SRC], functions=["h"])

        class ModelNew(nn.Module):
            def forward(self, x):
                return ext.h(x)
        ''')
    result = screen_source(src, "cuda", "strict")
    # The known part is screened; the unknown part could hold the kernel: no gen.no_kernel.
    assert [f["rule"] for f in result["findings"]] == ["cpp.aten_compute"]
    assert result["notes"]
    src2 = src.replace('SRC = "void h() { torch::relu(x); }" + os.environ.get("EXTRA", "")',
                       'SRC = f"void h() {{ torch::relu(x); }} {os.sep}"')
    result2 = screen_source(src2, "cuda", "strict")
    assert [f["rule"] for f in result2["findings"]] == ["cpp.aten_compute"]
    assert result2["notes"]
