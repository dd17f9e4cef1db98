"""Names in the launch trace: which kernels are the candidate's own (docs/trace.md).

Pure functions (no torch, no GPU):
- `cuda_kernel_names(texts)`: the `__global__` function names in C++/CUDA sources.
- `triton_kernel_names(source, module)`: the candidate's `@triton.jit` functions (any
  nesting level of its source, and the JIT objects among its module's globals).
- `function_name(name)`: (qualified, unqualified) function name of a demangled kernel.
- `classify(record, names)`: "candidate", "foreign", "memory" or "marker".

A kernel is the candidate's when its unqualified function name is one of the
candidate's kernel names (exact match, not a substring) and it is not qualified by a
PyTorch or vendor namespace, nor named like a vendor library kernel (so a candidate
cannot claim cuBLAS's kernels by reusing their names).
"""

import ast
import re

from .screen.cpp_text import strip_code

_GLOBAL = re.compile(r"\b__global__\b")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^()]*\)")
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_IDENT = re.compile(r"[A-Za-z_]\w*")
# Qualified by PyTorch or a vendor library's namespace.
_FOREIGN_NS = re.compile(r"^(?:at|c10|torch|cutlass|cute|cub|thrust|flash|fmha|xmma\w*|"
                         r"cudnn\w*|cublas\w*|cusparse\w*|cufft\w*|cusolver\w*)::")
# Vendor library kernels without a namespace (cuBLAS/cuDNN naming schemes).
_VENDOR_NAME = re.compile(r"^(?:sm\d+_xmma|xmma|ampere_|volta_|turing_|hopper_|blackwell_|"
                          r"cutlass|cublas|cudnn|nvjet|gemv2|gemvx|gemmSN|gemmk1|"
                          r"splitKreduce)")
# Foreign kernels that only fill or move data: reported, not counted as compute.
_MEMORY_KERNEL = re.compile(r"FillFunctor|fill_kernel|direct_copy_kernel|\bcopy_kernel|"
                            r"CatArrayBatchedCopy|^memset|^memcpy")


def _names_in(code: str) -> set:
    names = set()
    code = _LAUNCH_BOUNDS.sub(" ", code)
    for m in _GLOBAL.finditer(code):
        head = code[m.end():m.end() + 600].split("(", 1)[0]
        while _TEMPLATE_ARGS.search(head):
            head = _TEMPLATE_ARGS.sub(" ", head)
        idents = _IDENT.findall(head)
        if idents:
            names.add(idents[-1])
    return names


def cuda_kernel_names(texts, raw_texts=()) -> set:
    """`__global__` function names in `texts` (C++/CUDA sources: comments and literals
    are blanked first) and in `raw_texts` (e.g. a Python file holding sources as string
    literals, scanned as is)."""
    names = set()
    for text in texts:
        names |= _names_in(strip_code(text)[0])
    for text in raw_texts:
        names |= _names_in(text)
    return names


def _is_jit(decorator) -> bool:
    try:
        text = ast.unparse(decorator)
    except Exception:  # noqa: BLE001 - an odd node is simply not a jit decorator
        return False
    return re.search(r"\bjit\b", text) is not None


def _jit_object_name(value):
    """The Python function name behind a Triton JIT object (JITFunction, Autotuner,
    Heuristics, ...), else None."""
    if not type(value).__module__.startswith("triton"):
        return None
    for _ in range(6):
        inner = getattr(value, "fn", None)
        if inner is None:
            break
        value = inner
    name = getattr(value, "__name__", None)
    return name if isinstance(name, str) else None


def triton_kernel_names(source: str, module=None) -> set:
    """Names of functions decorated with `...jit...` anywhere in `source`, plus the
    functions behind Triton JIT objects among `module`'s globals."""
    names = set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _is_jit(d) for d in node.decorator_list):
            names.add(node.name)
    for value in list(vars(module).values()) if module is not None else ():
        name = _jit_object_name(value)
        if name:
            names.add(name)
    return names


def _matching_open(s: str, end: int, open_ch: str, close_ch: str):
    """Index of the `open_ch` matching the `close_ch` at s[end], or None."""
    depth = 0
    for i in range(end, -1, -1):
        if s[i] == close_ch:
            depth += 1
        elif s[i] == open_ch:
            depth -= 1
            if depth == 0:
                return i
    return None


def _last_top_level(s: str, sep: str) -> int:
    """Index just after the last `sep` outside (), <> and {}; 0 if none."""
    depth, cut = 0, 0
    for i, ch in enumerate(s):
        if ch in "(<{":
            depth += 1
        elif ch in ")>}":
            depth = max(0, depth - 1)
        elif depth == 0 and s.startswith(sep, i):
            cut = i + len(sep)
    return cut


def function_name(name: str) -> tuple:
    """(qualified, unqualified) function name of a demangled kernel name: the return
    type, parameter list and trailing template arguments removed.
    "void at::native::foo<4, float>(float*, int)" -> ("at::native::foo", "foo");
    a name cut short (no balanced parameter list) is cut at its first '(' or '<'."""
    s = name.strip().replace("(anonymous namespace)", "{anon}")
    s = re.sub(r"\s+(?:const|volatile)$", "", s)
    opening = _matching_open(s, len(s) - 1, "(", ")") if s.endswith(")") else None
    if opening is not None:
        s = s[:opening].rstrip()
        if s.endswith(">"):
            opening = _matching_open(s, len(s) - 1, "<", ">")
            s = s[:opening].rstrip() if opening is not None else s
    else:
        s = re.split(r"[(<]", s, maxsplit=1)[0].rstrip()
    qualified = s[_last_top_level(s, " "):]
    return qualified, qualified[_last_top_level(qualified, "::"):]


def classify(record: dict, names) -> str:
    """"marker" | "memory" (memset, memcpy, PyTorch fill/copy kernels) | "candidate" |
    "foreign" for one trace record {"kind", "name", ...}."""
    kind = record.get("kind")
    if kind == "marker":
        return "marker"
    if kind != "kernel":
        return "memory"
    qualified, unqualified = function_name(record.get("name", ""))
    vendor = _FOREIGN_NS.match(qualified) or _VENDOR_NAME.match(unqualified)
    if unqualified in names and not vendor:
        return "candidate"
    return "memory" if _MEMORY_KERNEL.search(record.get("name", "")) or \
        _MEMORY_KERNEL.search(unqualified) else "foreign"
