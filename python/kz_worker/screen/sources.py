"""Statically resolving the source strings a candidate passes to `load_inline`.

Strings are resolved from literals, module-level (or function-local) string constants,
`+`/`+=` concatenation, f-strings with constant fields, `sep.join([...])`, lists and
tuples, and pass-through helpers (`textwrap.dedent`, `str`, `.strip()`). Anything else
makes the source incomplete; the screen then notes "sources not statically known" and
scans what it does know. Each piece keeps the candidate line where it starts, so
findings inside C++/CUDA code map back to the candidate file.
"""

import ast
from bisect import bisect_right
from dataclasses import dataclass, field

from .names import Names

LOAD_INLINE_ARGS = ("name", "cpp_sources", "cuda_sources", "sycl_sources", "functions",
                    "extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags")
PASS_THROUGH = ("textwrap.dedent", "inspect.cleandoc", "builtins.str")


@dataclass
class Text:
    """A resolved string: pieces (text, first line, exact) and whether all is known.
    `exact` means newlines inside the piece are newlines of the candidate file."""
    pieces: list = field(default_factory=list)
    complete: bool = True

    @staticmethod
    def of(text: str, node, exact=None) -> "Text":
        if exact is None:
            exact = (node.end_lineno or node.lineno) - node.lineno == text.count("\n")
        return Text([(text, node.lineno, exact)])

    def __add__(self, other: "Text") -> "Text":
        return Text(self.pieces + other.pieces, self.complete and other.complete)

    @property
    def value(self) -> str:
        return "".join(p[0] for p in self.pieces)

    def line_at(self, offset: int) -> int:
        """Candidate line of character `offset` of `value`."""
        starts, pos = [], 0
        for text, _, _ in self.pieces:
            starts.append(pos)
            pos += len(text)
        i = max(0, bisect_right(starts, offset) - 1)
        text, line, exact = self.pieces[i]
        return line + text.count("\n", 0, offset - starts[i]) if exact else line


UNKNOWN = Text([], complete=False)


@dataclass
class InlineCall:
    """One `load_inline` call: where it is and what it compiles."""
    line: int
    cpp: list
    cuda: list
    flags: list  # constant strings of extra_*flags
    complete: bool


class Resolver:
    """Evaluates string expressions against an environment of known constants."""

    def __init__(self, names: Names):
        self.names = names

    def resolve(self, node, env):
        """A Text, a list of Texts, or UNKNOWN."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return Text.of(node.value, node)
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return Text.of(str(node.value), node, exact=False)
            return UNKNOWN
        if isinstance(node, ast.Name):
            return env.get(node.id, UNKNOWN)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._as_text(self.resolve(e, env)) for e in node.elts]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._concat(self.resolve(node.left, env), self.resolve(node.right, env))
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        return UNKNOWN

    @staticmethod
    def _as_text(v) -> Text:
        if isinstance(v, Text):
            return v
        out = Text([])
        for t in v:
            out = out + t
        return out

    def _concat(self, a, b):
        if isinstance(a, list) and isinstance(b, list):
            return a + b
        if isinstance(a, Text) and isinstance(b, Text):
            return a + b
        return UNKNOWN

    def _fstring(self, node, env):
        parts, complete = [], True
        for v in node.values:
            r = self.resolve(v.value if isinstance(v, ast.FormattedValue) else v, env)
            if isinstance(r, Text) and r.complete:
                parts.append(r.value)
            else:
                complete = False
        text = "".join(parts)
        return Text([(text, node.lineno, (node.end_lineno or node.lineno) - node.lineno
                      == text.count("\n"))], complete)

    def _call(self, node, env):
        func = node.func
        qual = self.names.qualname(func)
        if qual in PASS_THROUGH and len(node.args) == 1:
            return self.resolve(node.args[0], env)
        if not isinstance(func, ast.Attribute):
            return UNKNOWN
        base = self.resolve(func.value, env)
        if not isinstance(base, Text):
            return UNKNOWN
        if func.attr in ("strip", "lstrip", "rstrip") and not node.args:
            return base
        if func.attr == "join" and len(node.args) == 1:
            items = self.resolve(node.args[0], env)
            if not isinstance(items, list):
                return UNKNOWN
            out = Text([], base.complete)
            for i, item in enumerate(items):
                out = out + (base + item if i else item)
            return out
        if func.attr in ("format", "replace"):
            return self._apply(base, node, env)
        return UNKNOWN

    def _apply(self, base: Text, node, env):
        """`.format`/`.replace` with constant arguments on a one-piece string."""
        args = [self.resolve(a, env) for a in node.args]
        kwargs = {k.arg: self.resolve(k.value, env) for k in node.keywords}
        known = all(isinstance(a, Text) and a.complete for a in args + list(kwargs.values()))
        if not (known and base.complete and len(base.pieces) == 1 and None not in kwargs):
            return Text(base.pieces, complete=False)
        text, line, exact = base.pieces[0]
        try:
            out = getattr(text, node.func.attr)(*[a.value for a in args],
                                                **{k: v.value for k, v in kwargs.items()})
        except (KeyError, IndexError, ValueError, TypeError):
            return Text(base.pieces, complete=False)
        return Text([(out, line, exact and out.count("\n") == text.count("\n"))])

    def bind(self, stmt, env) -> None:
        """Update `env` with the string constants that `stmt` assigns."""
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self._bind_target(target, stmt.value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind_target(stmt.target, stmt.value, env)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            old = env.get(stmt.target.id, UNKNOWN)
            new = (self._concat(old, self.resolve(stmt.value, env))
                   if isinstance(stmt.op, ast.Add) else UNKNOWN)
            env[stmt.target.id] = new

    def _bind_target(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = self.resolve(value, env)
        elif isinstance(target, (ast.Tuple, ast.List)):
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            for i, t in enumerate(target.elts):
                self._bind_target(t, value.elts[i] if same else ast.Constant(None), env)


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
