"""Facts about one Torch module's source, read with Python's `ast` only (no torch import):
the qualified names it calls per function, aliases resolved through its imports, and a
canonical hash (docs/curriculum.md, "Module facts"). The curriculum's C++ side decides
everything from these facts (which calls are catalog APIs, which are banned).

Name resolution:
  - `import torch.nn as nn`, `from torch import nn`, `from torch.nn import functional as F`,
    `from torch.nn import Conv2d`: a call through the bound name is the qualified name
    (`nn.Conv2d(...)` -> `torch.nn.Conv2d`, `F.relu(x)` -> `torch.nn.functional.relu`);
  - a method call on anything else (`x.relu()`, `self.w.t()`) -> `Tensor.relu`;
  - a builtin not bound in the module (`open`, `print`, `eval`) -> `builtins.open`;
  - a function or class of the module itself -> `local.name`;
  - `self.attr(...)` or any read of `self.attr` in a method, where `__init__` assigned
    `self.attr = nn.Something(...)` (a capitalised `torch.nn` constructor: Sequential,
    ModuleList, layers; not nn.Parameter or nn.Buffer, which are data) or an instance of a
    class of the module (`local.Block`) -> every call inside that assignment, as used there;
  - operators in function bodies: `@` torch.matmul, `+` torch.add, `-` torch.sub,
    `*` torch.mul, `/` torch.div, `**` torch.pow, `//` torch.floor_divide,
    `%` torch.remainder, unary `-` torch.neg (listed apart, as `ops`).
"""

import ast
import builtins
import hashlib
import re

OPERATORS = {ast.MatMult: "torch.matmul", ast.Add: "torch.add", ast.Sub: "torch.sub",
             ast.Mult: "torch.mul", ast.Div: "torch.div", ast.Pow: "torch.pow",
             ast.FloorDiv: "torch.floor_divide", ast.Mod: "torch.remainder"}
KEEP_NAMES = {"Model", "forward", "__init__", "get_inputs", "get_init_inputs", "self", "super"}
BUILTINS = set(dir(builtins))


