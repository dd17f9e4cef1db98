"""Trials: seeds, separate input sets per side, detection of modified inputs."""

import torch

from kz_worker.run.correctness import run_trials
from kz_worker.run.inputs import first_difference, fingerprint
from kz_worker.loader import Task
from kz_worker.options import Options

CPU = torch.device("cpu")


class Recorder(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn, self.seen = fn, []

    def forward(self, *inputs):
        self.seen.append(inputs)
        return self.fn(*inputs)


def task(get_inputs):
    return Task(model=None, get_inputs=get_inputs, get_init_inputs=list)


def test_trial_seeds_and_inputs_are_reproducible():
    ref, cand = Recorder(torch.neg), Recorder(torch.neg)
    stage, failure = run_trials(task(lambda: [torch.randn(5)]), ref, cand, CPU,
                                Options(trials=2, seed=7))
    assert failure is None and stage["status"] == "pass"
    torch.manual_seed(8)
    assert torch.equal(ref.seen[1][0], torch.randn(5))
    assert ref.seen[0][0] is not cand.seen[0][0]
    assert torch.equal(ref.seen[0][0], cand.seen[0][0])


def test_candidate_writing_its_input_fails_even_with_right_output():
    stage, failure = run_trials(task(lambda: [torch.randn(5), 2]), Recorder(lambda x, k: x * k),
                                Recorder(lambda x, k: x.mul_(k)), CPU, Options(trials=1))
    assert failure is None and stage["status"] == "fail"
    assert stage["trials"][0]["inputs_modified"] is True
    assert stage["trials"][0]["failure"] == "trial 0: candidate modified input 0"


def test_reference_writing_its_input_does_not_touch_the_candidate_copy():
    ref = Recorder(lambda x: x.add_(1))
    cand = Recorder(lambda x: x + 1)
    stage, _ = run_trials(task(lambda: [torch.zeros(3)]), ref, cand, CPU, Options(trials=1))
    assert stage["status"] == "pass"


def test_fingerprint_handles_nan_nesting_shapes_and_permutations():
    nan = torch.tensor([float("nan"), 1.0])
    same = fingerprint([nan, [torch.ones(2)]])
    assert first_difference(same, fingerprint([nan.clone(), [torch.ones(2)]])) is None
    assert first_difference(same, fingerprint([nan.clone(), [torch.zeros(2)]])) == 1
    assert first_difference(fingerprint([torch.ones(2)]), fingerprint([torch.ones(2, 1)])) == 0
    x = torch.arange(10.0)
    assert first_difference(fingerprint([x]), fingerprint([x.flip(0)])) == 0  # same sum
    assert first_difference(fingerprint([x, 3]), fingerprint([x, 4])) == 1


def test_fingerprint_covers_every_dtype_and_non_contiguous_views():
    for dtype in (torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.bool,
                  torch.complex64):
        a = (torch.arange(12) % 3).to(dtype).reshape(3, 4)
        b = a.clone()
        b[2, 3] = 1 if dtype != torch.bool else False
        assert first_difference(fingerprint([a.t()]), fingerprint([a.t().contiguous()])) is None
        assert (first_difference(fingerprint([a]), fingerprint([b])) == 0) == (not torch.equal(a, b))


def test_get_inputs_that_ignores_the_seed_is_an_invalid_task():
    import random as pyrandom
    state = pyrandom.Random(0)  # a private RNG: seeding cannot reach it
    stage, failure = run_trials(task(lambda: [torch.full((3,), state.random())]),
                                Recorder(torch.neg), Recorder(torch.neg), CPU, Options(trials=1))
    assert failure is not None and failure.status == "invalid_task"
    assert "not deterministic under a fixed seed" in failure.reason


def test_stochastic_forward_sees_the_same_seed():
    stage, _ = run_trials(task(lambda: [torch.zeros(4)]), Recorder(lambda x: x + torch.rand(4)),
                          Recorder(lambda x: x + torch.rand(4)), CPU, Options(trials=2))
    assert stage["status"] == "pass"


def test_get_inputs_must_return_a_list():
    stage, failure = run_trials(task(lambda: torch.ones(3)), Recorder(torch.neg),
                                Recorder(torch.neg), CPU, Options(trials=1))
    assert stage["status"] == "error" and failure.status == "invalid_task"
    assert failure.reason == "task: get_inputs() returned Tensor, not a list"


def test_uncomparable_candidate_output_fails_the_trial():
    stage, failure = run_trials(task(lambda: [torch.ones(3)]), Recorder(torch.neg),
                                Recorder(lambda x: torch.empty(3, device="meta")), CPU,
                                Options(trials=1))
    assert failure is None and stage["status"] == "fail"
    assert stage["trials"][0]["failure"].startswith("trial 0: outputs cannot be compared: ")
