"""Output comparison for one trial (docs/verdict.md, `stages.correctness`).

Outputs are flattened (nested tuples/lists); tensors are compared element-wise in
float64 (complex128 for complex), chunk by chunk on the output's device (the memory plan
of docs/memory.md: never a wide copy of a whole output), other values by equality. A tensor output fails on a
shape or dtype mismatch; NaN/Inf where the reference has none (or the reverse);
`|out - ref| > atol + rtol*|ref|` anywhere; or `||out - ref||_2 / ||ref||_2 > rel_l2`
(skipped when `||ref||_2 == 0`, where only the absolute check applies). Integer and
bool outputs must match exactly; option tolerances apply to floating outputs only.
"""

import torch

_DEFAULTS = {
    torch.float64: 1e-7, torch.complex128: 1e-7,
    torch.float16: 1e-2, torch.bfloat16: 1e-2,
}
_FLOAT32_DEFAULT = 1e-4


def dtype_name(dtype) -> str:
    """`torch.float32` -> `float32`."""
    return str(dtype).removeprefix("torch.")


def tolerance(dtype: torch.dtype, options) -> dict:
    """The tolerance object for an output of `dtype`: atol, rtol, rel_l2 (None = not
    checked) and dtype; exact for integer/bool, else options overriding the defaults."""
    if not (dtype.is_floating_point or dtype.is_complex):
        return {"atol": 0.0, "rtol": 0.0, "rel_l2": None, "dtype": dtype_name(dtype)}
    default = _DEFAULTS.get(dtype, _FLOAT32_DEFAULT)

    def pick(value):
        return default if value is None else value
    return {"atol": pick(options.atol), "rtol": pick(options.rtol),
            "rel_l2": pick(options.rel_l2), "dtype": dtype_name(dtype)}


def flatten(output) -> list:
    """Flatten nested tuples/lists into a list of leaves."""
    if isinstance(output, (tuple, list)):
        return [leaf for item in output for leaf in flatten(item)]
    return [output]


def _shape(tensor) -> str:
    return str(tuple(tensor.shape))


CHUNK_ELEMENTS = 1 << 24  # elements compared at once: float64 temporaries of 128 MiB each


def chunks(tensors, elements: int | None = None):
    """Aligned pieces of same-shape `tensors`: yields (flat offset, [1-D piece of each]),
    covering them in row-major order, each piece about `elements` elements. Contiguous
    tensors are cut flat; otherwise by whole rows of dim 0 (a piece is then at most one row
    larger), so no copy of a whole tensor is ever made."""
    elements = elements or CHUNK_ELEMENTS
    first = tensors[0]
    if first.dim() == 0:
        yield 0, [t.reshape(1) for t in tensors]
        return
    if all(t.is_contiguous() for t in tensors):
        flats = [t.view(-1) for t in tensors]
        for start in range(0, first.numel(), elements):
            yield start, [f[start:start + elements] for f in flats]
        return
    row = max(1, first[0].numel()) if first.shape[0] else 1
    step = max(1, elements // row)
    for lo in range(0, first.shape[0], step):
        yield lo * row, [t[lo:lo + step].reshape(-1) for t in tensors]


class _Stats:
    """Running error statistics over chunks (see `_errors`)."""

    def __init__(self):
        self.mismatched = self.nan_mismatch = 0
        self.max_abs = self.max_rel = 0.0
        self.ref_sq = self.err_sq = 0.0
        self.worst, self.worst_excess = None, None

    def add(self, offset, r, o, tol, floating):
        finite = torch.isfinite(r) & torch.isfinite(o)
        same_special = (torch.isnan(r) & torch.isnan(o)) | (torch.isinf(r) & (r == o))
        diff = torch.where(finite, (o - r).abs(), 0.0)
        ref_abs = torch.where(finite, r.abs(), 0.0)
        excess = diff - (tol["atol"] + tol["rtol"] * ref_abs)
        self.mismatched += int((excess > 0).sum()) if floating else int((r != o).sum())
        self.nan_mismatch += int((~finite & ~same_special).sum())
        self.max_abs = max(self.max_abs, float(diff.max()))
        rel = torch.where(ref_abs > 0, diff / ref_abs.clamp_min(torch.finfo(ref_abs.dtype).tiny), 0.0)
        self.max_rel = max(self.max_rel, float(rel.max()))
        self.ref_sq += float(ref_abs.square().sum())
        self.err_sq += float(diff.square().sum())
        value, index = excess.max(0)
        if self.worst_excess is None or float(value) > self.worst_excess:
            self.worst_excess, self.worst = float(value), offset + int(index)


def unravel(flat: int, shape: tuple) -> tuple:
    """The index of element `flat` of a contiguous tensor of `shape` (row-major). Plain
    arithmetic: torch.unravel_index imports sympy (~3 s in a fresh child)."""
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return tuple(reversed(index))


def _errors(ref: torch.Tensor, out: torch.Tensor, tol: dict) -> tuple[dict, tuple | None]:
    """Error statistics of `out` against `ref` (same shape and dtype), and the index of
    the element that exceeds its tolerance the most (None for empty tensors). Computed
    chunk by chunk in float64 (complex128), on `ref`'s device: the extra memory is a few
    chunk-sized temporaries, never a wide copy of a whole output."""
    wide = torch.complex128 if ref.is_complex() else torch.float64
    floating = ref.dtype.is_floating_point or ref.is_complex()
    stats = _Stats()
    out = out.detach()
    out = out if out.device == ref.device else out.to(ref.device)
    for offset, (r, o) in chunks([ref.detach(), out]):
        stats.add(offset, r.to(wide), o.to(wide), tol, floating)
    ref_norm, err_norm = stats.ref_sq ** 0.5, stats.err_sq ** 0.5
    worst = None
    if ref.numel() and stats.worst is not None:
        worst = unravel(stats.worst, tuple(ref.shape))
    return {
        "shape": list(out.shape), "dtype": dtype_name(out.dtype),
        "max_abs_err": stats.max_abs, "max_rel_err": stats.max_rel,
        "rel_l2": err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else None),
        "mismatched": stats.mismatched, "nan_mismatch": stats.nan_mismatch,
    }, worst


