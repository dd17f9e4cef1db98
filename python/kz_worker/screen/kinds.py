"""A coarse kind for each name and expression of one function: tensor, Python scalar
(shapes, sizes, constants), loaded extension, torch.nn module/callable, or unknown.
Flow-insensitive: a name has the join of everything assigned to it."""

import ast

from .model import self_attr
from .names import is_under
from .torch_names import (
    NN_CONTAINERS,
    NN_HOLDERS,
    SCALAR_ATTRS,
    SCALAR_METHODS,
    TENSOR_ATTRS,
    TENSOR_COMPUTE_METHODS,
    TENSOR_VIEW_METHODS,
)

TENSOR, SCALAR, EXT, TMOD = "tensor", "scalar", "ext", "tmod"
_RANK = {None: 0, SCALAR: 1, EXT: 2, TMOD: 3, TENSOR: 4}
NOT_TENSOR_TORCH = ("torch.cuda", "torch.finfo", "torch.iinfo", "torch.device", "torch.Size",
                    "torch.dtype", "torch.get_default_dtype", "torch.numel", "torch.result_type",
                    "torch.promote_types", "torch.broadcast_shapes", "torch.no_grad",
                    "torch.inference_mode", "torch.utils", "torch.is_tensor", "torch.Generator")
SCALAR_BUILTINS = ("builtins.len", "builtins.int", "builtins.float", "builtins.bool",
                   "builtins.str", "builtins.isinstance", "builtins.range", "builtins.hasattr",
                   "builtins.id", "builtins.hash")
VALUE_BUILTINS = ("builtins.abs", "builtins.min", "builtins.max", "builtins.sum",
                  "builtins.round", "builtins.pow", "builtins.divmod")
SCALAR_ANNOTATIONS = ("int", "float", "bool", "str", "tuple", "list", "Optional", "Tuple",
                      "List", "Sequence")


def join(a, b):
    return a if _RANK[a] >= _RANK[b] else b


def annotation_kind(ann, names):
    if ann is None:
        return None
    if is_under(names.qualname(ann), ("torch.Tensor",)):
        return TENSOR
    root = ann.value if isinstance(ann, ast.Subscript) else ann
    ident = getattr(root, "id", getattr(root, "attr", None))
    return SCALAR if ident in SCALAR_ANNOTATIONS else None


