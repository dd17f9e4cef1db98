"""The candidate's own kernel names, a fact of the launch trace (docs/trace.md): which
trace records are the candidate's is judged by the supervisor (src/verify/trace_names.h).

Pure functions (no torch, no GPU):
- `cuda_kernel_names(texts)`: the `__global__` function names in C++/CUDA sources.
- `triton_kernel_names(source, module)`: the candidate's `@triton.jit` functions (any
  nesting level of its source, and the JIT objects among its module's globals); this needs
  Python's `ast` and the module's globals, so it runs in the child.
"""

import ast
import re

from ..screen.cpp_text import strip_code

_GLOBAL = re.compile(r"\b__global__\b")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^()]*\)")
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_IDENT = re.compile(r"[A-Za-z_]\w*")


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
