"""Resolving expressions of a candidate to dotted names of what they were imported as.

`Names.qualname(expr)` turns `F.relu` (after `import torch.nn.functional as F`) into
"torch.nn.functional.relu", follows simple aliases (`mm = torch.matmul`), constant
`getattr(torch, "relu")` / `vars(torch)["relu"]`, and builtins ("builtins.open"). Names
are resolved per scope: a function's parameters and locals shadow module names and
builtins. Returns None for anything not rooted in an import.
"""

import ast
import builtins

BUILTIN_NAMES = frozenset(dir(builtins))
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def fold_str(node, strings=None):
    """A string expression folded to its value: constants, `+`, f-strings of constants,
    `sep.join([...])` and names in `strings` (module-level string constants); else None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name) and strings:
        return strings.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = fold_str(node.left, strings), fold_str(node.right, strings)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [fold_str(v, strings) for v in node.values]
        return "".join(parts) if None not in parts else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "join" and len(node.args) == 1 and \
            isinstance(node.args[0], (ast.List, ast.Tuple)):
        sep = fold_str(node.func.value, strings)
        parts = [fold_str(e, strings) for e in node.args[0].elts]
        return sep.join(parts) if sep is not None and None not in parts else None
    return None


class Scope:
    """Names bound in a module, class body or function."""

    def __init__(self, node, parent):
        self.node, self.parent = node, parent  # parent: the enclosing lookup scope
        self.bound, self.globals = set(), set()
        self.imports, self.aliases = {}, {}
        self.stars = []


def _bind_import(scope, node):
    if isinstance(node, ast.Import):
        for a in node.names:
            local = a.asname or a.name.split(".")[0]
            scope.imports[local] = a.name if a.asname else local
            scope.bound.add(local)
        return
    base = "." * node.level + (node.module or "")
    for a in node.names:
        if a.name == "*":
            scope.stars.append(base)
        else:
            scope.imports[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
            scope.bound.add(a.asname or a.name)


class Names:
    """Import-rooted, scope-aware name resolution for one module."""

    def __init__(self, tree: ast.Module):
        self.module = Scope(tree, None)
        self.scope_of = {}  # id(node) -> Scope the node is evaluated in
        self.nodes = []
        self._collect(tree)
        self.strings = {}  # module-level names bound once to a constant string
        stores = {}
        for n in self.nodes:
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and \
                    self.scope_of.get(id(n)) is self.module:
                stores[n.id] = stores.get(n.id, 0) + 1
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name) and stores.get(stmt.targets[0].id) == 1:
                value = fold_str(stmt.value, self.strings)
                if value is not None:
                    self.strings[stmt.targets[0].id] = value
        assigns = [n for n in self.nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
                   and isinstance(n.targets[0], ast.Name)]
        for _ in range(3):  # aliases of aliases
            for n in assigns:
                q = self.qualname(n.value)
                if q:
                    self.scope_of.get(id(n), self.module).aliases[n.targets[0].id] = q

    def _collect(self, tree):
        stack = [(tree, self.module)]
        while stack:
            node, scope = stack.pop()
            self.nodes.append(node)
            self.scope_of[id(node)] = scope
            inner = scope
            if isinstance(node, FUNCTION_NODES + (ast.ClassDef,)):
                if not isinstance(node, ast.Lambda):
                    scope.bound.add(node.name)
                lookup = scope if not isinstance(scope.node, ast.ClassDef) else scope.parent
                inner = Scope(node, lookup)
                if isinstance(node, FUNCTION_NODES):
                    a = node.args
                    for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                        if p is not None:
                            inner.bound.add(p.arg)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                scope.bound.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                _bind_import(scope, node)
            elif isinstance(node, ast.Global):
                scope.globals.update(node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                scope.bound.add(node.name)
            for child in ast.iter_child_nodes(node):
                stack.append((child, inner))

    def _binding_scope(self, ident, scope):
        while scope is not None and scope.parent is not None:
            if ident in scope.bound and ident not in scope.globals:
                return scope
            scope = scope.parent
        return self.module

    def qualname(self, expr):
        """Dotted import-rooted name of `expr`, or None."""
        if isinstance(expr, ast.Name):
            return self.name(expr.id, expr)
        if isinstance(expr, ast.Attribute):
            base = self.qualname(expr.value)
            return f"{base}.{expr.attr}" if base else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            return self._call_qualname(expr)
        if isinstance(expr, ast.Subscript) and self.fold(expr.slice):
            return self._dict_qualname(expr)
        return None

    def name(self, ident: str, node=None):
        """What `ident`, read at `node` (default: module level), was imported as."""
        scope = self._binding_scope(ident, self.scope_of.get(id(node), self.module))
        if scope is not self.module:
            return scope.aliases.get(ident) or scope.imports.get(ident)
        m = self.module
        if ident in m.aliases or ident in m.imports:
            return m.aliases.get(ident) or m.imports[ident]
        if ident in m.bound:
            return None
        if ident == "__builtins__":
            return "builtins"
        if ident in BUILTIN_NAMES:
            return "builtins." + ident
        return f"{m.stars[0]}.{ident}" if m.stars else None

    def is_local(self, node: ast.Name) -> bool:
        """True if the name read at `node` is bound inside a function or class body."""
        scope = self.scope_of.get(id(node), self.module)
        return self._binding_scope(node.id, scope) is not self.module

    def binding(self, ident: str, node) -> Scope:
        """The scope whose `ident` a read or write of `ident` at `node` refers to."""
        return self._binding_scope(ident, self.scope_of.get(id(node), self.module))

    def _call_qualname(self, call):
        fn = self.name(call.func.id, call.func)
        if fn == "builtins.getattr" and len(call.args) >= 2:
            base, attr = self.qualname(call.args[0]), self.fold(call.args[1])
            return f"{base}.{attr}" if base and attr else None
        if fn in ("builtins.__import__", "importlib.import_module") and call.args:
            return self.fold(call.args[0])
        return None

    def fold(self, node):
        """`node` folded to a string constant (see fold_str), or None."""
        return fold_str(node, self.strings)

    def dict_owner(self, value):
        """The import-rooted object whose namespace `value` is (`X.__dict__`, `vars(X)`,
        `__builtins__`), or None."""
        if isinstance(value, ast.Attribute) and value.attr == "__dict__":
            return self.qualname(value.value)
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and self.name(value.func.id, value.func) == "builtins.vars" and value.args):
            return self.qualname(value.args[0])
        if isinstance(value, ast.Name) and value.id == "__builtins__":
            return "builtins"
        return None

    def _dict_qualname(self, sub):
        base = self.dict_owner(sub.value)
        return f"{base}.{self.fold(sub.slice)}" if base else None


def is_under(qual, prefixes) -> bool:
    """True if dotted `qual` equals or lies under any of `prefixes` ("a.b" covers "a.b.c";
    a prefix ending in "*" matches any continuation, e.g. "os.spawn*")."""
    if not qual:
        return False
    for p in prefixes:
        if p.endswith("*"):
            if qual.startswith(p[:-1]):
                return True
        elif qual == p or qual.startswith(p + "."):
            return True
    return False
