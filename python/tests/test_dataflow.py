"""Dataflow rules: outputs must be plain dense tensors with their own memory."""

import pytest
import torch

from kz_worker.run import dataflow
from kz_worker.run.correctness import run_trials
from kz_worker.failure import Failure
from kz_worker.options import parse_run_request


class Sub(torch.Tensor):
    pass


def test_plain_fresh_output_passes():
    x = torch.randn(4, 4)
    assert dataflow.check(torch.relu(x), [x], [], False) is None


def test_output_sharing_an_input_is_aliasing():
    x = torch.randn(4, 4)
    rule, message = dataflow.check(x.view(16), [x], [], False)
    assert rule == "dataflow.aliasing" and "input 0" in message


def test_view_tasks_may_return_views_of_their_input():
    x = torch.randn(4, 4)
    assert dataflow.aliases_input(x.view(16), [x])
    assert dataflow.check(x.view(16), [x], [], True) is None


def test_outputs_sharing_memory_with_each_other():
    y = torch.randn(8)
    rule, message = dataflow.check((y[:4], y[4:]), [torch.randn(8)], [], False)
    assert rule is None or rule == "dataflow.aliasing"
    rule, message = dataflow.check((y, y), [torch.randn(8)], [], False)
    assert rule == "dataflow.aliasing" and "output 0" in message


def test_subclass_and_meta_outputs_are_not_dense():
    x = torch.randn(4)
    assert dataflow.check(x.clone().as_subclass(Sub), [x], [], False)[0] == "dataflow.not_dense"
    assert dataflow.check(torch.empty(4, device="meta"), [x], [], False)[0] == "dataflow.not_dense"


def test_reusing_an_earlier_output_is_aliasing():
    old = torch.randn(4)
    rule, message = dataflow.check(old, [torch.randn(4)], dataflow.spans(old), False)
    assert rule == "dataflow.aliasing" and "earlier" in message


class Task:
    @staticmethod
    def get_inputs():
        return [torch.randn(64)]


class Ref(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Cached(torch.nn.Module):
    """Right values on every trial, but always into one buffer it keeps (one allocation
    serving every call): the previous trial's output is still alive when it is reused."""

    def __init__(self):
        super().__init__()
        self.buf = None

    def forward(self, x):
        if self.buf is None:
            self.buf = torch.empty_like(x)
        torch.mul(x, 2, out=self.buf)
        return self.buf


def test_trials_reject_a_candidate_that_reuses_its_output_buffer():
    options = parse_run_request({"op": "run", "task_path": "t", "candidate_path": "c",
                                 "backend": "triton", "device": "cpu"}).options
    stage, failure = run_trials(Task, Ref(), Cached(), torch.device("cpu"), options)
    assert isinstance(failure, Failure)
    assert failure.status == "rejected" and "dataflow.aliasing" in failure.reason
    assert stage["trials_run"] == 1, "trial 0 passes; trial 1 sees the reused buffer"
