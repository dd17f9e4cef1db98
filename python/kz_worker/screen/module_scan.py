"""Op `module_scan`: the AST facts of many Torch module files in one child, no torch import
(docs/worker-protocol.md; the curriculum's mining and validation stage 1 decide on them in
C++, docs/curriculum.md).

Request: {"op": "module_scan", "paths": ["/abs/a.py", ...], "max_bytes": 1048576}
Result:  {"ok": true, "version": 1, "modules": [FILE, ...]} in the order of `paths`, where
FILE = {"path", "status": "ok" | "unreadable" | "too_large" | "not_utf8" | "syntax_error",
        "error": str | None, "line": int | None,
        and when ok: "imports": [module names], "top_level": {"classes": [...],
        "functions": [...]}, "model": {"defined", "bases", "methods"},
        "functions": {"Model.forward": {"calls", "ops", "line"}, ...},
        "canonical_hash": sha256 hex, "sketch": [up to 128 ints < 2^48], "bytes": int}
"""

import ast
import warnings

from ..protocol import ProtocolError
from .ast_facts import Resolver, canonical_dump, canonical_hash, function_facts, import_bindings, sketch

VERSION = 1
DEFAULT_MAX_BYTES = 1 << 20


def _model(tree: ast.Module) -> dict:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            bases = [ast.unparse(b) for b in node.bases]
            methods = [n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            return {"defined": True, "bases": bases, "methods": methods, "line": node.lineno}
    return {"defined": False, "bases": [], "methods": [], "line": None}


def facts_of_source(text: str) -> dict:
    """Facts of one source text (status ok or syntax_error)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        return {"status": "syntax_error", "error": f"{type(exc).__name__}: {exc.msg if isinstance(exc, SyntaxError) else exc}",
                "line": getattr(exc, "lineno", None)}
    env, modules = import_bindings(tree)
    top = {"classes": [n.name for n in tree.body if isinstance(n, ast.ClassDef)],
           "functions": [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]}
    local = set(top["classes"]) | set(top["functions"])
    facts = {"status": "ok", "error": None, "line": None, "imports": sorted(set(modules)),
             "top_level": top, "model": _model(tree),
             "functions": function_facts(tree, Resolver(env, local))}
    dump = canonical_dump(tree, env)  # last: it rewrites the tree
    facts["canonical_hash"], facts["sketch"] = canonical_hash(dump), sketch(dump)
    return facts


def scan_file(path: str, max_bytes: int) -> dict:
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        return {"path": path, "status": "unreadable", "error": str(exc), "line": None}
    if len(data) > max_bytes:
        return {"path": path, "status": "too_large", "error": f"more than {max_bytes} bytes", "line": None}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {"path": path, "status": "not_utf8", "error": str(exc), "line": None}
    out = {"path": path, "bytes": len(data)}
    out.update(facts_of_source(text))
    return out


def module_scan_op(request: dict) -> dict:
    paths = request.get("paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ProtocolError("paths: expected a list of strings")
    max_bytes = request.get("max_bytes", DEFAULT_MAX_BYTES)
    if type(max_bytes) is not int or max_bytes < 1:
        raise ProtocolError(f"max_bytes: invalid value {max_bytes!r}")
    return {"type": "result", "ok": True, "version": VERSION,
            "modules": [scan_file(p, max_bytes) for p in paths]}
