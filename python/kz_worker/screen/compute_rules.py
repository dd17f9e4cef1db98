"""py.torch_compute: PyTorch compute in `ModelNew.forward` and every in-file function it
reaches: torch.* calls outside the allowed kinds, tensor compute methods and operators,
calls of torch.nn modules and stored PyTorch callables, host math on tensors."""

import ast

from .kinds import EXT, SCALAR, TENSOR, TMOD
from .names import is_under
from .torch_names import DUNDER_OPS, TENSOR_COMPUTE_METHODS, TORCH_ALLOWED, TORCH_DENIED, TORCH_OPS_BUILTIN

HOST_MATH = ("numpy", "scipy", "operator", "cupy", "functools.reduce", "itertools.accumulate")
NOT_OPERATOR = ("operator.itemgetter", "operator.attrgetter", "operator.methodcaller",
                "operator.index")
VALUE_BUILTINS = ("builtins.abs", "builtins.min", "builtins.max", "builtins.sum",
                  "builtins.round", "builtins.pow", "builtins.divmod")
REFERENCE_NAMESPACES = ("torch.nn.functional", "torch.special", "torch.linalg", "torch.fft",
                        "torch.ops.aten")
IDENTITY_OPS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
        ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
        ast.BitXor: "^", ast.BitAnd: "&", ast.MatMult: "@", ast.USub: "-", ast.UAdd: "+",
        ast.Invert: "~"}


def _op(op):
    return _OPS.get(type(op), type(op).__name__)


def torch_call_is_compute(q: str, claimed) -> bool:
    """True if calling torch-rooted `q` is PyTorch compute (not allowed, not claimed by
    another rule)."""
    if claimed(q):
        return False
    if is_under(q, ("torch.ops",)):
        parts = q.split(".")
        return len(parts) > 2 and parts[2] in TORCH_OPS_BUILTIN
    return not is_under(q, TORCH_ALLOWED) or is_under(q, TORCH_DENIED)


def is_compute_reference(q: str, claimed) -> bool:
    """True if `q` names a PyTorch compute callable (as a value, e.g. `map(torch.relu, xs)`)."""
    return is_under(q, ("torch",)) and torch_call_is_compute(q, claimed) and (
        is_under(q, REFERENCE_NAMESPACES) or q.rsplit(".", 1)[-1] in TENSOR_COMPUTE_METHODS)


class ComputeChecker:
    """Emits py.torch_compute findings for one reached function (its Kinds)."""

    def __init__(self, kinds, where, report, claimed):
        self.k, self.where, self.report, self.claimed = kinds, where, report, claimed
        self.names = kinds.names
        self.not_values = set()  # ids of call targets and attribute bases
        for c in kinds.nodes():
            if isinstance(c, ast.Call):
                self.not_values.add(id(c.func))
            elif isinstance(c, ast.Attribute):
                self.not_values.add(id(c.value))

    def flag(self, node, what):
        self.report.add("py.torch_compute", node.lineno,
                        f"{what} in {self.where}: PyTorch compute")

    def run(self):
        of = self.k.of
        for n in self.k.nodes():
            if isinstance(n, ast.Call):
                self.call(n)
            elif isinstance(n, ast.BinOp):
                if isinstance(n.op, ast.MatMult) or TENSOR in (of(n.left), of(n.right)):
                    self.flag(n, f"operator {_op(n.op)} on a tensor")
            elif isinstance(n, ast.AugAssign):
                if isinstance(n.op, ast.MatMult) or TENSOR in (of(n.target), of(n.value)):
                    self.flag(n, f"operator {_op(n.op)}= on a tensor")
            elif isinstance(n, ast.UnaryOp) and not isinstance(n.op, ast.Not):
                if of(n.operand) == TENSOR:
                    self.flag(n, f"unary {_op(n.op)} on a tensor")
            elif isinstance(n, ast.Compare):
                value_ops = [o for o in n.ops if not isinstance(o, IDENTITY_OPS)]
                if value_ops and TENSOR in map(of, [n.left, *n.comparators]):
                    self.flag(n, "comparison of tensors")
            elif isinstance(n, ast.Subscript) and of(n.slice) == TENSOR and of(n.value) == TENSOR:
                self.flag(n, "indexing a tensor with a tensor (gather/scatter)")
            elif isinstance(n, (ast.Attribute, ast.Name)) and id(n) not in self.not_values:
                q = self.names.qualname(n)
                if q and isinstance(n.ctx, ast.Load) and is_compute_reference(q, self.claimed):
                    self.flag(n, f"reference to {q}")

    def holds_tensor(self, e) -> bool:
        """`e` is a tensor, or a list/tuple/set/comprehension of tensors."""
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return any(self.k.of(x) == TENSOR for x in e.elts)
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.k.of(e.elt) == TENSOR
        return self.k.of(e) == TENSOR

    def call(self, n):
        f, q = n.func, self.names.qualname(n.func)
        if not q and isinstance(f, ast.Call) and len(f.args) >= 2 and \
                self.names.qualname(f.func) == "builtins.getattr" and self.names.fold(f.args[1]):
            attr = ast.Attribute(f.args[0], self.names.fold(f.args[1]), ast.Load())
            f = ast.copy_location(attr, f)  # getattr(x, "relu")() is x.relu()
        if q:
            self.qualified_call(n, q)
        elif isinstance(f, ast.Attribute):
            self.method_call(n, f)
        elif self.k.of(f) == TMOD:
            self.flag(n, "call of a PyTorch callable or torch.nn module")

    def qualified_call(self, n, q):
        tensors = any(self.holds_tensor(a) for a in n.args + [kw.value for kw in n.keywords])
        if is_under(q, ("torch",)) and torch_call_is_compute(q, self.claimed):
            self.flag(n, f"{q}()")
        elif is_under(q, HOST_MATH) and not is_under(q, NOT_OPERATOR) and tensors:
            self.flag(n, f"{q}() on a tensor")
        elif q in VALUE_BUILTINS and tensors:
            self.flag(n, f"{q.split('.')[-1]}() on a tensor")
        elif q == "builtins.getattr" and len(n.args) >= 2 and self.names.fold(n.args[1]) is None \
                and (self.k.of(n.args[0]) == TENSOR or self.names.qualname(n.args[0])):
            self.flag(n, "getattr with a computed name on a tensor or module")

    def method_call(self, n, f):
        k, recv = self.k, self.k.of(f.value)
        if recv == EXT or (isinstance(f.value, ast.Name) and f.value.id in k.model.classes):
            return  # the loaded extension, or an in-file class (followed by the flow)
        if isinstance(f.value, ast.Call) and getattr(f.value.func, "id", None) == "super":
            bases = k.model.torch_bases(k.cls) if k.cls else []
            if f.attr in ("forward", "__call__") and bases:
                self.flag(n, f"super().{f.attr}() of {bases[0]}")
        elif k.self_name and isinstance(f.value, ast.Name) and f.value.id == k.self_name:
            if k.of(f) == TMOD:
                self.flag(n, f"self.{f.attr}() (a PyTorch callable or torch.nn module)")
        elif recv == TMOD and f.attr in ("forward", "__call__"):
            self.flag(n, f"{f.attr}() of a torch.nn module")
        elif (f.attr in TENSOR_COMPUTE_METHODS or f.attr in DUNDER_OPS) and recv != SCALAR:
            self.flag(n, f"tensor method .{f.attr}()")