class Kinds:
    """Kinds inside function `node` (of class `cls`, or None), given its parameters'."""

    def __init__(self, flow, node, cls, params: dict):
        self.flow, self.model, self.names = flow, flow.model, flow.model.names
        self.node, self.cls = node, cls
        args = node.args.posonlyargs + node.args.args if node is not None else []
        self.self_name = args[0].arg if cls is not None and args else None
        if node is None and cls is not None:
            self.self_name = "self"
        self.env = dict(params)
        self._nodes = self._walk()
        for _ in range(5):
            before = dict(self.env)
            for n in self.nodes():
                self._bind(n)
            if before == self.env:
                break

    def nodes(self):
        """Every node of the function except bodies of nested Triton kernels."""
        return self._nodes

    def _walk(self):
        out, stack = [], [self.node] if self.node is not None else []
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(c for c in ast.iter_child_nodes(n) if c not in self.model.triton_kernels)
        return out

    def _set(self, target, kind):
        if isinstance(target, ast.Name):
            self.env[target.id] = join(self.env.get(target.id), kind)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._set(t.value if isinstance(t, ast.Starred) else t, kind)

    def _bind(self, n):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) \
                        and len(t.elts) == len(n.value.elts):
                    for a, b in zip(t.elts, n.value.elts):
                        self._set(a, self.of(b))
                else:
                    self._set(t, self.of(n.value))
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            self._set(n.target, join(self.of(n.value), self.of(n.target)))
        elif isinstance(n, ast.NamedExpr):
            self._set(n.target, self.of(n.value))
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            self._set(n.target, self._element(n.iter))

    def _element(self, it):
        if isinstance(it, ast.Call):
            q = self.names.qualname(it.func)
            if q in ("builtins.range", "builtins.enumerate", "builtins.zip"):
                return SCALAR if q == "builtins.range" else None
        k = self.of(it)
        return k if k in (TENSOR, TMOD) else None

    def of(self, e):
        """The kind of expression `e`."""
        if isinstance(e, (ast.Constant, ast.JoinedStr)):
            return SCALAR
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return SCALAR if all(self.of(x) == SCALAR for x in e.elts) else None
        if isinstance(e, ast.Dict) and not e.keys:
            return SCALAR  # an empty dict: a Python object, not a tensor
        if isinstance(e, ast.Name):
            if e.id in self.env:
                return self.env[e.id]
            return EXT if e.id in self.model.ext_globals else self.flow.global_kind(e.id)
        if isinstance(e, ast.Attribute):
            return self._attribute(e)
        if isinstance(e, ast.Subscript):
            k = self.of(e.value)
            return k if k in (TENSOR, SCALAR, TMOD) else None
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, ast.BinOp):
            kinds = {self.of(e.left), self.of(e.right)}
            return TENSOR if TENSOR in kinds else SCALAR if kinds == {SCALAR} else None
        if isinstance(e, ast.UnaryOp):
            return self.of(e.operand)
        if isinstance(e, ast.Compare):
            return TENSOR if TENSOR in map(self.of, [e.left, *e.comparators]) else SCALAR
        if isinstance(e, ast.BoolOp):
            out = None
            for v in e.values:
                out = join(out, self.of(v))
            return out
        if isinstance(e, ast.IfExp):
            return join(self.of(e.body), self.of(e.orelse))
        return None

    def _attribute(self, e):
        if e.attr in SCALAR_ATTRS:
            return SCALAR
        if e.attr in TENSOR_ATTRS and self.of(e.value) == TENSOR:
            return TENSOR
        attr = self_attr(e, (self.self_name,)) if self.self_name else None
        if attr is not None:
            return self.flow.attr_kind(self.cls, attr)
        return None

    def _call(self, e):
        f = e.func
        q = self.names.qualname(f)
        if q:
            return self._qualified_call(q, e)
        if isinstance(f, ast.Attribute):
            recv = self.of(f.value)
            if recv == EXT:
                return TENSOR
            if f.attr in SCALAR_METHODS:
                return SCALAR
            if f.attr in TENSOR_VIEW_METHODS or f.attr in TENSOR_COMPUTE_METHODS:
                return TENSOR if recv == TENSOR else None
            if recv == TMOD and f.attr in ("forward", "__call__"):
                return TENSOR
        if self.model.is_ext_expr(e):
            return EXT
        if self.of(f) == TMOD:
            return TENSOR
        return self.flow.return_kind(self, e)

    def _qualified_call(self, q, e):
        if q.endswith("load_inline") or q.endswith("cpp_extension.load"):
            return EXT
        if is_under(q, ("torch.nn.Parameter", "torch.nn.parameter", "torch.nn.Buffer")):
            return TENSOR
        if is_under(q, NN_CONTAINERS):
            return TMOD if any(self._builds_torch_module(a) for a in e.args) else None
        if is_under(q, ("torch.nn",)) and not is_under(q, NN_HOLDERS + ("torch.nn.init",)):
            return TMOD
        if is_under(q, ("torch",)):
            return SCALAR if is_under(q, NOT_TENSOR_TORCH) else TENSOR
        if q in VALUE_BUILTINS:
            return TENSOR if TENSOR in map(self.of, e.args) else SCALAR
        if q in SCALAR_BUILTINS or is_under(q, ("math", "triton")) or (
                q in ("builtins.list", "builtins.dict", "builtins.set") and not e.args):
            return SCALAR
        return None

    def _builds_torch_module(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                q = self.names.qualname(n.func) or ""
                if is_under(q, ("torch.nn",)) and not is_under(q, NN_HOLDERS):
                    return True
        return False
