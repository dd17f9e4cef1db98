"""The `load_inline` calls of a candidate and the source strings they pass, resolved
statically for the screen by the lenient mode of the one evaluator (evaluate.py): anything
not known makes the source incomplete; the screen then notes "sources not statically
known" and scans what it does know. Each piece keeps the candidate line where it starts,
so findings inside C++/CUDA code map back to the candidate file.
"""

import ast
from dataclasses import dataclass

from .evaluate import UNKNOWN, Resolver
from .names import Names

LOAD_INLINE_ARGS = ("name", "cpp_sources", "cuda_sources", "sycl_sources", "functions",
                    "extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags")


@dataclass
class InlineCall:
    """One `load_inline` call: where it is and what it compiles."""
    line: int
    cpp: list
    cuda: list
    flags: list  # constant strings of extra_*flags
    complete: bool


def flat_statements(body):
    """Statements of `body` in source order, descending into compound statements but not
    into function or class definitions."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for attr in ("body", "orelse", "finalbody", "handlers"):
            yield from flat_statements(getattr(stmt, attr, []) or [])


def own_nodes(stmt):
    """Nodes of `stmt` itself: its expressions, not its nested statements."""
    stack = [c for c in ast.iter_child_nodes(stmt) if not isinstance(c, ast.stmt)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt))


def is_load_inline(call: ast.Call, names: Names) -> bool:
    f = call.func
    last = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
    return last == "load_inline" or (names.qualname(f) or "").endswith(".load_inline")


def _argument(call, index, key):
    for k in call.keywords:
        if k.arg == key:
            return k.value
    positional = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            break
        positional.append(a)
    return positional[index] if index < len(positional) else None


class _Extractor:
    def __init__(self, names: Names):
        self.names = names
        self.resolver = Resolver(names)
        self.calls = []

    def scan(self, body, env):
        for stmt in flat_statements(body):
            for node in own_nodes(stmt):
                if isinstance(node, ast.Call) and is_load_inline(node, self.names):
                    self.calls.append(self._call(node, env))
            self.resolver.bind(stmt, env)

    def _sources(self, call, key, env):
        node = _argument(call, LOAD_INLINE_ARGS.index(key), key)
        if node is None:
            starred = any(k.arg is None for k in call.keywords) or any(
                isinstance(a, ast.Starred) for a in call.args)
            return [UNKNOWN] if starred else []
        value = self.resolver.resolve(node, env)
        return value if isinstance(value, list) else [value]

    def _call(self, call, env) -> InlineCall:
        cpp = self._sources(call, "cpp_sources", env)
        cuda = self._sources(call, "cuda_sources", env)
        flags = []
        for key in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags"):
            flags += [t.value for t in self._sources(call, key, env) if t.complete]
        complete = all(t.complete for t in cpp + cuda)
        return InlineCall(call.lineno, cpp, cuda, flags, complete)


def find_inline_calls(tree: ast.Module, names: Names) -> list:
    """Every `load_inline` call of the file with its resolved sources, in file order."""
    ex = _Extractor(names)
    module_env = {}
    ex.scan(tree.body, module_env)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            ex.scan(node.body, dict(module_env))
    return sorted(ex.calls, key=lambda c: c.line)
