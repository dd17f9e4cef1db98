"""Writes to things the candidate does not own, anywhere in the file: timing functions
(py.timer_patch), imported modules and classes, builtins and global PyTorch settings
(py.module_patch), and the process environment (py.env_write)."""

import ast

from .names import is_under

TIMER_NAMES = ("time", "timeit", "triton.testing", "torch.cuda.Event", "torch.cuda.synchronize",
               "torch.cuda.Stream.synchronize", "torch.cuda.current_stream",
               "torch.cuda.default_stream", "torch.utils.benchmark", "torch.Event",
               "torch.cuda.streams.Event")
# Attribute names that are timing whatever object they are set on (except self/cls).
TIMER_ATTRS = ("elapsed_time", "synchronize", "perf_counter", "perf_counter_ns", "do_bench",
               "monotonic", "monotonic_ns", "process_time", "time_ns")
ENVIRON = ("os.environ", "os.environb")
ENV_MUTATORS = ("update", "setdefault", "pop", "popitem", "clear", "__setitem__",
                "__delitem__")
SETTERS = ("builtins.setattr", "builtins.delattr", "builtins.object.__setattr__")
PATCHERS = ("unittest.mock.patch", "mock.patch", "pytest.MonkeyPatch")
GLOBAL_SETTINGS = ("torch.set_*", "torch.use_deterministic_algorithms", "torch._C._set*",
                   "torch.backends.cudnn.flags", "torch.backends.cuda.enable_*",
                   "torch.backends.cuda.preferred_*", "torch.cuda.set_sync_debug_mode")
HARMLESS_SETTINGS = ("torch.set_grad_enabled", "torch.set_printoptions")


def _reaches_class(expr) -> bool:
    """`x.__class__...`, `type(x)...` or `__builtins__...`: writing through these patches
    a class or builtins rather than an object of the file."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Attribute) and n.attr in ("__class__", "__bases__", "__mro__"):
            return True
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "type":
            return True
        if isinstance(n, ast.Name) and n.id == "__builtins__":
            return True
    return False


class PatchChecker:
    def __init__(self, names, report):
        self.names, self.report = names, report

    def run(self):
        for n in self.names.nodes:
            if isinstance(n, (ast.Assign, ast.Delete)):
                for t in n.targets:
                    self.target(t, n.lineno)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                self.target(n.target, n.lineno)
            elif isinstance(n, ast.Call):
                self.call(n)

    def target(self, t, line):
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self.target(e, line)
        elif isinstance(t, ast.Subscript):
            base, owner = self.names.qualname(t.value), self.names.dict_owner(t.value)
            if is_under(base, ENVIRON):
                self.report.add("py.env_write", line, f"writes {base}[...]")
            elif owner:  # torch.__dict__["relu"], vars(time)[name], __builtins__["len"]
                self.write(self.names.qualname(t) or owner, None, line)
        elif isinstance(t, ast.Attribute):
            self.write(self.names.qualname(t), t, line)

    def write(self, qual, node, line, what="assigns"):
        """A write to import-rooted `qual` (or None) through attribute expression `node`."""
        attr = node.attr if isinstance(node, ast.Attribute) else (qual or "").rsplit(".", 1)[-1]
        base = node.value if isinstance(node, ast.Attribute) else None
        on_self = isinstance(base, ast.Name) and base.id in ("self", "cls")
        if is_under(qual, TIMER_NAMES) or (attr in TIMER_ATTRS and not on_self):
            self.report.add("py.timer_patch", line, f"{what} {qual or '.' + attr}: timing patch")
        elif is_under(qual, ENVIRON):
            self.report.add("py.env_write", line, f"{what} {qual}")
        elif qual:
            self.report.add("py.module_patch", line,
                            f"{what} {qual}: patches a module or class not defined here")
        elif base is not None and _reaches_class(base):
            self.report.add("py.module_patch", line, f"{what} .{attr} of an object's class")

    def call(self, n):
        q, f = self.names.qualname(n.func) or "", n.func
        if q in SETTERS and len(n.args) >= 2:
            self._setattr(n, n.args[0], n.args[1], q.rsplit(".", 1)[-1])
        elif isinstance(f, ast.Attribute) and f.attr in ("__setattr__", "__delattr__") and n.args:
            self._setattr(n, f.value, n.args[0], f.attr)
        elif is_under(q, PATCHERS) or q.endswith("monkeypatch.setattr"):
            self._mock(n, q)
        elif is_under(q, ("os.putenv", "os.unsetenv")) or (
                isinstance(f, ast.Attribute) and f.attr in ENV_MUTATORS
                and is_under(self.names.qualname(f.value), ENVIRON)):
            self.report.add("py.env_write", n.lineno, f"{q or f.attr}(): writes the environment")
        elif is_under(q, GLOBAL_SETTINGS) and not is_under(q, HARMLESS_SETTINGS):
            self.report.add("py.module_patch", n.lineno,
                            f"{q}(): changes global PyTorch settings")
        elif isinstance(f, ast.Attribute) and f.attr in ("update", "setdefault", "__setitem__") \
                and isinstance(f.value, ast.Attribute) and f.value.attr == "__dict__" \
                and self.names.qualname(f.value.value):
            self.report.add("py.module_patch", n.lineno,
                            f"{self.names.qualname(f.value.value)}.__dict__.{f.attr}()")

    def _setattr(self, n, obj, name_node, what):
        qual, name = self.names.qualname(obj), self.names.fold(name_node)
        on_self = isinstance(obj, ast.Name) and obj.id in ("self", "cls")
        if name is None and not qual and not on_self:
            self.report.add("py.module_patch", n.lineno,
                            f"{what} with a computed name: the screen cannot tell what it patches")
            return
        full = f"{qual}.{name}" if qual and name else qual
        self.write(full, ast.Attribute(value=obj, attr=name or "?"), n.lineno, what)

    def _mock(self, n, q):
        target = self.names.fold(n.args[0]) if n.args else None
        if q.endswith(".object") and len(n.args) >= 2:
            base, name = self.names.qualname(n.args[0]), self.names.fold(n.args[1])
            target = f"{base}.{name}" if base and name else base
        if target:
            self.write(target, None, n.lineno, "mock-patches")
        else:
            self.report.add("py.module_patch", n.lineno, f"{q}: patching")
