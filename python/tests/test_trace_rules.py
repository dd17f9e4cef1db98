"""The launch-trace rules (kz_worker.trace_rules) and kernel names (trace_names) on
synthetic CUPTI records: no GPU needed."""

import types

import pytest

from kz_worker import trace_names, trace_rules
from trace_records import CALLER, US, marker, rec, window  # noqa: F401

NAMES = {"matmul_kernel"}
MATMUL = "matmul_kernel(float const*, float const*, float*, int, int, int)"
TORCH_MM = "void at::native::cunn_SoftMaxForward<4, float>(float*, float const*, int)"
CUBLAS = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_execute_kernel__5x_cublas"
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")


def analyze(windows, policy="strict", share=0.5, names=NAMES):
    return trace_rules.analyze(windows, names, policy, share)


def rules(stage):
    return [f["rule"] for f in stage["findings"]]


# ------------------------------------------------------------------ the rules

def test_honest_single_kernel_passes():
    stage = analyze([window([rec("kernel", MATMUL, 10, 1010), marker(1012)])])
    assert stage["status"] == "pass" and rules(stage) == []
    call = stage["calls"][0]
    assert call["candidate_kernels"] == 1 and call["share"] == 1.0
    assert call["candidate_us"] == pytest.approx(1000.0)
    assert call["kernels"][0] == {"name": MATMUL, "stream": CALLER, "class": "candidate",
                                  "graph": False, "count": 1, "us": 1000.0}
    assert trace_rules.failure_reason(stage) is None


def test_cached_call_without_kernel_is_rejected():
    windows = [window([rec("kernel", MATMUL, 10, 1010), marker(1012)], "fresh inputs"),
               window([rec("memcpy", "memcpy DtoH", 5, 6), marker(20)], "same inputs again (1)")]
    stage = analyze(windows)
    assert stage["status"] == "reject" and rules(stage) == ["trace.no_candidate_kernel"]
    reason = trace_rules.failure_reason(stage)
    assert reason.startswith("trace.no_candidate_kernel: same inputs again (1): none of the "
                             "candidate's kernels (matmul_kernel) ran; it ran memcpy DtoH ×1")


def test_call_without_any_gpu_work_says_so():
    stage = analyze([window([marker(5)])])
    assert "no GPU work at all" in stage["findings"][0]["message"]


def test_unjoined_side_stream_is_rejected():
    side = rec("kernel", MATMUL, 12, 1012, stream=21)  # still running when forward returned
    stage = analyze([window([side, marker(15)])])
    assert rules(stage) == ["trace.side_stream"]
    reason = trace_rules.failure_reason(stage)
    assert reason.startswith("trace.side_stream: trial 0: " + MATMUL + " on stream 21 ended "
                             "997.0 µs after forward returned; the caller's stream 7")
    late = stage["calls"][0]["late"][0]
    assert late["after_return_us"] == pytest.approx(997.0) and not late["caller_stream"]


def test_joined_side_streams_and_graph_kernels_pass():
    top = rec("kernel", MATMUL, 10, 600, stream=21)
    bottom = rec("kernel", MATMUL, 10, 610, stream=22)
    graph = [rec("kernel", MATMUL, 700, 800, stream=CALLER, graph=3),
             rec("kernel", MATMUL, 800, 900, stream=30, graph=3)]
    stage = analyze([window([top, bottom, marker(611)]), window(graph + [marker(905)], "trial 1")])
    assert stage["status"] == "pass", stage["findings"]
    assert stage["calls"][1]["kernels"][0]["graph"] is True


def test_work_launched_after_return_on_the_caller_stream_is_rejected():
    stage = analyze([window([rec("kernel", MATMUL, 10, 100), marker(101),
                             rec("kernel", MATMUL, 150, 900)])])
    assert rules(stage) == ["trace.side_stream"]
    assert "launched on the caller's stream after forward returned" in stage["findings"][0]["message"]


def test_tiny_timestamp_skew_is_tolerated():
    stage = analyze([window([rec("kernel", MATMUL, 10, 101), marker(100)])])  # 1 µs < slack
    assert stage["status"] == "pass"


def test_marker_on_another_stream_is_ignored_and_missing_marker_skips_side_check():
    side = rec("kernel", MATMUL, 12, 1012, stream=21)
    stage = analyze([window([side, marker(15, stream=21)])])
    assert stage["status"] == "pass" and stage["calls"][0]["marker"] is False


def test_unrecognised_marker_falls_back_to_the_last_4_byte_memset():
    side = rec("kernel", MATMUL, 12, 1012, stream=21)
    fallback = {**rec("memset", "memset", 15, 16), "bytes": 4}
    early = {**rec("memset", "memset", 2, 3), "bytes": 4}
    stage = analyze([window([early, side, fallback])])
    assert rules(stage) == ["trace.side_stream"]
    late = stage["calls"][0]["late"]
    assert stage["calls"][0]["marker"] and late[0]["after_return_us"] == pytest.approx(997.0)
    assert analyze([window([early, side, fallback], caller=None)])["status"] == "pass"


def test_unknown_caller_stream_uses_the_marker_stream():
    side = rec("kernel", MATMUL, 12, 1012, stream=21)
    stage = analyze([window([side, marker(15)], caller=None)])
    assert rules(stage) == ["trace.side_stream"] and stage["calls"][0]["caller_stream"] == CALLER


