"""Which functions of the file run when `ModelNew` runs, and the kinds of their names.

Starting from entry methods, follows calls and references to in-file functions, methods
(`self.m`, `super().m`, `Cls.m`), classes (construction; instances stored on `self` and
called; `Fn.apply`), binding argument kinds to parameters, until nothing changes.
"""

import ast

from .kinds import EXT, SCALAR, TENSOR, TMOD, Kinds, annotation_kind, join
from .model import self_attr
from .names import is_under
from .torch_names import NN_HOLDERS, TENSOR_COMPUTE_METHODS

ROUNDS = 20  # call depth over which argument kinds are propagated


def _decorators(fn):
    return {getattr(d, "id", getattr(d, "attr", None))
            for d in getattr(fn, "decorator_list", [])}


def skips_first(fn) -> bool:
    return "staticmethod" not in _decorators(fn)


class Flow:
    """Reachability and kinds over one file model (see the module docstring)."""

    def __init__(self, model):
        self.model = model
        self.kinds = {}      # function node -> Kinds
        self.returns = {}    # function node -> kind of its return values
        self._attr_cache = {}
        self._evaluators = {}
        self._state = {}     # function node -> (class, params)

    # ---- attributes, globals and returns, used by Kinds ----------------------------------
    def attr_kind(self, cls, attr):
        key = (cls.name, attr)
        if key not in self._attr_cache:
            self._attr_cache[key] = None  # recursion guard
            if cls.name not in self._evaluators:
                init = self.model.method(cls, "__init__")
                self._evaluators[cls.name] = Kinds(self, init, cls, {})
            self._attr_cache[key] = self._value_kind(self.model.class_attrs(cls, attr),
                                                     self._evaluators[cls.name])
        return self._attr_cache[key]

    def global_kind(self, name):
        key = (None, name)
        if key not in self._attr_cache:
            self._attr_cache[key] = None
            self._attr_cache[key] = self._value_kind(self.model.module_values(name),
                                                     Kinds(self, None, None, {}))
        return self._attr_cache[key]

    def _value_kind(self, exprs, evaluator):
        kind = None
        for expr in exprs:
            k = evaluator.of(expr)
            if self.model.is_ext_expr(expr):
                k = EXT
            elif k is None and holds_torch_callable(expr, self.model.names):
                k = TMOD
            kind = join(kind, k)
        return kind

    def return_kind(self, kinds, call):
        out = None
        for fn, _, _ in self.callees(kinds, call.func):
            out = join(out, self.returns.get(fn))
        return out

    # ---- call targets ----------------------------------------------------------------------
    def callees(self, kinds, f):
        """[(function node, class, skip first parameter)] that calling `f` may run."""
        m, out = self.model, []
        if isinstance(f, ast.Name) and f.id not in kinds.env:
            if f.id in m.functions:
                out.append((m.functions[f.id], None, False))
            elif f.id in m.classes:
                out += self._methods(m.classes[f.id], ("__init__", "__new__"))
        elif isinstance(f, ast.Attribute):
            out += self._attribute_callees(kinds, f)
        elif isinstance(f, ast.Subscript):
            attr = self_attr(f.value, (kinds.self_name,)) if kinds.self_name else None
            if attr:
                out += self._instances(kinds.cls, attr)
        return [c for c in out if c[0] is not None and c[0] not in m.triton_kernels]

    def _attribute_callees(self, kinds, f):
        m, v = self.model, f.value
        if kinds.self_name and isinstance(v, ast.Name) and v.id == kinds.self_name and kinds.cls:
            fn = m.method(kinds.cls, f.attr)
            if fn is not None:
                return [(fn, kinds.cls, skips_first(fn))]
            return self._instances(kinds.cls, f.attr)
        if isinstance(v, ast.Name) and v.id in m.classes and v.id not in kinds.env:
            cls = m.classes[v.id]
            if f.attr == "apply":
                return self._methods(cls, ("forward",))
            fn = m.method(cls, f.attr)
            return [(fn, cls, "classmethod" in _decorators(fn))] if fn else []
        if isinstance(v, ast.Call) and getattr(v.func, "id", None) == "super" and kinds.cls:
            for c in m.mro(kinds.cls)[1:]:
                if f.attr in c.methods:
                    return [(c.methods[f.attr], kinds.cls, skips_first(c.methods[f.attr]))]
        if kinds.self_name and self_attr(v, (kinds.self_name,)) and kinds.cls:
            found = self._instances(kinds.cls, v.attr, (f.attr,))
            if found:
                return found
        return self._any_method(f.attr)

    def _methods(self, cls, names):
        return [(fn, cls, skips_first(fn)) for fn in (self.model.method(cls, n) for n in names)
                if fn is not None]

    def _instances(self, cls, attr, methods=("forward", "__call__")):
        """`methods` of in-file classes constructed into attribute `attr`, and functions or
        methods stored (not called) into it."""
        out, called = [], set()
        for expr in self.model.class_attrs(cls, attr):
            for n in ast.walk(expr):
                if isinstance(n, ast.Call):
                    called.add(id(n.func))
            for n in ast.walk(expr):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                        and n.func.id in self.model.classes:
                    out += self._methods(self.model.classes[n.func.id], methods)
                elif id(n) in called:
                    continue
                elif isinstance(n, ast.Name) and n.id in self.model.functions:
                    out.append((self.model.functions[n.id], None, False))
                elif isinstance(n, ast.Lambda):
                    out.append((n, None, False))
                elif self_attr(n):
                    fn = self.model.method(cls, n.attr)
                    out += [(fn, cls, skips_first(fn))] if fn else []
        return out

    def _any_method(self, name):
        """Methods called `name` of any in-file class (receiver of unknown class)."""
        return [(c.methods[name], c, skips_first(c.methods[name]))
                for c in self.model.classes.values() if name in c.methods]

    # ---- the fixpoint ----------------------------------------------------------------------
    def reach(self, entries):
        """entries: [(function node, class, params)]. Returns {function node: Kinds}."""
        for fn, cls, params in entries:
            self._merge(fn, cls, params)
        for _ in range(ROUNDS):
            changed = False
            for fn in list(self._state):
                cls, params = self._state[fn]
                k = self.kinds[fn] = Kinds(self, fn, cls, params)
                ret = None
                for n in k.nodes():
                    if isinstance(n, ast.Return) and n.value is not None:
                        ret = join(ret, k.of(n.value))
                if ret != self.returns.get(fn):
                    self.returns[fn], changed = ret, True
                for callee, ccls, bound in self._edges(k):
                    changed |= self._merge(callee, ccls, bound)
            if not changed:
                break
        return {fn: self.kinds[fn] for fn in self._state if fn in self.kinds}

    def _merge(self, fn, cls, bound) -> bool:
        if fn not in self._state:
            self._state[fn] = (cls, {**default_params(fn, self.model.names), **bound})
            return True
        params = self._state[fn][1]
        changed = False
        for name, kind in bound.items():
            new = join(params.get(name), kind)
            if new != params.get(name):
                params[name], changed = new, True
        return changed

    def _edges(self, k):
        for n in k.nodes():
            if isinstance(n, ast.Call):
                for fn, cls, skip in self.callees(k, n.func):
                    yield fn, cls, bind_args(fn, skip, n, k)
            elif isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load):
                for fn, cls, _ in self.callees(k, n):
                    yield fn, cls, {}


