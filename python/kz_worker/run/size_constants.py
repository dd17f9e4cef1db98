"""The size constants of a task, and where the `perturbed_sizes` check moves them
(docs/verdict.md, `stages.extra_checks`).

Candidates. A module-level name is a candidate when
- `get_inputs` or `get_init_inputs` read it as a global: a LOAD_GLOBAL / LOAD_NAME in
  their code, in any code object nested in it (comprehensions, lambdas, inner functions),
  or, transitively, in the code of a function defined in the task module that they read
  (a helper such as `def shape(): return (B, D)`), whatever the name;
- its value is an `int` (not a `bool`, not an int subclass such as an IntEnum); and
- its value is at least MIN_SIZE. Smaller integers are taken to be axis indices
  (`dim = 1`), kernel sizes, strides, paddings, dilations or group counts, not sizes.

Attribute names (`x.size`) and names the function binds itself are not global reads, so
they are never candidates (reading `co_names` alone would mix them in). A constant read
only through a default argument (`def get_inputs(n=N)`) is bound when the function is
defined and is not seen.

Nudge. `nudge(v)` is the largest odd integer <= v - 2, i.e. v - 3 for even v and v - 2 for
odd v (1024 -> 1021, 16 -> 13, 8205 -> 8203, 8 -> 5, 9 -> 7). Every candidate moves by 2
or 3, the new value is odd, so it is a multiple of no power-of-two tile (and of no
power-of-two factor of the original), and it stays >= 5.

Memory budget. Every nudge goes down, never up: a tensor whose shape is a product of the
constants can only get smaller, so the check never needs more memory than the task's own
trials. (A shape that divides by a constant, `(N // C, C)`, can grow by at most
C / nudge(C) in that one dimension, <= 1.6x for C = 8; tasks written that way are rare.)
"""

import dis
import types

MIN_SIZE = 8  # smallest value taken for a size (see the module docstring)
_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})


def nudge(value: int) -> int:
    """The largest odd integer <= value - 2 (see the module docstring)."""
    down = value - 2
    return down if down % 2 else down - 1


def _global_reads(code: types.CodeType) -> set[str]:
    """Names `code` and the code objects nested in it load as globals."""
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in _GLOBAL_LOADS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_reads(const)
    return names


def _own_function(value, namespace: dict):
    """`value` as a function defined in `namespace`'s module (decorator wrappers that
    keep `__wrapped__` unwrapped), or None."""
    seen = 0
    while not isinstance(value, types.FunctionType) and hasattr(value, "__wrapped__") and seen < 8:
        value, seen = value.__wrapped__, seen + 1
    if isinstance(value, types.FunctionType) and value.__globals__ is namespace:
        return value
    return None


def names_read(functions, namespace: dict) -> set[str]:
    """Every global name the `functions` read, following the task module's own functions
    they read, transitively."""
    names, pending, visited = set(), list(functions), set()
    while pending:
        function = pending.pop()
        code = getattr(function, "__code__", None)
        if code is None or id(code) in visited:
            continue
        visited.add(id(code))
        for name in _global_reads(code):
            names.add(name)
            helper = _own_function(namespace.get(name), namespace)
            if helper is not None:
                pending.append(helper)
    return names


def is_size(value) -> bool:
    """True for a plain int (not bool) of at least MIN_SIZE."""
    return type(value) is int and value >= MIN_SIZE


def candidates(task, namespace: dict) -> dict[str, int]:
    """{name: value} of the task's size constants (module docstring), in the order the
    namespace defines them."""
    functions = [getattr(task, name, None) for name in ("get_inputs", "get_init_inputs")]
    read = names_read([f for f in functions if f is not None], namespace)
    return {name: value for name, value in namespace.items() if name in read and is_size(value)}


def namespace_of(task) -> dict:
    """The globals that `get_inputs` reads: a loader.Task's module namespace, else the
    `__globals__` of its `get_inputs` (a plain module: its own dict)."""
    namespace = getattr(task, "namespace", None)
    if isinstance(namespace, dict):
        return namespace
    function = getattr(task, "get_inputs", None)
    globals_ = getattr(function, "__globals__", None)
    return globals_ if isinstance(globals_, dict) else vars(task)