def test_torch_kernel_carrying_90_percent_strict_vs_kernelbench():
    records = [rec("kernel", MATMUL, 1, 101), rec("kernel", TORCH_MM, 101, 1001), marker(1002)]
    strict = analyze([window(records)])
    assert rules(strict) == ["trace.foreign_compute"] and strict["worst_share"] == 0.1
    assert "PyTorch/vendor kernels carry 90% of the kernel time (900.0 of 1000.0 µs)" in \
        trace_rules.failure_reason(strict)
    bench = analyze([window(records)], policy="kernelbench")
    assert bench["status"] == "pass" and bench["reported"] and bench["policy"] == "kernelbench"


def test_share_threshold_is_configurable():
    records = [rec("kernel", MATMUL, 1, 401), rec("kernel", CUBLAS, 401, 1001), marker(1002)]
    assert rules(analyze([window(records)])) == ["trace.foreign_compute"]
    assert analyze([window(records)], share=0.3)["status"] == "pass"


def test_no_candidate_kernel_still_fires_under_kernelbench():
    stage = analyze([window([rec("kernel", TORCH_MM, 1, 100), marker(101)])], policy="kernelbench")
    assert rules(stage) == ["trace.no_candidate_kernel"]


def test_fills_and_copies_are_not_compute():
    records = [rec("kernel", MATMUL, 1, 101), rec("kernel", FILL, 101, 900),
               rec("memset", "memset", 900, 950), rec("memcpy", "memcpy DtoD", 950, 990),
               marker(991)]
    stage = analyze([window(records)])
    call = stage["calls"][0]
    assert stage["status"] == "pass" and call["share"] == 1.0
    assert call["memory_us"] == pytest.approx(889.0)


def test_dropped_records_are_not_judged_for_missing_kernels():
    stage = analyze([window([marker(5)], dropped=3)])
    assert stage["status"] == "pass" and stage["calls"][0]["dropped"] == 3


def test_rules_are_ordered_and_listed_in_the_reason():
    records = [rec("kernel", TORCH_MM, 1, 100, stream=21), marker(10)]
    stage = analyze([window(records)])
    assert rules(stage) == ["trace.no_candidate_kernel", "trace.side_stream",
                            "trace.foreign_compute"]
    assert trace_rules.failure_reason(stage).endswith(
        "(also trace.side_stream, trace.foreign_compute)")


def test_kernel_groups_are_bounded():
    records = [rec("kernel", f"k{i}", i, i + 1) for i in range(100)] + [marker(200)]
    call = analyze([window(records)], names={"k1"})["calls"][0]
    assert len(call["kernels"]) == trace_rules.MAX_LISTED


# ------------------------------------------------------------------ names

@pytest.mark.parametrize("name,expected", [
    (MATMUL, ("matmul_kernel", "matmul_kernel")),
    ("void foo<128>(float*)", ("foo", "foo")),
    ("softmax_kernel", ("softmax_kernel", "softmax_kernel")),
    (TORCH_MM, ("at::native::cunn_SoftMaxForward", "cunn_SoftMaxForward")),
    ("void at::native::(anonymous namespace)::k<float>(float*)",
     ("at::native::{anon}::k", "k")),
    ("void kz::ns::row_sum<256u>(float const*, float*, int) const", ("kz::ns::row_sum", "row_sum")),
    ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::nat",
     ("at::native::elementwise_kernel", "elementwise_kernel")),  # cut short
])
def test_function_name(name, expected):
    assert trace_names.function_name(name) == expected


@pytest.mark.parametrize("name,cls", [
    (MATMUL, "candidate"), (TORCH_MM, "foreign"), (FILL, "memory"), (CUBLAS, "foreign"),
    ("matmul_kernelx(float*)", "foreign"),            # exact name, not a substring
    ("void at::native::matmul_kernel(float*)", "foreign"),  # PyTorch namespace
    ("memset32", "memory"),                           # graph memset node as a kernel
])
def test_classify(name, cls):
    assert trace_names.classify({"kind": "kernel", "name": name}, NAMES | {"nvjet_x"}) == cls


def test_vendor_names_cannot_be_claimed():
    names = {"nvjet_tst_128x64_h_bz_NNT"}
    rec_ = {"kind": "kernel", "name": "nvjet_tst_128x64_h_bz_NNT"}
    assert trace_names.classify(rec_, names) == "foreign"


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


def test_copy_marker_decides_even_when_the_marker_memset_waited_for_an_sm():
    """H200, 2026-11-29: the marker memset of an unjoined 4096-block softmax started only
    at the kernel's last wave, so the marker alone missed it; the 4-byte copy enqueued
    just before it runs on a copy engine and starts when the caller's stream is done."""
    side = rec("kernel", "matmul_kernel", 5, 38, stream=13)
    def copy(at_us, corr):
        return {**rec("memcpy", "memcpy HtoD", at_us, at_us + 1), "bytes": 4, "correlation": corr}
    late_marker = {**marker(37.5), "correlation": 11}
    assert rules(analyze([window([side, copy(8, 10), late_marker])])) == ["trace.side_stream"]
    assert rules(analyze([window([side, copy(39, 10), {**marker(40), "correlation": 11}])])) == []
    # Without the copy the marker decides (and misses this overlap: the H200 case).
    assert rules(analyze([window([side, late_marker])])) == []
