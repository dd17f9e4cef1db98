"""Parameter correspondence between the reference and the candidate model.

Parameters are matched one-to-one by shape: first a candidate parameter with the same
name and shape, then, in creation order, the first unmatched candidate parameter of
equal shape. Matched candidate parameters receive the reference's values. Unmatched
reference parameters are `missing`, unmatched candidate ones `extra`; either makes the
stage a `mismatch` (verdict `incorrect`). Buffers are matched the same way (shape and
dtype) and copied best-effort; they never cause a mismatch.
"""

import torch


def _match(reference, candidate, key):
    """Match (name, tensor) lists; return (pairs, unmatched reference, unmatched candidate)."""
    free = dict(enumerate(candidate))
    by_name = {name: i for i, (name, _) in enumerate(candidate)}
    pairs, pending = {}, []
    for r, (name, tensor) in enumerate(reference):
        i = by_name.get(name)
        if i is not None and key(candidate[i][1]) == key(tensor):
            pairs[r] = free.pop(i)
        else:
            pending.append(r)
    unmatched = []
    for r in pending:
        wanted = key(reference[r][1])
        i = next((i for i, (_, t) in free.items() if key(t) == wanted), None)
        if i is None:
            unmatched.append(reference[r])
        else:
            pairs[r] = free.pop(i)
    matched = [(reference[r], pairs[r]) for r in sorted(pairs)]
    return matched, unmatched, list(free.values())


def _describe(entries):
    return [{"name": name, "shape": list(t.shape)} for name, t in entries]


def _copy(pairs):
    with torch.no_grad():
        for (_, ref), (_, cand) in pairs:
            cand.copy_(ref)


def _shape(tensor):
    return tuple(tensor.shape)


def _shape_dtype(tensor):
    return tuple(tensor.shape), tensor.dtype


def match_parameters(reference: torch.nn.Module, candidate: torch.nn.Module) -> dict:
    """Match and copy parameters (and buffers); return the `stages.parameters` object."""
    ref_params = list(reference.named_parameters())
    cand_params = list(candidate.named_parameters())
    pairs, missing, extra = _match(ref_params, cand_params, _shape)
    _copy(pairs)
    buffer_pairs, _, _ = _match(list(reference.named_buffers()),
                                list(candidate.named_buffers()), _shape_dtype)
    _copy(buffer_pairs)
    return {
        "status": "mismatch" if missing or extra else "ok",
        "reference": len(ref_params),
        "candidate": len(cand_params),
        "matched": len(pairs),
        "missing": _describe(missing),
        "extra": _describe(extra),
        "buffers_matched": len(buffer_pairs),
    }


def mismatch_reason(stage: dict) -> str:
    """One-line reason for a `mismatch` parameters stage."""
    def names(entries):
        return ", ".join(f"{e['name']} {tuple(e['shape'])}" for e in entries) or "none"
    return (f"parameters do not correspond: missing [{names(stage['missing'])}], "
            f"extra [{names(stage['extra'])}]")
