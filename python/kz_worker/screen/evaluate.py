"""The one evaluator of `load_inline` arguments read from a candidate's source (no torch
import, nothing executed). Two modes of the same rules:

- **lenient** (the screen, sources.py): strings are resolved from literals, string
  constants bound earlier in the same scope, `+`/`+=` concatenation, f-strings,
  `sep.join([...])`, lists and tuples, `.format`/`.replace` with constant arguments, and
  pass-through helpers (`textwrap.dedent`, `inspect.cleandoc`, `str`, `.strip()`); anything
  else is UNKNOWN and the text is marked incomplete. Each piece keeps the candidate line
  where it starts, so findings inside C++/CUDA code map back to the candidate file.
- **exact** (static extraction, static_extract.py): the value must equal what running the
  module would give, else `Unknown` is raised and the caller runs the module. Numbers,
  booleans, None and dicts are values of their own type (`1 + "a"` is unknown, not "1a");
  the pass-through helpers and `.strip()` are applied for real; an f-string field with a
  conversion or format spec is unknown.
Results: a `Text` (strings), a Python list of results, a `Const` (other constants, exact
mode only), a dict (exact mode only) or UNKNOWN (lenient mode only).
"""

import ast
import inspect
import textwrap
from bisect import bisect_right
from dataclasses import dataclass, field

from .names import Names

PASS_THROUGH = {"textwrap.dedent": textwrap.dedent, "inspect.cleandoc": inspect.cleandoc,
                "builtins.str": str}
STRIPS = ("strip", "lstrip", "rstrip")


class Unknown(Exception):
    """Exact mode: a value the static reading cannot be sure of."""


@dataclass
class Text:
    """A resolved string: pieces (text, first line, exact) and whether all is known.
    `exact` means newlines inside the piece are newlines of the candidate file."""
    pieces: list = field(default_factory=list)
    complete: bool = True

    @staticmethod
    def of(text: str, node, exact=None) -> "Text":
        if exact is None:
            exact = (node.end_lineno or node.lineno) - node.lineno == text.count("\n")
        return Text([(text, node.lineno, exact)])

    def __add__(self, other: "Text") -> "Text":
        return Text(self.pieces + other.pieces, self.complete and other.complete)

    @property
    def value(self) -> str:
        return "".join(p[0] for p in self.pieces)

    def line_at(self, offset: int) -> int:
        """Candidate line of character `offset` of `value`."""
        starts, pos = [], 0
        for text, _, _ in self.pieces:
            starts.append(pos)
            pos += len(text)
        i = max(0, bisect_right(starts, offset) - 1)
        text, line, exact = self.pieces[i]
        return line + text.count("\n", 0, offset - starts[i]) if exact else line


@dataclass(frozen=True)
class Const:
    """Exact mode: a constant that is not a string (int, float, bool, None)."""
    value: object


UNKNOWN = Text([], complete=False)


def plain(result):
    """The Python value of an exact-mode result (Text -> str, Const -> its value)."""
    if isinstance(result, Text):
        return result.value
    if isinstance(result, Const):
        return result.value
    if isinstance(result, list):
        return [plain(r) for r in result]
    return {k: plain(v) for k, v in result.items()}  # keys are plain already (Resolver._key)


