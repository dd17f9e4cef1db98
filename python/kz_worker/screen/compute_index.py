"""Where a file computes with PyTorch, for rules that ask whether a path does
(fallback_rules). py.torch_compute's checker is run, reporting nothing, over every
function and method of the file and over its module-level code, with the kinds the flow
gives (forward's inputs are tensors); a call counts as compute when an in-file function
it may run computes, directly or through further calls."""

import ast

from .compute_rules import ComputeChecker
from .flow import Flow
from .policy import Report
from .python_rules import claimed

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _Collect(ComputeChecker):
    """ComputeChecker that records the ids of flagged nodes instead of reporting."""

    def __init__(self, kinds, hits):
        super().__init__(kinds, "", Report("strict"), claimed)
        self.hits = hits

    def flag(self, node, what):
        self.hits[id(node)] = node


def module_code(tree):
    """A function node wrapping the module's statements other than definitions (the
    statements themselves, not copies), so that they get kinds like a function body."""
    body = [s for s in tree.body if not isinstance(s, FUNCS + (ast.ClassDef,))]
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])
    return ast.FunctionDef(name="<module>", args=args, body=body or [ast.Pass()],
                           decorator_list=[], returns=None, lineno=1, col_offset=0)


class ComputeIndex:
    """`first_compute(nodes)`: the earliest PyTorch compute node under `nodes`, or None."""

    def __init__(self, model, entries):
        kernels = model.triton_kernels
        others = [(fn, None, {}) for fn in model.functions.values() if fn not in kernels]
        others += [(fn, c, {}) for c in model.classes.values() for fn in c.methods.values()
                   if fn not in kernels]
        self.flow = Flow(model)
        self.kinds = self.flow.reach(list(entries) + others + [(module_code(model.tree), None, {})])
        self.hits = {}
        for k in self.kinds.values():
            _Collect(k, self.hits).run()
        self.computing_calls = self._computing_calls()

    def _computing_calls(self):
        """{id(call): call} of calls that may run an in-file function that computes."""
        edges = {fn: [(n, [c[0] for c in self.flow.callees(k, n.func)])
                      for n in k.nodes() if isinstance(n, ast.Call)]
                 for fn, k in self.kinds.items()}
        computing = {fn for fn, k in self.kinds.items() if any(id(n) in self.hits
                                                                for n in k.nodes())}
        changed = True
        while changed:
            changed = False
            for fn, calls in edges.items():
                if fn not in computing and any(c in computing for _, cs in calls for c in cs):
                    computing.add(fn)
                    changed = True
        return {id(n): n for calls in edges.values() for n, cs in calls
                if any(c in computing for c in cs)}

    def first_compute(self, nodes):
        found = [n for top in nodes for n in ast.walk(top)
                 if id(n) in self.hits or id(n) in self.computing_calls]
        return min(found, key=lambda n: (n.lineno, n.col_offset)) if found else None
