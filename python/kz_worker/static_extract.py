"""The `load_inline` calls of a candidate read from its source, without running it or
importing torch (`import torch` is most of a dynamic extraction's CPU: ~1.5 s on a
CPU-only torch, more with CUDA's libraries).

`extract(text)` returns the calls' bound arguments — the same dicts the dynamic
extraction (`inline.Recorder` while the module runs) would record — or None whenever it
cannot be sure of that, and the caller then runs the module. It is sure only when:

- every `load_inline` name in the file is the imported function (`from
  torch.utils.cpp_extension import load_inline [as X]`) or a call site, and every call
  site is the whole value of a statement of the module body (`x = load_inline(...)` or a
  bare call): not in a function, a branch, a loop, a `try`;
- each argument is a literal or a module-level name bound by plain assignments before
  the call (strings, numbers, booleans, None, lists, tuples, dicts, `+` of those,
  f-strings of those, `"sep".join([...])`, `textwrap.dedent` / `inspect.cleandoc` of a
  string), keywords only among those load_inline takes, at most three positionals;
- the module defines `ModelNew` at top level, and each top-level `import` names a module
  that exists (otherwise running it gives the precise error);
- at least one call is found.
A module whose other top-level code raises when run is still extracted here; the run
child then reports the same `import_error` (compile_error) when it loads the candidate.
"""

import ast
import importlib.util
import inspect
import io
import textwrap
import tokenize

_POSITIONAL = ("name", "cpp_sources", "cuda_sources")
_KEYWORDS = set(_POSITIONAL) | {
    "functions", "extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths",
    "build_directory", "verbose", "with_cuda", "is_python_module", "with_pytorch_error_handling",
    "keep_intermediates", "use_pch"}
_MODULE = "torch.utils.cpp_extension"


class _Unknown(Exception):
    """A value the static reading cannot be sure of."""


def _top_import_names(tree: ast.Module):
    """(names bound to load_inline by `from torch.utils.cpp_extension import`, every top-level
    module imported) of the module body."""
    aliases, modules = set(), set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                raise _Unknown("relative import")
            modules.add(node.module.split(".")[0])
            if node.module == _MODULE:
                aliases |= {a.asname or a.name for a in node.names if a.name == "load_inline"}
        elif isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
    return aliases, modules


def _is_load_inline(func: ast.expr, aliases: set) -> bool:
    return (isinstance(func, ast.Name) and func.id in aliases) or \
        (isinstance(func, ast.Attribute) and func.attr == "load_inline")


def _call_of(stmt: ast.stmt, aliases: set):
    """The load_inline call that is the whole value of `stmt`, else None."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if isinstance(value, ast.Call) and _is_load_inline(value.func, aliases):
        return value
    return None


def _count_names(text: str) -> int:
    """NAME tokens `load_inline` in the file (comments and strings do not count)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return sum(1 for t in tokens if t.type == tokenize.NAME and t.string == "load_inline")
    except (tokenize.TokenError, SyntaxError):
        raise _Unknown("tokenize") from None


class _Evaluator:
    """Values of module-level names, statement by statement."""

    def __init__(self):
        self.names = {}

    def value(self, node: ast.expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise _Unknown(node.id)
            return self.names[node.id]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.Dict) and None not in node.keys:
            return {self.value(k): self.value(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left), self.value(node.right)
            if type(left) is not type(right) or not isinstance(left, (str, list)):
                raise _Unknown("+")
            return left + right
        if isinstance(node, ast.JoinedStr):
            return "".join(self._formatted(part) for part in node.values)
        if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
            return self._call(node)
        raise _Unknown(type(node).__name__)

    def _formatted(self, part: ast.expr) -> str:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return part.value
        if isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
            value = self.value(part.value)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                return str(value)
        raise _Unknown("f-string")

    def _call(self, node: ast.Call):
        func, arg = node.func, self.value(node.args[0])
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant) \
                and isinstance(func.value.value, str) and func.attr == "join" and isinstance(arg, list) \
                and all(isinstance(a, str) for a in arg):
            return func.value.value.join(arg)
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        owner = getattr(func.value, "id", None) if isinstance(func, ast.Attribute) else None
        if isinstance(arg, str) and (name, owner) in (("dedent", "textwrap"), ("dedent", None)):
            return textwrap.dedent(arg)
        if isinstance(arg, str) and (name, owner) in (("cleandoc", "inspect"), ("cleandoc", None)):
            return inspect.cleandoc(arg)
        raise _Unknown("call")

    def assign(self, stmt: ast.stmt, rebound: set) -> None:
        """Record a plain `a = b = value` / `a: T = value`; other bindings make names unknown."""
        targets = stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
        if not targets or not all(isinstance(t, ast.Name) for t in targets):
            return
        try:
            value = self.value(stmt.value)
        except _Unknown:
            for t in targets:
                self.names.pop(t.id, None)
            return
        for t in targets:
            if t.id not in rebound:
                self.names[t.id] = value


def _rebound_names(tree: ast.Module) -> set:
    """Names bound anywhere but by a plain top-level assignment (loops, functions, `global`,
    imports, `with`, walrus, augmented assignment...): their value is not known statically."""
    out = set()
    plain = {id(t) for stmt in tree.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
             for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in plain:
            out.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out |= set(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
    return out


def _bind(call: ast.Call, ev: _Evaluator) -> dict:
    if len(call.args) > len(_POSITIONAL) or any(isinstance(a, ast.Starred) for a in call.args):
        raise _Unknown("positionals")
    values = dict(zip(_POSITIONAL, (ev.value(a) for a in call.args)))
    for kw in call.keywords:
        if kw.arg is None or kw.arg not in _KEYWORDS or kw.arg in values:
            raise _Unknown("keyword")
        values[kw.arg] = ev.value(kw.value)
    if "name" not in values or "cpp_sources" not in values:
        raise _Unknown("missing argument")
    return values


def _defines_model_new(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in node.targets):
            return True
    return False


def _calls(text: str) -> list:
    tree = ast.parse(text)
    aliases, modules = _top_import_names(tree)
    if not _defines_model_new(tree):
        raise _Unknown("ModelNew")
    if any(importlib.util.find_spec(m) is None for m in modules):
        raise _Unknown("missing module")
    rebound = _rebound_names(tree)
    ev, calls, sites = _Evaluator(), [], 0
    for stmt in tree.body:
        call = _call_of(stmt, aliases)
        if call is not None:
            sites += 1 if isinstance(call.func, ast.Name) else 0
            calls.append(_bind(call, ev))
        ev.assign(stmt, rebound)
    imported = sum(1 for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == _MODULE
                   for a in node.names if a.name == "load_inline")
    attribute_sites = len(calls) - sites
    if not calls or _count_names(text) != imported + sites + attribute_sites:
        raise _Unknown("load_inline used elsewhere")
    return calls


def extract(text: str):
    """The bound arguments of each load_inline call, in order, or None (see the module
    docstring); never raises."""
    try:
        return _calls(text)
    except (_Unknown, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
