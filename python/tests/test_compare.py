"""Output comparison and per-dtype tolerances of docs/verdict.md."""

import re

import pytest
import torch

from kz_worker.run.compare import compare_outputs, tolerance
from kz_worker.options import Options


@pytest.mark.parametrize("dtype, value", [
    (torch.float64, 1e-7), (torch.float32, 1e-4), (torch.float16, 1e-2),
    (torch.bfloat16, 1e-2),
])
def test_default_tolerances(dtype, value):
    assert tolerance(dtype, Options()) == {"atol": value, "rtol": value, "rel_l2": value,
                                           "dtype": str(dtype)[6:]}


def test_integer_and_bool_are_exact_even_with_options():
    for dtype in (torch.int64, torch.int8, torch.bool):
        tol = tolerance(dtype, Options(atol=1.0, rtol=1.0, rel_l2=1.0))
        assert (tol["atol"], tol["rtol"], tol["rel_l2"]) == (0.0, 0.0, None)


def test_options_override_float_defaults():
    tol = tolerance(torch.float16, Options(atol=0.5, rel_l2=0.25))
    assert (tol["atol"], tol["rtol"], tol["rel_l2"]) == (0.5, 1e-2, 0.25)


def test_rel_l2_catches_errors_that_atol_lets_through():
    logits = torch.randn(4, 10000, generator=torch.Generator().manual_seed(0))
    ref = torch.softmax(logits, dim=1)
    out = ref * 1.01
    records, failure = compare_outputs(0, ref, out, Options())
    assert records[0]["mismatched"] == 0
    assert records[0]["rel_l2"] == pytest.approx(0.01, rel=1e-3)
    assert re.fullmatch(r"trial 0 output 0: rel_l2 0\.01\d* > 0\.0001|"
                        r"trial 0 output 0: rel_l2 0\.00999\d* > 0\.0001", failure)


def test_zero_reference_uses_absolute_check_only():
    ref = torch.zeros(8)
    records, failure = compare_outputs(0, ref, ref + 5e-5, Options())
    assert failure is None and records[0]["rel_l2"] is None
    _, failure = compare_outputs(0, ref, ref + 2e-4, Options())
    assert "elements exceed atol=0.0001" in failure


def test_matching_nan_and_inf_pass_but_new_ones_fail():
    ref = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert compare_outputs(0, ref, ref.clone(), Options())[1] is None
    for bad in ([float("nan"), float("nan"), float("inf"), -float("inf")],
                [1.0, 0.0, float("inf"), -float("inf")],
                [1.0, float("nan"), -float("inf"), -float("inf")]):
        records, failure = compare_outputs(0, ref, torch.tensor(bad), Options())
        assert records[0]["nan_mismatch"] == 1 and "NaN/Inf" in failure


def test_statistics_are_float64():
    ref = torch.tensor([1.0, 2.0, 4.0])
    out = torch.tensor([1.0, 2.0, 4.5])
    record, _ = compare_outputs(1, ref, out, Options(atol=1.0, rtol=0.0, rel_l2=1.0))
    assert record[0]["max_abs_err"] == 0.5
    assert record[0]["max_rel_err"] == 0.125
    assert record[0]["rel_l2"] == pytest.approx(0.5 / (1 + 4 + 16) ** 0.5, rel=1e-12)


def test_non_tensor_leaves_compare_by_equality():
    ref = (torch.ones(2), 3)
    assert compare_outputs(0, ref, [torch.ones(2), 3], Options())[1] is None
    assert compare_outputs(0, ref, (torch.ones(2), 4), Options())[1] == (
        "trial 0 output 1: value 4 != reference 3")


def test_candidate_output_must_be_a_tensor():
    _, failure = compare_outputs(2, torch.ones(3), [1.0, 1.0, 1.0], Options())
    assert failure == "trial 2: 3 outputs != reference 1"
    _, failure = compare_outputs(2, torch.ones(3), 3.0, Options())
    assert failure == "trial 2 output 0: float is not a torch.Tensor"


def test_empty_and_scalar_tensors():
    assert compare_outputs(0, torch.empty(0, 3), torch.empty(0, 3), Options())[1] is None
    _, failure = compare_outputs(0, torch.tensor(1.0), torch.tensor(2.0), Options())
    assert "worst at index ()" in failure


def test_half_precision_uses_its_own_tolerance():
    ref = torch.randn(64, generator=torch.Generator().manual_seed(1)).half()
    out = (ref.double() * 1.001).half()
    assert compare_outputs(0, ref, out, Options())[1] is None
    assert compare_outputs(0, ref.float(), out.float(), Options())[1] is not None


def test_unravel_matches_torch_on_many_shapes():
    from kz_worker.run.compare import unravel
    for shape in [(7,), (3, 5), (2, 3, 4), (4, 1, 6, 5), (1,), (3, 1)]:
        n = 1
        for s in shape:
            n *= s
        for flat in range(n):
            want = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), shape))
            assert unravel(flat, shape) == want, (shape, flat)


def test_a_mismatch_names_its_element_without_importing_sympy():
    import os
    import subprocess
    import sys
    import kz_worker
    code = ("import sys, torch; from kz_worker.run.compare import _errors;"
            "r = torch.zeros(4, 6); o = r.clone(); o[2, 3] = 1.0;"
            "_, worst = _errors(r, o, {'atol': 1e-4, 'rtol': 1e-4, 'rel_l2': 1e-4});"
            "print(worst, 'sympy' in sys.modules)")
    root = os.path.dirname(os.path.dirname(kz_worker.__file__))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=root))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "(2, 3) False"
