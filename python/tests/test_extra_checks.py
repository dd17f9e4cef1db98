"""Extra checks: signed inputs for tasks that only draw non-negative values, perturbed
sizes (size constants of any name and value, helpers, constrained constants, axis
constants left alone), the stage's entry for every check, and the weak-task flag."""

import pytest
import torch

from kz_worker.failure import Failure

from kz_worker.run import extra_checks
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


def module_from(source: str, role: str = "task"):
    """The task as the worker loads it (loader.load_task from a file): a loader.Task,
    whose size constants live in its module namespace (the H200 corpus run of
    2026-11-29 found the check skipped because it looked at the Task object instead).
    With role "candidate": loader.load_candidate's ModelNew."""
    import os
    import tempfile
    from kz_worker import loader
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    try:
        return loader.load_task(f.name) if role == "task" else loader.load_candidate(f.name)
    finally:
        os.unlink(f.name)


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


def test_a_refused_constant_is_left_and_the_others_still_move():
    strict = TASK_SOURCE.replace("return torch.relu(x)", "assert x.shape[1] % 8 == 0\n        return torch.relu(x)")
    task = module_from(strict)
    entry, failure = extra_checks.perturbed_sizes(task, Relu, CPU, OPTIONS)
    assert failure is None and entry["ran"] and entry["pass"]
    assert entry["sizes"] == {"batch": 13} and list(entry["refused"]) == ["dim"]
    assert "dim: 1024 -> 1021" in entry["partial"]
    assert task.namespace["dim"] == 1024


def test_every_nudge_refused_means_not_run_with_the_reason():
    strict = TASK_SOURCE.replace("return torch.relu(x)", "assert x.numel() % 8 == 0\n        return torch.relu(x)")
    task = module_from(strict.replace("batch, dim = 16, 1024", "batch, dim = 1, 1024"))
    entry, failure = extra_checks.perturbed_sizes(task, Relu, CPU, OPTIONS)
    assert failure is None and entry["ran"] is False
    assert entry["reason"].startswith("the reference refused {dim: 1024 -> 1021}")
    assert "AssertionError" in entry["reason"] and task.namespace["dim"] == 1024


def test_no_size_constants_means_not_run():
    entry, failure = extra_checks.perturbed_sizes(PositiveTask, Relu, CPU, OPTIONS)
    assert failure is None and entry == {"check": "perturbed_sizes", "ran": False,
                                         "reason": extra_checks.NO_SIZES}


# --- perturbed sizes on tasks whose sizes have other names --------------------------
# The honest candidate of each task is its own Model class; the baked ones derive from it.

def baked(model_class, *shapes):
    """A candidate equal to `model_class` on inputs of exactly `shapes`, wrong otherwise
    (as a kernel with those numbers compiled in would be)."""
    class Baked(model_class):
        def forward(self, *inputs):
            out = super().forward(*inputs)
            if tuple(tuple(x.shape) for x in inputs) != shapes:
                out = out + 1.0
            return out
    return Baked


MATMUL = '''
import torch
M, K, N = 250, 203, 136
class Model(torch.nn.Module):
    forward = lambda self, a, b: a @ b
def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]
def get_init_inputs():
    return []
'''


def test_m_k_n_are_moved_and_a_baked_matmul_fails():
    task = module_from(MATMUL)
    entry, failure = extra_checks.perturbed_sizes(
        task, baked(task.model, (250, 203), (203, 136)), CPU, OPTIONS)
    assert entry["ran"] and not entry["pass"] and "correctness.perturbed_sizes" in failure
    assert entry["sizes"] == {"M": 247, "K": 201, "N": 133}
    assert entry["from"] == {"M": 250, "K": 203, "N": 136}
    assert (task.namespace["M"], task.namespace["K"], task.namespace["N"]) == (250, 203, 136)
    entry, failure = extra_checks.perturbed_sizes(task, task.model, CPU, OPTIONS)
    assert failure is None and entry["pass"]


IRREGULAR = '''
import torch
batch_size, dim = 12, 8205
class Model(torch.nn.Module):
    forward = lambda self, x: torch.tanh(x)
def get_inputs():
    return [torch.randn(batch_size, dim)]
def get_init_inputs():
    return []
'''


def test_irregular_sizes_move_too():
    task = module_from(IRREGULAR)
    entry, failure = extra_checks.perturbed_sizes(task, baked(task.model, (12, 8205)), CPU, OPTIONS)
    assert entry["sizes"] == {"batch_size": 9, "dim": 8203} and "perturbed sizes" in failure
    assert extra_checks.perturbed_sizes(task, task.model, CPU, OPTIONS)[1] is None


