"""py.try_except outside ModelNew's reach: module-level code, helpers, other classes.

A `try` with handlers there is a fallback, and is reported at its line, when
  1. its body builds the extension (`load_inline`, or a call of an in-file function that
     returns one): a silent fallback for a failed build;
  2. a handler computes with PyTorch (directly or through in-file functions it calls); or
  3. a handler sets a flag that selects a path computing with PyTorch. Flags are names
     (per scope) and `self.` attributes a handler assigns or imports, calls of the
     function holding the try when a handler returns, and what is assigned from them
     (`USE_TORCH = not HAS_TRITON`, `self.fast = HAS_TRITON`). A path is the body or
     `else` of an `if` testing a flag (and the statements after it when its body ends in
     `return`), either branch of `a if flag else b`, or another operand of `and`/`or`.
A `try` whose handlers all end in `raise` (with no `return`/`break`/`continue` in a
handler or in `finally`) is not a fallback. Tries inside ModelNew's reach are reported by
scope_rules.check_try (every one of them) and skipped here.
"""

import ast

from .compute_index import FUNCS, ComputeIndex
from .model import self_attr
from .policy import Report
from .scope_rules import model_entries

FLAG_BUILTINS = ("builtins.getattr", "builtins.hasattr", "builtins.callable",
                 "builtins.isinstance", "builtins.bool")
ESCAPES = (ast.Return, ast.Break, ast.Continue)
INSTEAD = "a fallback instead of the candidate's kernel"


def _escapes(stmts) -> bool:
    return any(isinstance(n, ESCAPES) for s in stmts for n in ast.walk(s))


def reraises(t) -> bool:
    """Every handler of `t` ends in `raise`, and nothing swallows the exception."""
    return all(h.body and isinstance(h.body[-1], ast.Raise) and not _escapes(h.body)
               for h in t.handlers) and not _escapes(t.finalbody)


def _tries(tree, kernels):
    """(try with handlers, innermost enclosing function or None), in source order."""
    out, stack = [], [(tree, None)]
    while stack:
        node, fn = stack.pop()
        if node in kernels:
            continue
        if isinstance(node, ast.Try) and node.handlers or type(node).__name__ == "TryStar":
            out.append((node, fn))
        inner = node if isinstance(node, FUNCS + (ast.Lambda,)) else fn
        stack.extend((c, inner) for c in ast.iter_child_nodes(node))
    return sorted(out, key=lambda p: p[0].lineno)


def _paths(tree):
    """[(test, [path nodes])] of every branch point: if, a if c else b, and/or."""
    after, out = {}, []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for i, s in enumerate(stmts):
                    after[id(s)] = stmts[i + 1:]
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            rest = after.get(id(node), []) if isinstance(node.body[-1], ast.Return) else []
            out.append((node.test, node.body + node.orelse + rest))
        elif isinstance(node, ast.IfExp):
            out.append((node.test, [node.body, node.orelse]))
        elif isinstance(node, ast.BoolOp):
            for v in node.values:
                out.append((v, [o for o in node.values if o is not v]))
    return out


class Flags:
    """What the handlers of one try set that later code can test (module docstring, 3)."""

    def __init__(self, names, t, fn):
        self.names, self.vars, self.attrs, self.probes = names, set(), set(), set()
        for h in t.handlers:
            for n in ast.walk(h):
                self._bind(n)
                if isinstance(n, ast.Return) and isinstance(fn, FUNCS):
                    self.probes.add(fn.name)

    def _key(self, ident, node):
        return id(self.names.binding(ident, node)), ident

    def _bind(self, n) -> bool:
        """Add the names or self. attributes `n` assigns; True if any was new."""
        before = len(self.vars) + len(self.attrs)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            self.vars.add(self._key(n.id, n))
        elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) and self_attr(n):
            self.attrs.add(n.attr)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                ident = a.asname or a.name.split(".")[0]
                self.vars.add(self._key(ident, n))
        return len(self.vars) + len(self.attrs) > before

    def spread(self, nodes) -> None:
        """Assignments whose value tests a flag make their targets flags too."""
        assigns = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign))
                   and n.value is not None]
        for _ in range(5):
            changed = False
            for n in assigns:
                if self.mentions(n.value):
                    for t in getattr(n, "targets", [getattr(n, "target", None)]):
                        changed |= any([self._bind(e) for e in ast.walk(t)])
            if not changed:
                return

    def mentions(self, e) -> bool:
        """True if boolean-ish expression `e` tests a flag."""
        if isinstance(e, ast.Name):
            return self._key(e.id, e) in self.vars
        if isinstance(e, ast.Attribute):
            return self_attr(e) in self.attrs or self.mentions(e.value)
        if isinstance(e, ast.UnaryOp):
            return self.mentions(e.operand)
        if isinstance(e, ast.BoolOp):
            return any(map(self.mentions, e.values))
        if isinstance(e, ast.Compare):
            return any(map(self.mentions, [e.left, *e.comparators]))
        if isinstance(e, ast.IfExp):
            return self.mentions(e.test)
        if isinstance(e, ast.Call):
            if isinstance(e.func, ast.Name) and e.func.id in self.probes:
                return True
            return self.names.qualname(e.func) in FLAG_BUILTINS and any(map(self.mentions, e.args))
        return False


def _reason(t, fn, model, index, paths):
    """Why try `t` is a fallback (a phrase), or None."""
    if any(isinstance(n, ast.Call) and model.is_ext_expr(n) for s in t.body for n in ast.walk(s)):
        return "around load_inline: a silent fallback if the build fails"
    hit = index.first_compute(t.handlers)
    if hit is not None:
        return (f"computes with PyTorch in its except branch (line {hit.lineno}): "
                f"{INSTEAD}")
    flags = Flags(model.names, t, fn)
    if not (flags.vars or flags.attrs or flags.probes):
        return None
    flags.spread(model.names.nodes)
    for test, path in paths:
        if flags.mentions(test):
            hit = index.first_compute(path)
            if hit is not None:
                return (f"sets a flag in its except branch that selects PyTorch compute "
                        f"(tested at line {test.lineno}, computed at line {hit.lineno}): "
                        f"{INSTEAD}")
    return None


def check_fallbacks(model, report) -> None:
    """Report try/except fallbacks outside ModelNew's reach (module docstring). Runs
    after check_model_new: tries already reported as py.try_except are skipped."""
    reported = {f["line"] for f in report.findings if f["rule"] == "py.try_except"}
    tries = [(t, fn) for t, fn in _tries(model.tree, model.triton_kernels)
             if t.lineno not in reported and not reraises(t)]
    if not tries:
        return
    index = ComputeIndex(model, model_entries(model, Report(report.policy)))
    paths = _paths(model.tree)
    for t, fn in tries:
        reason = _reason(t, fn, model, index, paths)
        if reason:
            where = f"in {fn.name}" if isinstance(fn, FUNCS) else "at module level"
            report.add("py.try_except", t.lineno, f"try/except {where} {reason}")
