"""Rules scoped to what runs with `ModelNew`: py.torch_compute and py.global_cache for
`forward` (and `__call__`, hooks, and every in-file function they reach), py.try_except
for all of `ModelNew`'s methods and what they reach (fallbacks elsewhere in the file:
fallback_rules); plus gen.no_kernel for Triton."""

import ast

from .cache_rules import CacheChecker
from .compute_rules import ComputeChecker
from .flow import Flow, default_params
from .model import self_attr
from .python_rules import claimed

ENTRY_METHODS = ("forward", "__call__", "_call_impl", "__getattr__", "__getattribute__")
HOOKS = ("register_forward_hook", "register_forward_pre_hook", "register_module_forward_hook",
         "register_module_forward_pre_hook")


def _entry(fn, cls, names):
    params = default_params(fn, names, entry=True)
    args = fn.args.posonlyargs + fn.args.args
    if args:
        params[args[0].arg] = None  # self
    return fn, cls, params


def _where(fn, model):
    """How findings name `fn`: ModelNew.forward, or helper (called from ModelNew)."""
    owner = next((c.name for c in model.classes.values() if fn in c.methods.values()), None)
    name = f"{owner}.{fn.name}" if owner else getattr(fn, "name", "<lambda>")
    return name if owner == "ModelNew" else f"{name} (called from ModelNew)"


def _assigned_entries(model, cls, attr, expr, report):
    """`forward = <expr>` (class body, `self.forward = ...`, `ModelNew.forward = ...`)."""
    q = model.names.qualname(expr)
    if q and q.startswith("torch"):
        report.add("py.torch_compute", expr.lineno, f"ModelNew.{attr} = {q}: PyTorch compute")
    out = []
    for n in ast.walk(expr):
        if isinstance(n, ast.Lambda):
            out.append(_entry(n, cls, model.names))
        elif isinstance(n, ast.Name) and n.id in model.functions:
            out.append(_entry(model.functions[n.id], cls, model.names))
        elif self_attr(n) and n.attr in cls.methods:
            out.append(_entry(cls.methods[n.attr], cls, model.names))
    return out


def _hook_targets(model, cls):
    """Functions registered as forward hooks in `cls`'s methods (they run on each call)."""
    for fn in cls.methods.values():
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and getattr(n.func, "attr", None) in HOOKS and n.args:
                a = n.args[0]
                if isinstance(a, ast.Name) and a.id in model.functions:
                    yield model.functions[a.id], None
                elif self_attr(a) and a.attr in cls.methods:
                    yield cls.methods[a.attr], cls


def model_entries(model, report) -> list:
    """[(function, class, params)] that run when ModelNew is called (forward, __call__,
    hooks, assigned entries); [] without a ModelNew. Reports what it sees on the way."""
    cls, names = model.model_new, model.names
    if cls is None:
        return []
    entries = [_entry(model.method(cls, m), cls, names) for m in ENTRY_METHODS
               if model.method(cls, m) is not None]
    entries += [(fn, c, {}) for fn, c in _hook_targets(model, cls)]
    if model.method(cls, "forward") is None and model.torch_bases(cls):
        report.add("py.torch_compute", cls.node.lineno,
                   f"ModelNew inherits forward from {model.torch_bases(cls)[0]}: PyTorch compute")
    for attr in ("forward", "__call__"):
        for expr in model.class_attrs(cls, attr):
            entries += _assigned_entries(model, cls, attr, expr, report)
    return entries


def check_model_new(model, report) -> None:
    cls = model.model_new
    if cls is None:
        report.note(None, "no class ModelNew: the ModelNew rules had nothing to screen")
        return
    for fn, kinds in Flow(model).reach(model_entries(model, report)).items():
        where = _where(fn, model)
        ComputeChecker(kinds, where, report, claimed).run()
        CacheChecker(kinds, where, report).run()
    methods = [(fn, c, {}) for c in model.mro(cls) for fn in c.methods.values()]
    for fn, kinds in Flow(model).reach(methods).items():
        check_try(kinds, _where(fn, model), report)


def check_try(kinds, where, report) -> None:
    for n in kinds.nodes():
        if isinstance(n, ast.Try) and n.handlers or type(n).__name__ == "TryStar":
            report.add("py.try_except", n.lineno, f"try/except in {where}: silent fallback")
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for item in n.items:
                e = item.context_expr
                q = kinds.names.qualname(e.func if isinstance(e, ast.Call) else e) or ""
                if q.endswith("contextlib.suppress") or q == "suppress":
                    report.add("py.try_except", n.lineno,
                               f"contextlib.suppress in {where}: silent fallback")


def check_suppressing_exit(model, report) -> None:
    """An in-file context manager whose __exit__ returns a true value swallows exceptions
    like try/except."""
    for cls in model.classes.values():
        for name in ("__exit__", "__aexit__"):
            fn = cls.methods.get(name)
            if fn is not None and any(
                    isinstance(n, ast.Return) and n.value is not None
                    and not (isinstance(n.value, ast.Constant) and not n.value.value)
                    for n in ast.walk(fn)):
                report.add("py.try_except", fn.lineno,
                           f"{cls.name}.{name} can swallow exceptions: silent fallback")


def check_triton_kernel(model, report) -> None:
    if not model.triton_kernels:
        report.add("gen.no_kernel", None, "triton candidate without a @triton.jit function")