def import_bindings(tree: ast.Module) -> tuple:
    """({local name: qualified prefix}, [imported module names]) over the whole file."""
    env, modules = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                modules.append(a.name)
                env[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            modules.append(base)
            for a in node.names:
                env[a.asname or a.name] = f"{base}.{a.name}"
    return env, modules


def _chain(node) -> list | None:
    """['F', 'relu'] for F.relu; None when the root is not a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


class Resolver:
    def __init__(self, env: dict, local: set):
        self.env, self.local = env, local

    def call_name(self, func) -> str | None:
        chain = _chain(func)
        if chain and chain[0] in self.env:
            return ".".join([self.env[chain[0]]] + chain[1:])
        if chain and len(chain) == 1:
            if chain[0] in self.local:
                return f"local.{chain[0]}"
            return f"builtins.{chain[0]}" if chain[0] in BUILTINS else None
        if isinstance(func, ast.Attribute):
            return f"Tensor.{func.attr}"
        return None

    def calls_in(self, node) -> list:
        out = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                name = self.call_name(sub.func)
                if name:
                    out.append(name)
        return out


def _ops_in(node) -> list:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, (ast.BinOp, ast.AugAssign)) and type(sub.op) in OPERATORS:
            out.append(OPERATORS[type(sub.op)])
        elif isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.USub) \
                and not isinstance(sub.operand, ast.Constant):
            out.append("torch.neg")
    return out


def _self_attr(node) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


DATA_CONSTRUCTORS = {"torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.parameter.Parameter",
                     "torch.nn.UninitializedParameter", "torch.nn.UninitializedBuffer"}


def _is_module_constructor(head: str) -> bool:
    """nn.Conv2d(...), nn.Sequential(...), a class of the module itself; not nn.Parameter."""
    last = head.rsplit(".", 1)[-1]
    if head.startswith("local."):
        return True
    return head.startswith("torch.nn.") and last[:1].isupper() and head not in DATA_CONSTRUCTORS


def _module_attrs(init: ast.FunctionDef, resolver: Resolver) -> dict:
    """self.attr -> qualified calls of its assignment, for module constructors only."""
    attrs = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            head = resolver.call_name(node.value.func) or ""
            if _is_module_constructor(head):
                for target in node.targets:
                    if _self_attr(target):
                        attrs[_self_attr(target)] = resolver.calls_in(node.value)
    return attrs


def _method_facts(cls: ast.ClassDef, resolver: Resolver) -> dict:
    methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    attrs = _module_attrs(methods["__init__"], resolver) if "__init__" in methods else {}
    out = {}
    for name, fn in methods.items():
        calls = resolver.calls_in(fn)
        if name != "__init__":
            for sub in ast.walk(fn):
                attr = _self_attr(sub)
                if attr in attrs and isinstance(sub.ctx, ast.Load):
                    calls.extend(attrs[attr])
        out[f"{cls.name}.{name}"] = {"calls": sorted(set(calls)), "ops": sorted(set(_ops_in(fn))),
                                     "line": fn.lineno}
    return out


def function_facts(tree: ast.Module, resolver: Resolver) -> dict:
    """{"Model.forward": {"calls": [...], "ops": [...], "line": n}, "get_inputs": ...,
    "<module>": top-level statements that are not definitions}."""
    out, loose = {}, []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out.update(_method_facts(node, resolver))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = {"calls": sorted(set(resolver.calls_in(node))),
                              "ops": sorted(set(_ops_in(node))), "line": node.lineno}
        else:
            loose.append(node)
    mod = ast.Module(body=loose, type_ignores=[])
    out["<module>"] = {"calls": sorted(set(resolver.calls_in(mod))), "ops": [], "line": 1}
    return out


def _locals(fn) -> list:
    """Names a function binds (arguments, then assigned names), in a fixed walk order."""
    out = [a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)]
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.append(node.id)
    return list(dict.fromkeys(out))


class _Canon(ast.NodeTransformer):
    """Renames every name the module binds to n0, n1, ... (module level, self attributes) or
    l0, l1, ... (a function's arguments and locals, numbered per function) in order of first
    appearance; drops docstrings and annotations. Imports, builtins and the KernelBench
    names stay."""

    def __init__(self, keep: set):
        self.keep, self.names, self.scopes = keep, {}, []

    def _rename(self, name: str) -> str:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.keep:
            return name
        return self.names.setdefault(name, f"n{len(self.names)}")

    def visit_Name(self, node):
        node.id = self._rename(node.id)
        return node

    def visit_arg(self, node):
        node.arg, node.annotation = self._rename(node.arg), None
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if _self_attr(node) is not None:
            node.attr = self._rename("self." + node.attr)
        return node

    def visit_AnnAssign(self, node):
        node = self.generic_visit(node)
        node.annotation = ast.Constant(None)
        return node

    def _body(self, node):
        if node.body and isinstance(node.body[0], ast.Expr) and \
                isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
        return node

    def visit_FunctionDef(self, node):
        node.name, node.returns = self._rename(node.name), None
        names = [n for n in _locals(node) if n not in KEEP_NAMES]
        self.scopes.append({n: f"l{i}" for i, n in enumerate(names)})
        node = self.generic_visit(self._body(node))
        self.scopes.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self._rename(node.name)
        return self.generic_visit(self._body(node))


SKETCH_K, SHINGLE = 128, 6


def canonical_dump(tree: ast.Module, env: dict) -> str:
    """The module with every name it binds renamed, docstrings and annotations dropped
    (rewrites `tree`)."""
    tree = _Canon(set(env) | BUILTINS | KEEP_NAMES).visit(tree)
    tree.body = _Canon(set())._body(tree).body
    return ast.dump(tree, include_attributes=False)


def canonical_hash(dump: str) -> str:
    """sha256 of the canonical dump: equal for two files that differ only in names the
    module binds, comments, docstrings, annotations and formatting."""
    return hashlib.sha256(dump.encode()).hexdigest()


def sketch(dump: str) -> list:
    """Bottom-k sketch of the canonical dump's word 6-grams (numbers as one token, so other
    sizes stay close): the SKETCH_K smallest 48-bit shingle hashes, sorted. Two modules'
    Jaccard similarity is estimated from their sketches (docs/curriculum.md, decontamination)."""
    words = ["#" if w[0].isdigit() else w for w in re.findall(r"[A-Za-z_]\w*|\d[\w.]*", dump)]
    grams = {" ".join(words[i:i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1))}
    hashes = {int.from_bytes(hashlib.blake2b(g.encode(), digest_size=6).digest(), "big") for g in grams}
    return sorted(hashes)[:SKETCH_K]
