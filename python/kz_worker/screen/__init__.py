"""The static screen: integrity rules checked on a candidate's source without running it
(docs/screen-rules.md). Never imports torch or triton, never executes candidate code.

`screen_source(source, backend, policy)` returns the screen result; `screen_op` serves
the worker op `screen` (docs/worker-protocol.md). With `"extract": true` the op also reads
the `load_inline` calls statically (static_extract.py: the work of the `extract` op's first
step, in the same child), so a candidate read there needs no extraction child.

The package also holds the other static reader, op `module_scan` (module_scan.py with
ast_facts.py: the curriculum's AST facts of Torch module files).
"""

import ast
import io
import time
import tokenize

from ..protocol import ProtocolError
from .cpp_rules import screen_inline_calls
from .fallback_rules import check_fallbacks
from .model import FileModel, drop_main_guard
from .names import Names
from .patch_rules import PatchChecker
from .policy import BACKENDS, POLICIES, RULES_VERSION, Report
from .python_rules import check_patterns
from .scope_rules import check_model_new, check_suppressing_exit, check_triton_kernel
from .sources import find_inline_calls


def _run_rules(tree, backend, report):
    drop_main_guard(tree)
    names = Names(tree)
    model = FileModel(tree, names)
    check_patterns(names, report)
    PatchChecker(names, report).run()
    check_suppressing_exit(model, report)
    check_model_new(model, report)
    check_fallbacks(model, report)
    screen_inline_calls(find_inline_calls(tree, names), backend, report)
    if backend == "triton":
        check_triton_kernel(model, report)


def screen_source(source: str, backend: str, policy: str) -> dict:
    """Screen one candidate's source text; see docs/screen-rules.md for the rules."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    start = time.perf_counter()
    report = Report(policy)
    try:
        tree = ast.parse(source.removeprefix("\ufeff"))
    except SyntaxError as exc:
        report.add("py.syntax", exc.lineno, f"Python syntax error: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        report.add("py.syntax", None, f"not parseable Python: {exc}")
    else:
        try:
            _run_rules(tree, backend, report)
        except RecursionError:
            report.add("py.syntax", None, "too deeply nested to screen")
    return _result(report, backend, time.perf_counter() - start)


def _result(report, backend, seconds) -> dict:
    return {"verdict": report.verdict(), "policy": report.policy, "backend": backend,
            "rules_version": RULES_VERSION, "findings": report.sorted_findings(),
            "notes": report.notes, "seconds": round(seconds, 6)}


def screen_op(request: dict) -> dict:
    """Worker op `screen`: read `candidate_path`, screen it, return the result frame."""
    path = request.get("candidate_path")
    backend = request.get("backend", "cuda")
    policy = request.get("policy", "strict")
    if not isinstance(path, str) or backend not in BACKENDS or policy not in POLICIES:
        raise ProtocolError("screen needs candidate_path, backend in "
                            f"{BACKENDS} and policy in {POLICIES}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return {"type": "result", "ok": False,
                "error": {"kind": "unreadable_file", "message": f"{path}: {exc.strerror}"}}
    try:  # as Python reads it: UTF-8, a BOM or a coding declaration
        source = data.decode(tokenize.detect_encoding(io.BytesIO(data).readline)[0])
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        report = Report(policy)
        report.add("py.syntax", None, f"cannot decode the file: {exc}")
        result = _result(report, backend, 0.0)
    else:
        result = screen_source(source, backend, policy)
    reply = {"type": "result", "ok": True, "screen": result}
    if request.get("extract") is True and result["verdict"] == "pass":
        from ..farm.extract import static_result  # torch-free
        reply.update(static_result(path) or {})
    return reply
