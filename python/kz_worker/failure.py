"""Classified failures shared by the worker's stages.

A stage that cannot go on raises `Failure`; `run/op.py` turns it into the `result`
frame's `status`, `reason` and `error` fields (docs/worker-protocol.md).
"""

import traceback

TRACEBACK_LINES = 40


def traceback_tail(exc: BaseException, lines: int = TRACEBACK_LINES) -> str:
    """Return the last `lines` lines of the formatted traceback of `exc`."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


def describe(exc: BaseException, limit: int = 300) -> str:
    """One-line `Type: message` description of `exc`: the first line of the message,
    cut to `limit` characters."""
    message = str(exc).strip().splitlines()
    first = message[0] if message else ""
    if len(first) > limit:
        first = first[:limit] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class ExtensionError(RuntimeError):
    """An inline extension could not be compiled (`kind` "compile_error") or its
    prebuilt library could not be loaded (`kind` "library_load_error")."""

    def __init__(self, kind: str, name: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.name = name


def _chain(exc: BaseException):
    """`exc` and the exceptions it chains (cause, else context), without cycles."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def find_extension_error(exc: BaseException):
    """The ExtensionError that `exc` is or chains, else None."""
    return next((e for e in _chain(exc) if isinstance(e, ExtensionError)), None)


def is_cuda_error(exc: BaseException) -> bool:
    """True when `exc` (or an exception it chains) reports a CUDA runtime/driver error.

    After such an error the CUDA context may be unusable, so the caller must not do
    any further GPU work.
    """
    markers = ("CUDA error", "CUDA_ERROR", "cudaError")
    return any(type(e).__name__ == "AcceleratorError" or any(m in str(e) for m in markers)
               for e in _chain(exc))


class Failure(Exception):
    """A classified reason to stop: verdict `status`, error `kind`, one-line `reason`.

    `message` and `traceback` fill the `error` object; `line` is set for syntax errors.
    After a Failure the run does no further GPU work (a CUDA error may have left the
    context unusable): the result is sent and the process exits.
    """

    def __init__(self, status, kind, reason, *, message=None, tb=None, line=None):
        super().__init__(reason)
        self.status = status
        self.kind = kind
        self.reason = reason
        self.message = message if message is not None else reason
        self.traceback = tb
        self.line = line

    @classmethod
    def from_exception(cls, status, kind, what, exc):
        """Build a Failure for `exc` raised while doing `what` (e.g. "candidate forward")."""
        return cls(status, kind, f"{what} raised {describe(exc)}", message=str(exc),
                   tb=traceback_tail(exc))

    def error(self) -> dict | None:
        """The protocol `error` object: kind, message, traceback (and line if known);
        None for a Failure without kind (`incorrect`, `not_run`: not error statuses)."""
        if self.kind is None:
            return None
        out = {"kind": self.kind, "message": self.message, "traceback": self.traceback}
        if self.line is not None:
            out["line"] = self.line
        return out


def candidate_failure(exc: BaseException, what: str, status: str, kind: str) -> Failure:
    """Classify `exc`, raised by candidate code while doing `what`.

    An inline-extension failure is `compile_error` with the extension's kind; a CUDA
    error is `runtime_error`/`cuda_error`; anything else is
    (`status`, `kind`).
    """
    ext = find_extension_error(exc)
    if ext is not None:
        return Failure.from_exception("compile_error", ext.kind,
                                      f"candidate: inline extension {ext.name!r}", ext)
    if is_cuda_error(exc):
        return Failure.from_exception("runtime_error", "cuda_error", f"candidate: {what}", exc)
    return Failure.from_exception(status, kind, f"candidate: {what}", exc)
