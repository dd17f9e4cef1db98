"""Trials: seeds, separate input clones, detection of modified inputs."""

import torch

from kz_worker.correctness import modified_input, run_trials
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


def test_modified_input_handles_nan_and_nesting():
    nan = torch.tensor([float("nan"), 1.0])
    assert modified_input([nan, [torch.ones(2)]], [nan.clone(), [torch.ones(2)]]) is None
    assert modified_input([nan, [torch.ones(2)]], [nan.clone(), [torch.zeros(2)]]) == 1
    assert modified_input([torch.ones(2)], [torch.ones(2, 1)]) == 0


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
