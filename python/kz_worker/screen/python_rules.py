"""File-wide Python rules matched on import-rooted names: anything in the file (imports,
calls, references, decorators, class bases) that resolves under one of a rule's names,
attribute names that are hits on any object (`f_back`, `__torch_function__`), and the
task's names (`Model`, `get_inputs`) used without being defined in the file.
Code under `if __name__ == "__main__":` is not screened (it never runs on import)."""

import ast

from .names import is_under

# (rule, names, what it is); a name covers everything under it ("os.spawn*": a prefix).
PATTERNS = (
    ("py.concurrency", (
        "threading", "_thread", "multiprocessing", "concurrent.futures", "asyncio",
        "subprocess", "signal", "os.fork", "os.forkpty", "os.system", "os.popen", "os.spawn*",
        "os.exec*", "os.posix_spawn*", "os.register_at_fork", "torch.multiprocessing", "pty"),
     "threads, processes or signals"),
    ("py.extra_stream", (
        "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.streams", "torch.cuda.graph",
        "torch.cuda.graphs", "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables",
        "torch.cuda.set_stream", "torch.cuda.ExternalStream", "torch.cuda.StreamContext",
        "torch.cuda.graph_pool_handle", "torch.Stream"),
     "an extra CUDA stream or graph"),
    ("py.tensor_subclass", (
        "torch.library", "torch._library", "torch.overrides.TorchFunctionMode",
        "torch.utils._python_dispatch", "torch._C._make_subclass", "torch.Tensor._make_subclass",
        "torch.Tensor._make_wrapper_subclass", "torch._C.DisableTorchFunction",
        "torch._C._disabled_torch_function_impl", "torch.Tensor.as_subclass"),
     "tensor subclassing or operator registration"),
    ("py.torch_compile", (
        "torch.compile", "torch._dynamo", "torch._inductor", "torch.jit.script", "torch.jit.trace",
        "torch.jit.trace_module", "torch.jit.script_method", "torch.jit.freeze",
        "torch.jit.optimize_for_inference", "torch.jit.fork", "torch.jit.load",
        "torch.jit._script", "torch.export", "torch._export", "torch._functorch"),
     "PyTorch compilation"),
    ("py.introspection", (
        "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile",
        "inspect.currentframe", "inspect.stack", "inspect.getouterframes",
        "inspect.getinnerframes", "inspect.trace", "gc.get_objects", "gc.get_referrers",
        "gc.get_referents", "traceback.walk_stack", "builtins.globals", "builtins.exec",
        "builtins.eval", "builtins.compile"),
     "frame, object-graph or dynamic-code introspection"),
    ("py.reference_access", (
        "sys.modules", "importlib", "__main__", "builtins.__import__", "builtins.open",
        "io.open", "io.FileIO", "os.open", "os.read", "os.fdopen", "os.listdir", "os.scandir",
        "os.walk", "glob", "linecache", "inspect.getsource", "inspect.getsourcelines",
        "inspect.getsourcefile", "inspect.getfile", "inspect.getmodule", "torch.load",
        "numpy.load", "numpy.fromfile", "numpy.loadtxt", "pickle.load", "builtins.__builtins__",
        "pathlib.Path.read_text", "pathlib.Path.read_bytes"),
     "access outside the candidate (modules, files, the task)"),
    ("py.native_loader", (
        "ctypes", "_ctypes", "cffi", "torch.ops.load_library", "torch.classes.load_library",
        "torch.utils.cpp_extension.load", "importlib.machinery.ExtensionFileLoader", "imp",
        "cppyy"),
     "loading native code other than load_inline"),
    ("py.raw_io", (
        "os.write", "os.writev", "os.pwrite", "os.pwritev", "os.sendfile", "os.dup", "os.dup2",
        "os.fstat", "os.lseek", "os.close", "os.closerange", "os.pipe", "os.mkfifo",
        "socket", "fcntl", "mmap", "select", "selectors", "io.open_code"),
     "raw file-descriptor or socket I/O (the verifier's channel is off limits)"),
)
# Attribute (and function) names that are hits whatever object they belong to.
ATTRIBUTES = {
    "f_back": "py.introspection", "f_locals": "py.introspection", "f_globals": "py.introspection",
    "tb_frame": "py.introspection", "gi_frame": "py.introspection", "cr_frame": "py.introspection",
    "__globals__": "py.introspection", "__closure__": "py.introspection",
    "_make_subclass": "py.tensor_subclass", "_make_wrapper_subclass": "py.tensor_subclass",
    "__torch_function__": "py.tensor_subclass", "__torch_dispatch__": "py.tensor_subclass",
    "as_subclass": "py.tensor_subclass", "read_text": "py.reference_access",
    "read_bytes": "py.reference_access",
}
REFERENCE_NAMES = ("Model", "get_inputs", "get_init_inputs")
TENSOR_BASES = ("torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase",
                "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.parameter.Buffer")
GLOBAL_SETTINGS = ("torch.set_*", "torch.use_deterministic_algorithms")
DYNAMIC_LOOKUPS = ("operator.attrgetter", "operator.methodcaller")
FREE_LOOKUPS = ("triton", "math")  # getattr(tl, dtype_name) is harmless


def rules_of(qual):
    """[(rule, what, matched name)] for an import-rooted name, one per matching rule."""
    found = []
    for rule, prefixes, what in PATTERNS:
        match = next((p for p in prefixes if is_under(qual, (p,))), None)
        if match:
            found.append((rule, what, match))
    return found


