"""Op `extract`: find the candidate's `load_inline` calls without a GPU.

First read from the source without running it (static_extract.py: no torch import);
when that cannot be sure, the candidate module is executed with `load_inline` replaced by
`inline.Recorder`; it must still define `ModelNew`. `"extracted"`: "static" or "ran". Result: `{"ok": true, "calls": [...], "env": {...}}`
or `{"ok": false, "error": {"kind", "message", "line", "traceback"}}` with kind
python_syntax, import_error, missing_model_new or source_too_large (the sources of the
calls, generated at import time, add up to more than `max_source_bytes`, default 8 MiB).

Each call also says where its sources are in the candidate file, so compiler
diagnostics can be mapped back (src/compile/source_map.h): `"candidate_file"` (the
file's base name) and `"source_lines": {"cpp_sources": [L | null, ...],
"cuda_sources": [...]}`, where L is the line of the candidate file holding the first
line of that source string, when the string is (a part of, or the dedented) string
literal of the file, and null when it was built at run time.
"""

import ast
import os
import textwrap

from ..probe import probe
from ..protocol import ProtocolError
from ..screen import static_extract
from .inline_fields import call_digest, fields_of

MAX_SOURCE_BYTES = 8 << 20
_SOURCE_FIELDS = ("cpp_sources", "cuda_sources")


def env_info() -> dict:
    """Versions the extension build depends on: torch, its CUDA, Python (read from torch's
    version.py, as `kz_worker.probe` does: the same values as torch.__version__ and
    torch.version.cuda, without importing torch)."""
    return {key: value for key, value in probe().items() if key != "version_file"}


def _literals(text: str) -> list:
    """(line, value) of every non-empty string literal of the module source `text`."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value]


def _lines_agree(piece: str, file_lines: list, first: int) -> bool:
    """True when each non-blank line of `piece` appears on its line of the file, counted
    from line `first`: the check that the literal's lines really are the file's lines
    (escaped newlines, implicit concatenation and continuations break that)."""
    for offset, line in enumerate(piece.split("\n")):
        text = line.strip()
        index = first - 1 + offset
        if index >= len(file_lines):
            return False
        if text and text not in file_lines[index]:
            return False
    return True


def _first_line(piece: str, literals: list, file_lines: list):
    """Line of the candidate file holding the first line of `piece`, or None."""
    if not piece.strip():
        return None
    matches = []
    for lineno, value in literals:
        for text in (value, textwrap.dedent(value)):
            at = text.find(piece)
            if at >= 0:
                matches.append((text != piece, lineno + text.count("\n", 0, at)))
                break
    for _, line in sorted(matches):  # exact literals first, then the file's order
        if _lines_agree(piece, file_lines, line):
            return line
    return None


def annotate_source_lines(calls: list, path: str) -> None:
    """Add `candidate_file` and `source_lines` to each call (see the module docstring).
    Never raises: a file that cannot be read or parsed gives null lines."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        text = ""
    literals = _literals(text) if calls else []
    file_lines = text.splitlines()
    for call in calls:
        call["candidate_file"] = os.path.basename(path)
        call["source_lines"] = {
            field: [_first_line(piece, literals, file_lines) if isinstance(piece, str) else None
                    for piece in call.get(field) or []]
            for field in _SOURCE_FIELDS}


def _too_large(calls: list, limit: int):
    """The error of calls whose sources add up to more than `limit` bytes, else None."""
    total = 0
    for call in calls:
        size = sum(len(piece.encode("utf-8", errors="replace"))
                   for field in _SOURCE_FIELDS for piece in call.get(field) or []
                   if isinstance(piece, str))
        total += size
        if total > limit:
            return {"kind": "source_too_large", "line": None,
                    "message": (f"load_inline call '{call.get('name')}': its sources are "
                                f"{size / (1 << 20):.1f} MiB ({total / (1 << 20):.1f} MiB with "
                                f"the calls before it), over the limit of "
                                f"{limit / (1 << 20):g} MiB for the sources of a candidate")}
    return None


def extract_op(request: dict) -> dict:
    """Handle an `extract` request and return its result frame."""
    path = request.get("candidate_path")
    if not isinstance(path, str):
        raise ProtocolError("candidate_path: expected a string")
    limit = request.get("max_source_bytes", MAX_SOURCE_BYTES)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        raise ProtocolError("max_source_bytes: expected a positive integer")
    calls, how = _static_calls(path), "static"
    if calls is None:
        calls, how = _run_module(path), "ran"
        if isinstance(calls, dict):
            return {"type": "result", "ok": False, "error": calls}
    error = _too_large(calls, limit)
    if error is not None:
        return {"type": "result", "ok": False, "error": error}
    annotate_source_lines(calls, path)
    return {"type": "result", "ok": True, "calls": calls, "env": env_info(), "extracted": how}


def static_result(path: str, limit: int = MAX_SOURCE_BYTES):
    """{"calls", "env", "extracted": "static"} as `extract_op` answers when the static
    reading is sure and the sources fit `limit`, else None (the extraction child decides).
    Never imports torch, never runs the candidate: the screen op calls it."""
    calls = _static_calls(path)
    if calls is None or _too_large(calls, limit) is not None:
        return None
    annotate_source_lines(calls, path)
    return {"calls": calls, "env": env_info(), "extracted": "static"}


def _static_calls(path: str):
    """The calls read from the source (static_extract.py), or None."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = static_extract.extract(text)
    if found is None:
        return None
    return [{**fields, "digest": call_digest(fields)} for fields in map(fields_of, found)]


def _run_module(path: str):
    """The calls recorded while the module runs with load_inline replaced, or the error
    dict of a module that fails to load."""
    from .. import loader
    from ..failure import Failure
    from . import inline  # imports torch
    recorder = inline.Recorder()
    try:
        with inline.replaced(recorder):
            loader.load_candidate(path)
    except Failure as failure:
        error = failure.error()
        error.setdefault("line", None)
        return error
    return recorder.calls