def holds_torch_callable(expr, names) -> bool:
    """True if `expr` is, or contains, a PyTorch compute callable or torch.nn module
    (`F.relu`, `[torch.relu]`, `partial(torch.add, ...)`, `nn.ReLU()`)."""
    for n in ast.walk(expr):
        q = names.qualname(n) if isinstance(n, (ast.Name, ast.Attribute)) else None
        if q and is_under(q, ("torch",)) and (
                is_under(q, ("torch.nn.functional", "torch.special", "torch.linalg", "torch.fft",
                             "torch.ops.aten")) or q.rsplit(".", 1)[-1] in TENSOR_COMPUTE_METHODS
                or (is_under(q, ("torch.nn",)) and not is_under(q, NN_HOLDERS))):
            return True
    return False


def default_params(fn, names, entry=False):
    """Kinds of `fn`'s parameters from annotations and defaults (entry: forward's inputs,
    which are tensors unless annotated otherwise)."""
    a = fn.args
    params = a.posonlyargs + a.args
    out = {}
    defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
    for p, d in zip(params + a.kwonlyargs, defaults + list(a.kw_defaults)):
        kind = annotation_kind(p.annotation, names)
        if kind is None and d is not None and isinstance(d, ast.Constant):
            kind = SCALAR
        if kind is None and entry:
            kind = TENSOR
        out[p.arg] = kind
    for p in (a.vararg, a.kwarg):
        if p is not None:
            out[p.arg] = TENSOR if entry else None
    return out


def bind_args(fn, skip, call, kinds) -> dict:
    params = [p.arg for p in fn.args.posonlyargs + fn.args.args][1 if skip else 0:]
    bound = {}
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred) or i >= len(params):
            break
        bound[params[i]] = kinds.of(a)
    names = set(params) | {p.arg for p in fn.args.kwonlyargs}
    for kw in call.keywords:
        if kw.arg in names:
            bound[kw.arg] = kinds.of(kw.value)
    return bound
