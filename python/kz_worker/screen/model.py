"""What the screen knows about a candidate file: its classes and functions, `ModelNew`,
attribute assignments per class, Triton kernels and loaded-extension names."""

import ast
from dataclasses import dataclass, field

from .names import Names, is_under
from .sources import flat_statements, is_load_inline
from .torch_names import NN_HOLDERS

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class ClassInfo:
    node: ast.ClassDef
    methods: dict = field(default_factory=dict)     # own methods by name
    bases: list = field(default_factory=list)       # in-file base class names
    base_quals: list = field(default_factory=list)  # import-rooted base names
    attrs: dict = field(default_factory=dict)       # attr -> [value exprs]

    @property
    def name(self):
        return self.node.name


def drop_main_guard(tree: ast.Module) -> None:
    """Remove `if __name__ == "__main__":` blocks (never run on import) unless the file
    assigns `__name__` itself."""
    if any(isinstance(n, ast.Name) and n.id == "__name__" and not isinstance(n.ctx, ast.Load)
           for n in ast.walk(tree)):
        return
    def is_guard(stmt):
        t = stmt.test if isinstance(stmt, ast.If) else None
        return (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name)
                and t.left.id == "__name__" and len(t.comparators) == 1
                and getattr(t.comparators[0], "value", None) == "__main__")
    tree.body = [s for s in tree.body if not is_guard(s)]


def decorator_quals(fn, names: Names):
    for d in fn.decorator_list:
        yield names.qualname(d.func if isinstance(d, ast.Call) else d) or ""


def self_attr(node, self_names=("self",)):
    """`X` of `self.X`, else None."""
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in self_names):
        return node.attr
    return None


class FileModel:
    def __init__(self, tree: ast.Module, names: Names):
        self.tree, self.names = tree, names
        self.classes, self.functions = {}, {}
        for stmt in flat_statements(tree.body):
            if isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = self._class_info(stmt)
            elif isinstance(stmt, FUNCS):
                self.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        self.functions[t.id] = stmt.value
        self._nested_functions()
        self.triton_kernels = {fn for fn in ast.walk(tree) if isinstance(fn, FUNCS) and any(
            q.startswith("triton") and q.endswith(".jit") for q in decorator_quals(fn, names))}
        self._module_level_attrs()
        self.model_new = self._find_model_new()
        self._globals = {}
        for stmt in flat_statements(tree.body):
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        self._globals.setdefault(t.id, []).append(stmt.value)
        self.ext_globals = set()
        self.ext_functions = set()
        for _ in range(3):
            self._find_extensions()

    def _class_info(self, node):
        info = ClassInfo(node)
        for b in node.bases:
            if isinstance(b, ast.Name) and b.id in self.classes:
                info.bases.append(b.id)
            else:
                info.base_quals.append(self.names.qualname(b) or "")
        for stmt in node.body:
            if isinstance(stmt, FUNCS):
                info.methods[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        info.attrs.setdefault(t.id, []).append(stmt.value)
        for fn in info.methods.values():
            self._collect_attrs(fn, info)
        return info

    def _collect_attrs(self, fn, info):
        first = fn.args.args[0].arg if fn.args.args else "self"
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if self_attr(t, (first,)):
                        info.attrs.setdefault(t.attr, []).append(node.value)
            elif isinstance(node, ast.Call) and len(node.args) > 1 and getattr(
                    node.func, "attr", None) in ("register_buffer", "register_parameter"):
                name = self.names.fold(node.args[0])
                if name:
                    info.attrs.setdefault(name, []).append(node.args[1])

    def _nested_functions(self):
        """Functions defined inside functions (and lambdas bound to names there), by name:
        a call by that name may run them."""
        methods = {fn for c in self.classes.values() for fn in c.methods.values()}
        for node in self.names.nodes:
            if isinstance(node, FUNCS) and node not in methods:
                self.functions.setdefault(node.name, node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.functions.setdefault(t.id, node.value)

    def _module_level_attrs(self):
        """`Cls.attr = value` and `setattr(Cls, "attr", value)` outside the class body."""
        for node in self.names.nodes:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                            and t.value.id in self.classes:
                        self.classes[t.value.id].attrs.setdefault(t.attr, []).append(node.value)
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" \
                    and len(node.args) == 3 and isinstance(node.args[0], ast.Name):
                name = self.names.fold(node.args[1])
                owner = node.args[0].id
                if name and owner in self.classes:
                    self.classes[owner].attrs.setdefault(name, []).append(node.args[2])
                elif name and owner == "self":
                    for c in self.classes.values():
                        if any(node in ast.walk(m) for m in c.methods.values()):
                            c.attrs.setdefault(name, []).append(node.args[2])

    def module_values(self, name):
        """Expressions assigned to module-level `name`."""
        return self._globals.get(name, [])

    def _find_model_new(self):
        for stmt in flat_statements(self.tree.body):
            if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "ModelNew" for t in stmt.targets):
                if isinstance(stmt.value, ast.Name) and stmt.value.id in self.classes:
                    return self.classes[stmt.value.id]
        return self.classes.get("ModelNew")

    def mro(self, cls: ClassInfo):
        """In-file classes of `cls`'s method resolution order (depth-first, no repeats)."""
        out, stack = [], [cls]
        while stack:
            c = stack.pop(0)
            if c not in out:
                out.append(c)
                stack.extend(self.classes[b] for b in c.bases if b in self.classes)
        return out

    def method(self, cls: ClassInfo, name: str):
        for c in self.mro(cls):
            if name in c.methods:
                return c.methods[name]
        return None

    def class_attrs(self, cls: ClassInfo, name: str):
        return [v for c in self.mro(cls) for v in c.attrs.get(name, [])]

    def torch_bases(self, cls: ClassInfo):
        """torch.nn classes `cls` inherits compute from (not nn.Module or containers)."""
        return [q for c in self.mro(cls) for q in c.base_quals
                if is_under(q, ("torch.nn",)) and not is_under(q, NN_HOLDERS)]

    def is_ext_expr(self, node, local_ext=()) -> bool:
        """True if `node` evaluates to a loaded extension module."""
        if isinstance(node, ast.Call):
            q = self.names.qualname(node.func) or ""
            if is_load_inline(node, self.names) or q.endswith("cpp_extension.load"):
                return True
            return isinstance(node.func, ast.Name) and node.func.id in self.ext_functions
        if isinstance(node, ast.Name):
            return node.id in self.ext_globals or node.id in local_ext
        return False

    def _find_extensions(self):
        """Names bound to a loaded extension, and functions that return one."""
        for node in self.names.nodes:
            if isinstance(node, ast.Assign) and self.is_ext_expr(node.value):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.ext_globals.add(t.id)
        for name, fn in self.functions.items():
            local = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign)
                     and self.is_ext_expr(n.value) for t in n.targets if isinstance(t, ast.Name)}
            if any(isinstance(n, ast.Return) and n.value is not None
                   and self.is_ext_expr(n.value, local) for n in ast.walk(fn)):
                self.ext_functions.add(name)
