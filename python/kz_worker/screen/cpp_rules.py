"""Rules over the C++/CUDA sources of `load_inline` calls (cpp.* and the CUDA half of
gen.no_kernel). Sources are scanned after blanking comments, string and character
literals (newlines kept, so offsets map back to candidate lines)."""

import re

from .cpp_aten import check_aten
from .cpp_text import strip_code

# (rule, pattern over blanked code, what it is)
SIMPLE = (
    ("cpp.vendor_library", re.compile(
        r"\b(?:cublas\w*|cudnn\w*|cufft\w*|cusparse\w*|cusolver\w*|nccl\w*|"
        r"(?:CUBLAS|CUDNN|CUFFT|CUSPARSE|CUSOLVER|NCCL)_\w+|getCurrentCUDABlas\w*|"
        r"getCurrentCudnnHandle|getCurrentCUDASolver\w*|getCurrentCUDASparse\w*|dlopen|dlsym)\b"
        r"|\bat\s*::\s*cuda\s*::\s*blas\s*::"),
     "vendor library use"),
    ("cpp.extra_stream", re.compile(
        r"\b(?:cudaStreamCreate\w*|cudaStreamPerThread|cudaGraph\w*|cudaStreamBeginCapture\w*|"
        r"getStreamFromPool|getStreamFromExternal|cuStreamCreate\w*|cuGraph\w*)\b"),
     "an extra CUDA stream or graph"),
    ("cpp.host_thread", re.compile(
        r"\bstd\s*::\s*(?:thread|jthread|async|launch)\b|\bpthread_create\b|"
        r"\bat\s*::\s*(?:parallel_for|launch)\b"),
     "host threads"),
)
_VENDOR_HEADER = re.compile(r"(^|/)(cublas|cudnn|cufft|cusparse|cusolver|nccl)\w*\.h|"
                            r"ATen/cuda/CUDABlas|ATen/cudnn/|ATen/native/cudnn|dlfcn\.h")
_VENDOR_FLAG = re.compile(r"-l\s*(cublas|cublasLt|cudnn|cufft|cusparse|cusolver|nccl)\b")
_PROCESS = re.compile(r"\b(fork|vfork|popen|system|posix_spawnp?|execv\w*|execl\w*)\s*\(")
_MEMBER_OR_QUALIFIED = re.compile(r"(?:\.|->|\w\s*::)\s*$")
_GLOBAL = re.compile(r"\b__global__\b")
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]", re.M)
_OMP = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+omp\b", re.M)


def scan_text(text, emit) -> bool:
    """Apply the cpp.* rules to one source string; emit(rule, offset, message).
    Returns True if it defines a __global__ function."""
    code, no_comments = strip_code(text)
    check_aten(code, emit)
    for rule, pattern, what in SIMPLE:
        for m in pattern.finditer(code):
            emit(rule, m.start(), f"{re.sub(r'[ ]+', '', m.group(0))}: {what} in the extension")
    for m in _INCLUDE.finditer(no_comments):
        if _VENDOR_HEADER.search(m.group(1)):
            emit("cpp.vendor_library", m.start(), f"#include <{m.group(1)}>: vendor library header")
    for m in _OMP.finditer(no_comments):
        emit("cpp.host_thread", m.start(), "#pragma omp: host threads in the extension")
    for m in _PROCESS.finditer(code):
        if not _MEMBER_OR_QUALIFIED.search(code[max(0, m.start() - 64):m.start()]):
            emit("cpp.host_thread", m.start(), f"{m.group(1)}(): host processes in the extension")
    return bool(_GLOBAL.search(code))


def screen_inline_calls(calls, backend, report) -> None:
    """cpp.* findings for every `load_inline` call; gen.no_kernel for CUDA candidates."""
    has_kernel, all_known = False, True
    for call in calls:
        if not call.complete:
            all_known = False
            report.note(call.line, "sources not statically known: the C++/CUDA rules see only "
                        "the parts that are (the integrity stage checks the rest)")
        for text in call.cpp + call.cuda:
            def emit(rule, offset, message, text=text):
                report.add(rule, text.line_at(offset), message)
            has_kernel |= scan_text(text.value, emit)
        for flag in call.flags:
            if _VENDOR_FLAG.search(flag):
                report.add("cpp.vendor_library", call.line,
                           f"{flag.strip()}: links a vendor library")
    if backend != "cuda" or has_kernel or not all_known:
        return
    if not calls:
        report.add("gen.no_kernel", None, "cuda candidate without a load_inline call")
    else:
        report.add("gen.no_kernel", calls[0].line,
                   "no __global__ function in the load_inline sources")
