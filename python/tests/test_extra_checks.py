"""Extra checks: signed inputs for tasks that only draw non-negative values, and the
weak-task flag."""

import torch

from kz_worker import extra_checks
from kz_worker.options import parse_run_request

OPTIONS = parse_run_request({"op": "run", "task_path": "t", "candidate_path": "c",
                             "backend": "triton", "device": "cpu"}).options
CPU = torch.device("cpu")


class PositiveTask:
    @staticmethod
    def get_inputs():
        return [torch.rand(256)]


class SignedTask:
    @staticmethod
    def get_inputs():
        return [torch.randn(256)]


class Relu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


class Identity(torch.nn.Module):
    """Right for every input get_inputs draws (all >= 0), wrong for negative ones."""

    def forward(self, x):
        return x.clone()


class Log(torch.nn.Module):
    def forward(self, x):
        return torch.log(x)


def test_positive_only_kernel_fails_on_signed_inputs():
    data, failure = extra_checks.run(PositiveTask, Relu(), Identity(), CPU, OPTIONS)
    assert data["status"] == "fail" and "signed inputs" in failure
    assert data["checks"][0] == {"check": "signed_inputs", "ran": True, "pass": False}


def test_honest_kernel_passes_signed_inputs():
    data, failure = extra_checks.run(PositiveTask, Relu(), Relu(), CPU, OPTIONS)
    assert failure is None and data["checks"][0]["pass"] is True


def test_signed_check_is_skipped_when_inputs_are_already_signed():
    data, failure = extra_checks.run(SignedTask, Relu(), Relu(), CPU, OPTIONS)
    assert failure is None and data["checks"][0]["ran"] is False


def test_signed_check_is_skipped_when_the_reference_is_not_finite_on_them():
    data, failure = extra_checks.run(PositiveTask, Log(), Log(), CPU, OPTIONS)
    assert failure is None
    assert "not finite" in data["checks"][0]["reason"]


def test_weak_task_flags_near_zero_and_near_constant_references():
    assert "near zero" in extra_checks.weak_task(torch.zeros(10))
    assert "near-constant" in extra_checks.weak_task(torch.full((10,), 3.0))
    assert extra_checks.weak_task(torch.randn(10)) is None
