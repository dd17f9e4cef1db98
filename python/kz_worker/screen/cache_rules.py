"""py.global_cache: results cached across calls of forward: `self` or module-level
containers written with identity/shape keys, identity values (data_ptr, id, _version)
or input tensors kept on `self`/globals or compared with them, memoising decorators."""

import ast

from .kinds import EXT, SCALAR, TENSOR
from .model import self_attr
from .names import is_under

KEY_CALLS = ("data_ptr", "untyped_storage", "storage", "size", "stride", "_version")
IDENTITY_CALLS = ("data_ptr", "untyped_storage", "storage", "_version")
MEMOISERS = ("functools.lru_cache", "functools.cache")
ADDERS = ("append", "insert", "add", "appendleft", "extend")
LIBRARY_FUNCTIONS = ("torch", "triton", "numpy", "math")  # their .add() etc. are functions


class _Keys:
    """Finds cache-key markers in expressions, following local names to what they hold."""

    def __init__(self, k):
        self.k, self.assigned = k, {}
        for n in k.nodes():
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    for name in ast.walk(t):
                        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                            self.assigned.setdefault(name.id, []).append(n.value)

    def markers(self, expr, with_shapes=True, seen=None):
        """Why `expr` looks like a result-cache key (shapes only if `with_shapes`), or None."""
        seen = set() if seen is None else seen
        for n in ast.walk(expr):
            why = self._marker(n, with_shapes)
            if why:
                return why
            if isinstance(n, ast.Name) and n.id not in seen and n.id in self.assigned:
                seen.add(n.id)
                for value in self.assigned[n.id]:
                    why = self.markers(value, with_shapes, seen)
                    if why:
                        return why
        if with_shapes and isinstance(expr, (ast.Name, ast.Attribute)) and \
                self.k.of(expr) == TENSOR:
            return "a tensor (hashed by identity)"
        return None

    def _marker(self, n, with_shapes):
        if isinstance(n, ast.Call):
            q = self.k.names.qualname(n.func)
            if q in ("builtins.id", "builtins.hash"):
                return f"{q.split('.')[-1]}()"
            name = getattr(n.func, "attr", None)
            if name in (KEY_CALLS if with_shapes else IDENTITY_CALLS):
                return f".{name}()"
        elif isinstance(n, ast.Attribute) and (
                n.attr == "_version" or (with_shapes and n.attr == "shape")):
            return f".{n.attr}"
        return None


class CacheChecker:
    """Emits py.global_cache findings for one reached function (its Kinds)."""

    def __init__(self, k, where, report):
        self.k, self.where, self.report = k, where, report
        self.keys = _Keys(k)
        declared = {n for s in k.nodes() if isinstance(s, ast.Global) for n in s.names}
        self.local = {t for t in k.env if t not in declared}
        self.params = set()
        if k.node is not None:
            self.params = {a.arg for a in k.node.args.args} - {k.self_name}
        self._stored = {}  # id(subscript target) -> the value assigned to it
        for n in k.nodes():
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    self._stored[id(t)] = n.value

    def persistent(self, e) -> bool:
        """`e` outlives the call: an attribute of self or of an in-file class, or a global."""
        k = self.k
        return bool(k.self_name and self_attr(e, (k.self_name,))) or (
            isinstance(e, ast.Name) and e.id not in self.local) or (
            isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name)
            and e.value.id in k.model.classes)

    def kept_input(self, expr):
        """A forward input tensor itself (not a value computed from it) inside `expr`."""
        inner = set()
        for n in ast.walk(expr):
            if isinstance(n, (ast.Attribute, ast.Call, ast.Subscript)):
                inner.update(id(c) for c in ast.iter_child_nodes(n))
        for n in ast.walk(expr):
            if isinstance(n, ast.Call) and is_under(self.k.names.qualname(n.func), ("weakref",)):
                inner.difference_update(id(a) for a in n.args)  # a weak reference keeps it too
        for n in ast.walk(expr):
            if isinstance(n, ast.Name) and n.id in self.params and id(n) not in inner \
                    and self.k.of(n) == TENSOR:
                return n.id
        return None

    def flag(self, node, why):
        self.report.add("py.global_cache", node.lineno,
                        f"{why} in {self.where}: result caching across calls")

    def run(self):
        for n in self.k.nodes():
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) \
                    and self.persistent(n.value):
                self._keyed(n, n.slice, self._stored.get(id(n)))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args \
                    and self.persistent(n.func.value):
                self._container_call(n)
            elif isinstance(n, (ast.Assign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(self.persistent(t) for t in targets):
                    self._kept(n, n.value)
            elif isinstance(n, ast.Compare):
                sides = [n.left, *n.comparators]
                why = next(filter(None, (self.keys.markers(s, False) for s in sides)), None)
                if why and any(self.persistent(s) for s in sides):
                    self.flag(n, f"{why} compared with state kept across calls")
        node, k = self.k.node, self.k
        tensors = k.flow.returns.get(node) == TENSOR or TENSOR in (
            k.env.get(p) for p in self.params)
        for d in getattr(node, "decorator_list", []):
            if k.names.qualname(d.func if isinstance(d, ast.Call) else d) in MEMOISERS and tensors:
                self.flag(node, "memoising decorator on a function of tensors")

    def _keyed(self, node, key, value):
        """A write of `value` under `key`: identity keys always count; shape keys unless the
        value is a Python scalar/tuple (a launch configuration) or a loaded extension."""
        why = self.keys.markers(key, with_shapes=False)
        if not why and (value is None or self.k.of(value) not in (SCALAR, EXT)):
            why = self.keys.markers(key)
        if why:
            self.flag(node, f"persistent container keyed by {why}")

    def _container_call(self, n):
        if is_under(self.k.names.qualname(n.func), LIBRARY_FUNCTIONS):
            return  # torch.add(a, x) is arithmetic, not a set's add
        if n.func.attr in ("setdefault", "__setitem__"):
            self._keyed(n, n.args[0], n.args[1] if len(n.args) > 1 else None)
        elif n.func.attr in ADDERS:
            for a in n.args:
                self._kept(n, a, identity=False)

    def _kept(self, node, value, identity=True):
        why = self.keys.markers(value, with_shapes=False) if identity else None
        kept = self.kept_input(value)
        if why:
            self.flag(node, f"{why} kept across calls")
        elif kept:
            self.flag(node, f"input tensor {kept} kept across calls")
