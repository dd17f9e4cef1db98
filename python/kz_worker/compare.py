"""Output comparison for one trial (docs/verdict.md, `stages.correctness`).

Outputs are flattened (nested tuples/lists); tensors are compared element-wise in
float64 (complex128 for complex), other values by equality. A tensor output fails on a
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


def _errors(ref: torch.Tensor, out: torch.Tensor, tol: dict) -> tuple[dict, tuple | None]:
    """Error statistics of `out` against `ref` (same shape and dtype), and the index of
    the element that exceeds its tolerance the most (None for empty tensors)."""
    wide = torch.complex128 if ref.is_complex() else torch.float64
    r = ref.detach().to(wide)
    o = out.detach().to(device=r.device, dtype=wide)
    finite = torch.isfinite(r) & torch.isfinite(o)
    same_special = (torch.isnan(r) & torch.isnan(o)) | (torch.isinf(r) & (r == o))
    diff = torch.where(finite, (o - r).abs(), 0.0)
    ref_abs = torch.where(finite, r.abs(), 0.0)
    excess = diff - (tol["atol"] + tol["rtol"] * ref_abs)
    if ref.dtype.is_floating_point or ref.is_complex():
        mismatched = int((excess > 0).sum())
    else:
        mismatched = int((ref != out.to(ref.device)).sum())
    nonzero = ref_abs > 0
    ref_norm, err_norm = float(ref_abs.norm()), float(diff.norm())
    worst = None
    if excess.numel():
        worst = tuple(int(i) for i in torch.unravel_index(excess.argmax(), ref.shape))
    return {
        "shape": list(out.shape), "dtype": dtype_name(out.dtype),
        "max_abs_err": float(diff.max()) if diff.numel() else 0.0,
        "max_rel_err": float((diff[nonzero] / ref_abs[nonzero]).max()) if nonzero.any() else 0.0,
        "rel_l2": err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else None),
        "mismatched": mismatched,
        "nan_mismatch": int((~finite & ~same_special).sum()),
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
