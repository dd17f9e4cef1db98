"""Dataflow integrity of a candidate's outputs (runtime rules of docs/screen-rules.md).

Each tensor output must be a plain, dense `torch.Tensor` with storage of its own
(`dataflow.not_dense`: no subclass, lazy, meta or sparse tensor), must not share memory
with an input or with another output of the same call, and must not be the memory of an
earlier call's output that is still alive (`dataflow.aliasing`). Sharing memory with an
input is allowed when the reference's own output shares memory with its input (view tasks).
"""

import torch

from .compare import flatten


def _span(t: torch.Tensor):
    """(start, nbytes) of the tensor's storage, or None when it has none we can read."""
    try:
        storage = t.untyped_storage()
        return storage.data_ptr(), storage.nbytes()
    except Exception:  # lazy / meta / exotic tensors
        return None


def _overlap(a, b) -> bool:
    return bool(a and b and a[1] and b[1] and a[0] < b[0] + b[1] and b[0] < a[0] + a[1])


def _tensors(value) -> list:
    return [(i, x) for i, x in enumerate(flatten(value)) if isinstance(x, torch.Tensor)]


def aliases_input(output, inputs) -> bool:
    """Whether any tensor of `output` shares memory with a tensor of `inputs`."""
    spans = [_span(x) for _, x in _tensors(inputs)]
    return any(_overlap(_span(o), s) for _, o in _tensors(output) for s in spans)


def _not_dense(i: int, out: torch.Tensor):
    if type(out) is not torch.Tensor:
        return f"output {i} is a {type(out).__name__}, not a plain torch.Tensor"
    if out.layout != torch.strided or out.is_meta:
        return f"output {i} is not a dense tensor with real storage ({out.layout}, meta={out.is_meta})"
    span = _span(out)
    if span is None or (out.numel() > 0 and span[0] == 0):
        return f"output {i} has no storage of its own"
    return None


def check(output, inputs, earlier_spans: list, inputs_may_alias: bool):
    """(rule, message) for the first dataflow problem of a candidate output, else None.
    `earlier_spans` are storage spans of earlier outputs the caller keeps alive."""
    seen = []
    in_spans = [(j, _span(x)) for j, x in _tensors(inputs)]
    for i, out in _tensors(output):
        problem = _not_dense(i, out)
        if problem:
            return "dataflow.not_dense", problem
        span = _span(out)
        for j, s in in_spans:
            if not inputs_may_alias and _overlap(span, s):
                return "dataflow.aliasing", f"output {i} shares memory with input {j}"
        for k, s in seen:
            if _overlap(span, s):
                return "dataflow.aliasing", f"output {i} shares memory with output {k}"
        if any(_overlap(span, s) for s in earlier_spans):
            return "dataflow.aliasing", f"output {i} is the memory of an earlier call's output, still alive"
        seen.append((i, span))
    return None


def spans(output) -> list:
    """Storage spans of `output`'s tensors (to pass as `earlier_spans` later)."""
    return [s for _, t in _tensors(output) if (s := _span(t))]
