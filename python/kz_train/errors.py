"""The error of one op: its `kind` goes into the error frame (docs/train-protocol.md)."""


class OpError(Exception):
    """An expected failure of a request: kind is one of `protocol` (bad request: unknown op,
    missing or ill-typed field), `not_loaded`, `load_error`, `save_error`, `invalid_request`
    (well-formed but impossible: lengths that disagree, an empty batch)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def field(request: dict, name: str, kind, default=None, required: bool = False):
    """request[name] checked against `kind` (a type or tuple of types); bool is not an int."""
    if name not in request or request[name] is None:
        if required:
            raise OpError("protocol", f"missing field {name!r}")
        return default
    value = request[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise OpError("protocol", f"field {name!r} must be {_names(kinds)}, not a boolean")
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kinds):
        raise OpError("protocol", f"field {name!r} must be {_names(kinds)}, not {type(value).__name__}")
    return value


def _names(kinds) -> str:
    return " or ".join(k.__name__ for k in kinds)
