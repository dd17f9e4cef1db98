"""Parameter correspondence: name first, then creation order among equal shapes."""

import torch
import torch.nn as nn

from kz_worker.run.params import match_parameters, mismatch_reason


class Pair(nn.Module):
    def __init__(self, names, shapes):
        super().__init__()
        for name, shape in zip(names, shapes):
            self.register_parameter(name, nn.Parameter(torch.randn(*shape)))


def test_same_name_wins_over_creation_order():
    ref = Pair(["a", "b"], [(3, 3), (3, 3)])
    cand = Pair(["b", "a"], [(3, 3), (3, 3)])
    stage = match_parameters(ref, cand)
    assert stage["status"] == "ok" and stage["matched"] == 2
    assert torch.equal(cand.a, ref.a) and torch.equal(cand.b, ref.b)


def test_creation_order_among_equal_shapes_for_renamed_parameters():
    ref = Pair(["a", "b", "c"], [(3, 3), (4,), (3, 3)])
    cand = Pair(["x", "y", "z"], [(4,), (3, 3), (3, 3)])
    stage = match_parameters(ref, cand)
    assert stage["matched"] == 3
    assert torch.equal(cand.y, ref.a) and torch.equal(cand.z, ref.c)
    assert torch.equal(cand.x, ref.b)


def test_missing_and_extra_are_reported():
    ref = Pair(["w", "b"], [(2, 5), (2,)])
    cand = Pair(["w", "scale"], [(2, 5), (1,)])
    stage = match_parameters(ref, cand)
    assert stage["status"] == "mismatch"
    assert stage["missing"] == [{"name": "b", "shape": [2]}]
    assert stage["extra"] == [{"name": "scale", "shape": [1]}]
    assert mismatch_reason(stage) == ("parameters do not correspond: missing [b (2,)], "
                                      "extra [scale (1,)]")


def test_same_name_with_other_shape_does_not_match():
    stage = match_parameters(Pair(["w"], [(2, 3)]), Pair(["w"], [(3, 2)]))
    assert stage["matched"] == 0 and stage["status"] == "mismatch"


def test_buffers_are_copied_best_effort_and_never_mismatch():
    ref, cand = nn.BatchNorm1d(4), nn.Module()
    ref.running_mean.fill_(3.0)
    cand.register_buffer("mean", torch.zeros(4))
    cand.register_buffer("unused", torch.zeros(7))
    cand.weight = nn.Parameter(torch.zeros(4))
    cand.bias = nn.Parameter(torch.zeros(4))
    stage = match_parameters(ref, cand)
    assert stage["status"] == "ok" and stage["buffers_matched"] == 1
    assert torch.equal(cand.mean, torch.full((4,), 3.0))
    assert torch.equal(cand.weight, ref.weight)
