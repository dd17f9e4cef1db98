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
  f-strings of those, `sep.join([...])`, `.strip()`, `.format`/`.replace` with constant
  arguments, `textwrap.dedent` / `inspect.cleandoc` of a string: the exact mode of the
  screen's evaluator, evaluate.py), keywords only among those load_inline takes, at most
  three positionals;
- the module defines `ModelNew` at top level, and each top-level `import` names a module
  that exists (otherwise running it gives the precise error);
- at least one call is found.
A module whose other top-level code raises when run is still extracted here; the run
child then reports the same `import_error` (compile_error) when it loads the candidate.
"""

import ast
import importlib.util
import io
import tokenize

from .evaluate import Resolver, Unknown, plain
from .names import Names

_POSITIONAL = ("name", "cpp_sources", "cuda_sources")
_KEYWORDS = set(_POSITIONAL) | {
    "functions", "extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths",
    "build_directory", "verbose", "with_cuda", "is_python_module", "with_pytorch_error_handling",
    "keep_intermediates", "use_pch"}
_MODULE = "torch.utils.cpp_extension"


def _top_import_names(tree: ast.Module):
    """(names bound to load_inline by `from torch.utils.cpp_extension import`, every top-level
    module imported) of the module body."""
    aliases, modules = set(), set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                raise Unknown("relative import")
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
        raise Unknown("tokenize") from None


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


def _bind(call: ast.Call, resolver: Resolver, env: dict) -> dict:
    if len(call.args) > len(_POSITIONAL) or any(isinstance(a, ast.Starred) for a in call.args):
        raise Unknown("positionals")
    values = {key: plain(resolver.resolve(a, env)) for key, a in zip(_POSITIONAL, call.args)}
    for kw in call.keywords:
        if kw.arg is None or kw.arg not in _KEYWORDS or kw.arg in values:
            raise Unknown("keyword")
        values[kw.arg] = plain(resolver.resolve(kw.value, env))
    if "name" not in values or "cpp_sources" not in values:
        raise Unknown("missing argument")
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
        raise Unknown("ModelNew")
    if any(importlib.util.find_spec(m) is None for m in modules):
        raise Unknown("missing module")
    rebound = _rebound_names(tree)
    resolver, env, calls, sites = Resolver(Names(tree), exact=True), {}, [], 0
    for stmt in tree.body:
        call = _call_of(stmt, aliases)
        if call is not None:
            sites += 1 if isinstance(call.func, ast.Name) else 0
            calls.append(_bind(call, resolver, env))
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            resolver.bind(stmt, env)
            for name in rebound & env.keys():  # bound elsewhere too: not known statically
                del env[name]
    imported = sum(1 for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == _MODULE
                   for a in node.names if a.name == "load_inline")
    attribute_sites = len(calls) - sites
    if not calls or _count_names(text) != imported + sites + attribute_sites:
        raise Unknown("load_inline used elsewhere")
    return calls


def extract(text: str):
    """The bound arguments of each load_inline call, in order, or None (see the module
    docstring); never raises."""
    try:
        return _calls(text)
    except (Unknown, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