AXIS = '''
import torch
batch_size, features, dim = 24, 100, 1
class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
    def forward(self, x):
        return torch.softmax(x, self.dim)
def get_inputs():
    return [torch.randn(batch_size, features)]
def get_init_inputs():
    return [dim]
'''


def test_an_axis_constant_is_not_moved():
    task = module_from(AXIS)
    assert extra_checks.size_constants.candidates(task, task.namespace) == {
        "batch_size": 24, "features": 100}
    entry, failure = extra_checks.perturbed_sizes(task, task.model, CPU, OPTIONS)
    assert failure is None and entry["sizes"] == {"batch_size": 21, "features": 97}
    assert task.namespace["dim"] == 1


LINEAR = '''
import torch
batch_size, in_features, out_features = 40, 120, 72
class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = torch.nn.Linear(in_features, out_features)
    def forward(self, x):
        return self.fc(x)
def get_inputs():
    return [torch.randn(batch_size, in_features)]
def get_init_inputs():
    return [in_features, out_features]
'''


def test_init_input_sizes_move_and_baked_parameters_fail():
    task = module_from(LINEAR)

    class BakedLinear(task.model):
        """Ignores the init inputs: its weights have the task's shape, whatever it is given."""

        def __init__(self, in_features, out_features):
            super().__init__(120, 72)
    entry, failure = extra_checks.perturbed_sizes(task, BakedLinear, CPU, OPTIONS)
    assert entry["sizes"] == {"batch_size": 37, "in_features": 117, "out_features": 69}
    assert not entry["pass"] and "parameters do not correspond" in failure
    entry, failure = extra_checks.perturbed_sizes(task, task.model, CPU, OPTIONS)
    assert failure is None and entry["pass"]


HELPER = '''
import torch
import functools
rows, cols, width, unused, flag = 48, 300, 64, 4096, True
def _shape():
    return (rows, _cols())
@functools.lru_cache
def _cols():
    return cols
class Model(torch.nn.Module):
    def forward(self, x, y):
        return x.sum(1) + y.sum()
def get_inputs():
    make = lambda: [torch.randn(*_shape())]
    return make() + [torch.randn(n) for n in (width,) if flag]
def get_init_inputs():
    return []
'''


def test_constants_behind_helpers_lambdas_and_comprehensions_are_found_and_moved():
    task = module_from(HELPER)
    assert extra_checks.size_constants.candidates(task, task.namespace) == {
        "rows": 48, "cols": 300, "width": 64}
    entry, failure = extra_checks.perturbed_sizes(task, baked(task.model, (48, 300), (64,)),
                                                  CPU, OPTIONS)
    assert entry["sizes"] == {"rows": 45, "cols": 297, "width": 61} and failure


GROUPED = '''
import torch
batch_size, in_channels, out_channels, groups, kernel_size, height, width = 8, 16, 32, 8, 3, 20, 20
class Model(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size, groups=groups)
    def forward(self, x):
        return self.conv(x)
def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]
def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
'''


def test_a_constrained_constant_does_not_disable_the_check():
    task = module_from(GROUPED)
    entry, failure = extra_checks.perturbed_sizes(task, baked(task.model, (8, 16, 20, 20)),
                                                  CPU, OPTIONS)
    assert entry["sizes"] == {"batch_size": 5, "height": 17, "width": 17}
    assert set(entry["refused"]) == {"in_channels", "out_channels", "groups"}
    assert "not moved" in entry["partial"] and "kernel_size" not in entry["partial"]
    assert not entry["pass"] and failure
    assert task.namespace["groups"] == 8 and task.namespace["in_channels"] == 16
    assert extra_checks.perturbed_sizes(task, task.model, CPU, OPTIONS)[1] is None


def test_namespace_is_restored_when_the_candidate_raises():
    task = module_from(IRREGULAR)

    class Raising(task.model):
        def forward(self, x):
            if x.shape[1] != 8205:
                raise ValueError("only 8205 columns")
            return super().forward(x)
    with pytest.raises(Failure):
        extra_checks.perturbed_sizes(task, Raising, CPU, OPTIONS)
    assert (task.namespace["batch_size"], task.namespace["dim"]) == (12, 8205)


def test_a_candidate_constructor_refusing_the_new_sizes_fails():
    task = module_from(LINEAR)

    class RefusingConstructor(task.model):
        def __init__(self, in_features, out_features):
            assert in_features == 120, "baked"
            super().__init__(in_features, out_features)
    entry, failure = extra_checks.perturbed_sizes(task, RefusingConstructor, CPU, OPTIONS)
    assert not entry["pass"] and "ModelNew(*get_init_inputs()) raised AssertionError" in failure