def _tensor_failure(where, numel, stats, worst, tol):
    """The failure message of a same-shape/dtype tensor comparison, or None."""
    if stats["nan_mismatch"]:
        return f"{where}: {stats['nan_mismatch']} NaN/Inf values do not match the reference"
    if stats["mismatched"] and tol["rel_l2"] is None:
        return (f"{where}: {stats['mismatched']} of {numel} elements differ "
                f"(exact match required; worst at index {worst})")
    if stats["mismatched"]:
        return (f"{where}: {stats['mismatched']} of {numel} elements exceed "
                f"atol={tol['atol']:g} + rtol={tol['rtol']:g}*|ref| "
                f"(max_abs_err {stats['max_abs_err']:.3g}, worst at index {worst})")
    if tol["rel_l2"] is not None and stats["rel_l2"] is not None and stats["rel_l2"] > tol["rel_l2"]:
        return f"{where}: rel_l2 {stats['rel_l2']:.3g} > {tol['rel_l2']:g}"
    return None


def _equal(ref, out) -> bool:
    """Equality of non-tensor outputs: same type and `==` true (False if `==` fails)."""
    try:
        return type(out) is type(ref) and bool(out == ref)
    except Exception:
        return False


def compare_one(where: str, ref, out, options) -> tuple[dict, str | None]:
    """Compare one output leaf; return (record for `outputs`, failure message or None)."""
    if not isinstance(ref, torch.Tensor):
        equal = _equal(ref, out)
        record = {"shape": None, "dtype": type(out).__name__, "mismatched": 0 if equal else 1}
        return record, None if equal else f"{where}: value {out!r} != reference {ref!r}"
    if not isinstance(out, torch.Tensor):
        record = {"shape": None, "dtype": type(out).__name__}
        return record, f"{where}: {type(out).__name__} is not a torch.Tensor"
    record = {"shape": list(out.shape), "dtype": dtype_name(out.dtype)}
    if out.shape != ref.shape:
        return record, f"{where}: shape {_shape(out)} != reference {_shape(ref)}"
    if out.dtype != ref.dtype:
        return record, f"{where}: dtype {record['dtype']} != reference {dtype_name(ref.dtype)}"
    tol = tolerance(ref.dtype, options)
    stats, worst = _errors(ref, out, tol)
    return stats, _tensor_failure(where, ref.numel(), stats, worst, tol)


def compare_outputs(trial: int, ref_output, cand_output, options) -> tuple[list, str | None]:
    """Compare a trial's outputs; return (per-output records, first failure or None)."""
    refs, outs = flatten(ref_output), flatten(cand_output)
    if len(refs) != len(outs):
        return [], f"trial {trial}: {len(outs)} outputs != reference {len(refs)}"
    records, first = [], None
    for index, (ref, out) in enumerate(zip(refs, outs)):
        record, failure = compare_one(f"trial {trial} output {index}", ref, out, options)
        records.append(record)
        first = first or failure
    return records, first