class Resolver:
    """Evaluates expressions against an environment {name: result} of known values."""

    def __init__(self, names: Names, exact: bool = False):
        self.names, self.exact = names, exact

    def unknown(self, why: str):
        if self.exact:
            raise Unknown(why)
        return UNKNOWN

    def resolve(self, node, env):
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return env[node.id] if node.id in env else self.unknown(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.resolve(e, env) for e in node.elts]
            return items if self.exact else [self._as_text(i) for i in items]
        if isinstance(node, ast.Dict) and self.exact and None not in node.keys:
            return {self._key(k, env): self.resolve(v, env) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._concat(self.resolve(node.left, env), self.resolve(node.right, env))
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        return self.unknown(type(node).__name__)

    def _constant(self, node):
        v = node.value
        if isinstance(v, str):
            return Text.of(v, node)
        if self.exact and (v is None or isinstance(v, (bool, int, float))):
            return Const(v)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return Text.of(str(v), node, exact=False)
        return self.unknown("constant")

    def _key(self, node, env):
        key = plain(self.resolve(node, env))
        if isinstance(key, (list, dict)):
            raise Unknown("unhashable key")
        return key

    def _as_text(self, v) -> Text:
        if isinstance(v, Text):
            return v
        out = Text([])
        for t in v:
            out = out + t
        return out

    def _concat(self, a, b):
        if isinstance(a, list) and isinstance(b, list):
            return a + b
        if isinstance(a, Text) and isinstance(b, Text):
            return a + b
        return self.unknown("+")

    def _fstring(self, node, env):
        parts, complete = [], True
        for v in node.values:
            if isinstance(v, ast.FormattedValue) and self.exact and \
                    (v.conversion != -1 or v.format_spec is not None):
                raise Unknown("f-string format")
            r = self.resolve(v.value if isinstance(v, ast.FormattedValue) else v, env)
            if isinstance(r, Text) and r.complete:
                parts.append(r.value)
            elif isinstance(r, Const) and type(r.value) is int:
                parts.append(str(r.value))
            elif self.exact:
                raise Unknown("f-string field")
            else:
                complete = False
        text = "".join(parts)
        return Text([(text, node.lineno, (node.end_lineno or node.lineno) - node.lineno
                      == text.count("\n"))], complete)

    def _call(self, node, env):
        func = node.func
        qual = self.names.qualname(func)
        plain_args = not (self.exact and node.keywords)  # lenient: keywords are not looked at
        if qual in PASS_THROUGH and len(node.args) == 1 and plain_args:
            arg = self.resolve(node.args[0], env)
            return self._apply_helper(PASS_THROUGH[qual], arg, node) if self.exact else arg
        if not isinstance(func, ast.Attribute):
            return self.unknown("call")
        base = self.resolve(func.value, env)
        if not isinstance(base, Text):
            return self.unknown("method of a non-string")
        if func.attr in STRIPS and not node.args and plain_args:
            return self._apply_helper(getattr(str, func.attr), base, node) if self.exact else base
        if func.attr == "join" and len(node.args) == 1 and plain_args:
            return self._join(base, self.resolve(node.args[0], env))
        if func.attr in ("format", "replace"):
            return self._apply(base, node, env)
        return self.unknown("call")

    def _apply_helper(self, helper, arg, node) -> Text:
        if not isinstance(arg, Text):
            raise Unknown("helper of a non-string")
        return Text.of(helper(arg.value), node, exact=False)

    def _join(self, base: Text, items):
        if not isinstance(items, list) or (self.exact and not all(isinstance(i, Text) for i in items)):
            return self.unknown("join")
        out = Text([], base.complete)
        for i, item in enumerate(items):
            out = out + (base + item if i else item)
        return out

    def _apply(self, base: Text, node, env):
        """`.format`/`.replace` with constant arguments on a one-piece string."""
        args = [self.resolve(a, env) for a in node.args]
        kwargs = {k.arg: self.resolve(k.value, env) for k in node.keywords}
        known = all(isinstance(a, Text) and a.complete for a in args + list(kwargs.values()))
        if not (known and base.complete and len(base.pieces) == 1 and None not in kwargs):
            return Text(base.pieces, complete=False) if not self.exact else self.unknown("format")
        text, line, exact = base.pieces[0]
        try:
            out = getattr(text, node.func.attr)(*[a.value for a in args],
                                                **{k: v.value for k, v in kwargs.items()})
        except (KeyError, IndexError, ValueError, TypeError):
            return Text(base.pieces, complete=False) if not self.exact else self.unknown("format")
        return Text([(out, line, exact and out.count("\n") == text.count("\n"))])

    def bind(self, stmt, env) -> None:
        """Update `env` with the values `stmt` assigns (lenient: strings; an unknown value is
        bound as UNKNOWN. Exact: a name whose value is unknown is removed)."""
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self._bind_target(target, stmt.value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind_target(stmt.target, stmt.value, env)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            old = env.get(stmt.target.id, UNKNOWN)
            if isinstance(stmt.op, ast.Add):
                self._bind_value(stmt.target.id, lambda: self._concat(old, self.resolve(stmt.value, env)), env)
            else:
                self._bind_value(stmt.target.id, lambda: self.unknown("augmented assignment"), env)

    def _bind_value(self, name: str, compute, env) -> None:
        try:
            env[name] = compute()
        except Unknown:
            env.pop(name, None)

    def _bind_target(self, target, value, env):
        if isinstance(target, ast.Name):
            self._bind_value(target.id, lambda: self.resolve(value, env), env)
        elif isinstance(target, (ast.Tuple, ast.List)):
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            for i, t in enumerate(target.elts):
                self._bind_target(t, value.elts[i] if same else ast.Constant(None), env)