def claimed(qual) -> bool:
    """True if another rule owns `qual` (so py.torch_compute does not report it too)."""
    return bool(rules_of(qual)) or is_under(qual, GLOBAL_SETTINGS)


def _position(node):
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


class PatternChecker:
    """Reports each matched name of a rule once, at its first use in the file."""

    def __init__(self, names, report):
        self.names, self.report, self.seen = names, report, set()

    def hit(self, node, qual):
        for rule, what, pattern in rules_of(qual):
            if pattern not in self.seen:
                self.seen.add(pattern)
                self.report.add(rule, node.lineno, f"{qual}: {what}")

    def run(self):
        nodes = sorted(self.names.nodes, key=_position)
        for n in nodes:
            self.statement(n)
        inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        for n in nodes:  # outermost Name/Attribute chains
            if isinstance(n, (ast.Name, ast.Attribute)) and id(n) not in inner:
                q = self.names.qualname(n)
                if q:
                    self.hit(n, q)
                if isinstance(n, ast.Name) and n.id == "__builtins__":
                    self.report.add("py.reference_access", n.lineno,
                                    "__builtins__: access outside the candidate")
        _reference_names(self.names, self.report)

    def statement(self, n):
        report = self.report
        if isinstance(n, ast.Import):
            for a in n.names:
                self.hit(n, a.name)
        elif isinstance(n, ast.ImportFrom):
            base = "." * n.level + (n.module or "")
            self.hit(n, base)
            for a in n.names:
                self.hit(n, f"{base}.{a.name}")
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in ATTRIBUTES:
            report.add(ATTRIBUTES[n.name], n.lineno, f"defines {n.name}")
        elif isinstance(n, ast.ClassDef):
            self.bases(n, n.bases, f"class {n.name}")
        elif isinstance(n, ast.Attribute) and n.attr in ATTRIBUTES:
            report.add(ATTRIBUTES[n.attr], n.lineno, f".{n.attr}")
        elif isinstance(n, ast.Subscript) and self.names.fold(n.slice) is None:
            self.computed_lookup(n, self.names.dict_owner(n.value))
        elif isinstance(n, ast.Call):
            self.call(n)

    def call(self, n):
        q = self.names.qualname(n.func)
        if isinstance(n.func, ast.Attribute) and n.args and \
                self.names.qualname(n.func.value) == "builtins" and self.names.fold(n.args[0]):
            self.hit(n, "builtins." + self.names.fold(n.args[0]))  # __builtins__.get("open")
        elif q in ("builtins.type", "types.new_class") and len(n.args) >= 2:
            self.bases(n, [n.args[1]], f"{q.split('.')[-1]}()")
        elif q in DYNAMIC_LOOKUPS and n.args and self.names.fold(n.args[0]) is None:
            self.report.add("py.introspection", n.lineno,
                            f"{q}(<computed name>): a lookup the screen cannot read")
        elif q == "builtins.getattr" and len(n.args) >= 2 and self.names.fold(n.args[1]) is None:
            self.computed_lookup(n, self.names.qualname(n.args[0]))

    def computed_lookup(self, node, base):
        """getattr(module, <computed>) and module.__dict__[<computed>]: what it fetches
        (torch.compile? time.perf_counter?) cannot be read statically."""
        if base and not is_under(base, FREE_LOOKUPS):
            self.report.add("py.introspection", node.lineno,
                            f"{base} attribute looked up by a computed name")

    def bases(self, node, bases, what):
        """A class (statement, type() or new_class) deriving from torch.Tensor, also when
        the base is reached through another class's __mro__/__bases__."""
        for b in bases:
            for e in ast.walk(b):
                q = self.names.qualname(e) if isinstance(e, (ast.Name, ast.Attribute)) else None
                if is_under(q, TENSOR_BASES) or (q and q.startswith("torch") and any(
                        part in ("__mro__", "__bases__") for part in q.split("."))):
                    self.report.add("py.tensor_subclass", node.lineno, f"{what} subclasses {q}")
                    return


def _lookup_keys(nodes):
    """Expressions used as lookup keys: x[K], getattr(x, K), x.get(K)."""
    for n in nodes:
        if isinstance(n, ast.Subscript):
            yield n.slice
        elif isinstance(n, ast.Call) and len(n.args) >= 1:
            if getattr(n.func, "id", None) in ("getattr", "hasattr") and len(n.args) >= 2:
                yield n.args[1]
            elif getattr(n.func, "attr", None) in ("get", "__getitem__", "pop"):
                yield n.args[0]


def _reference_names(names, report):
    """The task's names (Model, get_inputs, ...) used but not defined in the file."""
    defined = names.module.bound - set(names.module.imports)
    for n in names.nodes:
        if isinstance(n, ast.Name) and n.id in REFERENCE_NAMES and isinstance(n.ctx, ast.Load) \
                and not names.is_local(n) and n.id not in defined:
            report.add("py.reference_access", n.lineno,
                       f"{n.id}: the task's reference, not defined in the candidate")
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if a.name in REFERENCE_NAMES or a.asname in REFERENCE_NAMES:
                    report.add("py.reference_access", n.lineno,
                               f"imports {a.name}: the task's reference")
    for key in _lookup_keys(names.nodes):
        value = names.fold(key)
        if value in REFERENCE_NAMES and value not in defined:
            report.add("py.reference_access", key.lineno, f"'{value}' looked up by name")


def check_patterns(names, report) -> None:
    PatternChecker(names, report).run()
