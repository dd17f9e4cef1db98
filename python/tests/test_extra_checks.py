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


TASK_SOURCE = '''
import torch
batch, dim = 16, 1024
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(batch, dim)]
def get_init_inputs():
    return []
'''


def module_from(source: str):
    """The task as the worker loads it (loader.load_task from a file): a loader.Task,
    whose size constants live in its module namespace (the H200 corpus run of
    2026-11-29 found the check skipped because it looked at the Task object instead)."""
    import tempfile
    from kz_worker import loader
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    return loader.load_task(f.name)


class HardCoded(torch.nn.Module):
    """Right only for the task's own shape: processes a fixed 16 x 1024 block."""

    def forward(self, x):
        y = torch.zeros_like(x)
        y[:16, :1024] = torch.relu(x[:16, :1024])
        y.view(-1)[-1] = 0.0 if x.shape == (16, 1024) else 12345.0
        return y


def test_hard_coded_kernel_fails_on_perturbed_sizes():
    task = module_from(TASK_SOURCE)
    entry, failure = extra_checks.perturbed_sizes(task, HardCoded, CPU, OPTIONS)
    assert entry["ran"] and not entry["pass"]
    assert entry["sizes"] == {"batch": 13, "dim": 1021}
    assert "perturbed sizes" in failure
    assert (task.namespace["batch"], task.namespace["dim"]) == (16, 1024), "constants restored"


def test_general_kernel_passes_perturbed_sizes():
    entry, failure = extra_checks.perturbed_sizes(module_from(TASK_SOURCE), Relu, CPU, OPTIONS)
    assert failure is None and entry["pass"] is True


def test_perturbed_sizes_skipped_when_the_task_does_not_allow_them():
    strict = TASK_SOURCE.replace("return torch.relu(x)", "assert x.shape[1] % 8 == 0\n        return torch.relu(x)")
    entry, failure = extra_checks.perturbed_sizes(module_from(strict), Relu, CPU, OPTIONS)
    assert failure is None and entry["ran"] is False and "does not accept" in entry["reason"]


def test_no_size_constants_means_not_run():
    entry, failure = extra_checks.perturbed_sizes(PositiveTask, Relu, CPU, OPTIONS)
    assert failure is None and entry["ran"] is False