def test_nudge_rule_moves_every_value_down_to_an_odd_value():
    nudge = extra_checks.size_constants.nudge
    assert [nudge(v) for v in (8, 9, 16, 1024, 8205, 4096)] == [5, 7, 13, 1021, 8203, 4093]
    for v in range(extra_checks.size_constants.MIN_SIZE, 5000):
        assert v - 3 <= nudge(v) <= v - 2 and nudge(v) % 2 == 1 and nudge(v) >= 5


def test_bools_enums_and_small_ints_are_not_sizes():
    import enum
    is_size = extra_checks.size_constants.is_size
    assert not is_size(True) and not is_size(7) and not is_size(enum.IntEnum("E", "A B")(2))
    assert is_size(8) and is_size(8205)


def test_the_stage_lists_a_check_that_did_not_run_after_an_earlier_failure():
    task = module_from(TASK_SOURCE.replace("torch.randn(batch, dim)", "torch.rand(batch, dim)"))
    data, failure = extra_checks.run(task, Relu(), Identity(), CPU, OPTIONS)
    assert "signed inputs" in failure
    assert data["checks"][1] == {"check": "perturbed_sizes", "ran": False,
                                 "reason": "signed_inputs failed first"}


def test_signed_inputs_are_reproducible_mixed_and_cover_non_contiguous_inputs():
    from kz_worker.run.extra_checks import _signed_inputs
    from kz_worker.loader import Task
    task = Task(model=None, get_init_inputs=list,
                get_inputs=lambda: [torch.rand(64, 33) + 0.1, torch.rand(33, 64).t() + 0.1, 3])
    a, positive = _signed_inputs(task, 5, torch.device("cpu"))
    b, _ = _signed_inputs(task, 5, torch.device("cpu"))
    assert positive and a[2] == 3
    for x, y in zip(a[:2], b[:2]):
        assert torch.equal(x, y) and bool((x < 0).any()) and bool((x > 0).any())
    negative = Task(model=None, get_init_inputs=list, get_inputs=lambda: [torch.randn(8)])
    assert _signed_inputs(negative, 5, torch.device("cpu"))[1] is False


def test_weak_task_flags_without_copying_the_output():
    from kz_worker.run.extra_checks import weak_task
    assert weak_task(torch.zeros(10)).startswith("reference output 0 is near zero")
    assert "near-constant" in weak_task(torch.full((10,), 3.0))
    assert weak_task((torch.randn(10), 2)) is None


class Dropout(torch.nn.Module):
    """Training mode: its mask comes from the global RNG, seeded alike for both sides."""

    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x) * 2.0


def test_a_reference_with_dropout_passes_signed_inputs_against_itself():
    # KernelBench L2/66 (Matmul, Dropout, Softmax) on the H200, 2026-12-02: the candidate's
    # signed inputs were drawn after seeding, so its dropout mask differed from the reference's.
    data, failure = extra_checks.run(PositiveTask, Dropout(), Dropout(), CPU, OPTIONS)
    assert failure is None, failure
    assert data["checks"][0] == {"check": "signed_inputs", "ran": True, "pass": True,
                                 "trials": extra_checks.SIGNED_TRIALS}


STATE_SIZED = '''
import torch
batch_size, hidden = 16, 24
class Model(torch.nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.state = torch.zeros(batch_size, hidden_size)
    def forward(self, x):
        return x + self.state
def get_inputs():
    return [torch.randn(batch_size, hidden)]
def get_init_inputs():
    return [hidden]
'''


def test_a_port_reading_the_tasks_own_constant_follows_the_moved_size():
    # KernelBench L3/33 (VanillaRNN) self-checked on the H200, 2026-12-02: Model.__init__
    # reads the module's batch_size; the candidate's copy of it was not moved with the task's.
    task = module_from(STATE_SIZED)
    port = module_from(STATE_SIZED + "ModelNew = Model\n", "candidate")
    entry, failure = extra_checks.perturbed_sizes(task, port, CPU, OPTIONS)
    assert failure is None, failure
    assert entry["pass"] and entry["candidate_constants"] == ["batch_size", "hidden"]
    namespace = vars(__import__("sys").modules[port.__module__])
    assert (namespace["batch_size"], namespace["hidden"]) == (16, 24), "restored"


def test_a_size_baked_under_another_name_still_fails():
    task = module_from(STATE_SIZED)
    baked = module_from(STATE_SIZED.replace("zeros(batch_size,", "zeros(rows,") + "rows = 16\nModelNew = Model\n",
                        "candidate")
    with pytest.raises(Failure, match="must match the size"):  # its state keeps 16 rows
        extra_checks.perturbed_sizes(task, baked, CPU, OPTIONS)
