"""Op `extract`: find the candidate's `load_inline` calls without a GPU.

The candidate module is executed with `load_inline` replaced by `inline.Recorder`;
it must still define `ModelNew`. Result: `{"ok": true, "calls": [...], "env": {...}}`
or `{"ok": false, "error": {"kind", "message", "line", "traceback"}}` with kind
python_syntax, import_error or missing_model_new.
"""

import platform

import torch

from . import inline, loader
from .failure import Failure
from .protocol import ProtocolError


def env_info() -> dict:
    """Versions the extension build depends on: torch, its CUDA, Python."""
    return {"torch": torch.__version__, "cuda": torch.version.cuda,
            "python": platform.python_version()}


def extract_op(request: dict) -> dict:
    """Handle an `extract` request and return its result frame."""
    path = request.get("candidate_path")
    if not isinstance(path, str):
        raise ProtocolError("candidate_path: expected a string")
    recorder = inline.Recorder()
    try:
        with inline.replaced(recorder):
            loader.load_candidate(path)
    except Failure as failure:
        error = failure.error()
        error.setdefault("line", None)
        return {"type": "result", "ok": False, "error": error}
    return {"type": "result", "ok": True, "calls": recorder.calls, "env": env_info()}
