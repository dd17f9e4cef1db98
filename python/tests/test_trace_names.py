"""The candidate's kernel names (kz_worker.trace.names), the fact the supervisor's launch-trace
judge matches trace records against (its rules are tested in tests/unit/verify/)."""

import types

from kz_worker.trace import names as trace_names


def test_cuda_kernel_names():
    source = """
template <int B> __global__ void __launch_bounds__(256) kern(float* x) {}
// __global__ void commented_out(float* x) {}
const char* s = "__global__ void in_a_string(";
__global__ void matmul_kernel(const float* A) {}
template <> __global__ void spec<float>(float*) {}
extern "C" __global__ void ext_k(int n) {}
static __global__
void split_line(int n) {}
"""
    assert trace_names.cuda_kernel_names([source]) == {"kern", "matmul_kernel", "spec",
                                                       "ext_k", "split_line"}
    raw = 'src = r"""__global__ void from_python_file(float* x) {}"""'
    assert trace_names.cuda_kernel_names([], [raw]) == {"from_python_file"}


def test_triton_kernel_names_from_source_and_module():
    source = """
import triton
@triton.autotune(configs=[], key=["n"])
@triton.jit
def tuned(x): pass
def factory():
    @triton.jit(do_not_specialize=["n"])
    def nested(x): pass
    return nested
@jit
def bare(x): pass
def plain(x): pass
"""
    JIT = type("JITFunction", (), {"__module__": "triton.runtime.jit"})
    jit_obj = JIT()
    jit_obj.fn = types.SimpleNamespace(__name__="from_module")
    module = types.SimpleNamespace(k=jit_obj, other=3, f=lambda: None)
    names = trace_names.triton_kernel_names(source, module)
    assert names == {"tuned", "nested", "bare", "from_module"}
    assert trace_names.triton_kernel_names("def broken(:") == set()
