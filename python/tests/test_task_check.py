"""Op `task_check` on the CPU: the footprint first, refusal before allocation, the
reference's time and peak, determinism, input sensitivity, finite and weak outputs."""

import json

import pytest
import torch

from kz_worker import task_check
from kz_worker.protocol import ProtocolError
from kzhelpers import RecordingChannel, spawn_worker
from test_footprint import CONV, ELEMENTWISE, simple, write_task


def check(path, **options):
    """The task_check object and the recorded events of an in-process run."""
    channel = RecordingChannel()
    result = task_check.task_check_op(
        {"op": "task_check", "task_path": path, "device": "cpu", "options": options}, channel)
    assert result["type"] == "result" and result["ok"], result
    json.dumps(result, allow_nan=False)
    return result["task_check"], channel.events


def statuses(tc) -> dict:
    return {c["check"]: c["status"] for c in tc["checks"]}


def test_elementwise_task_is_ok(tmp_path):
    tc, events = check(write_task(tmp_path, ELEMENTWISE))
    assert tc["version"] == 1 and tc["status"] == "ok" and tc["error"] is None, tc
    assert all(s == "pass" for s in statuses(tc).values()), tc["checks"]
    assert tc["flags"] == [] and "kz can judge this task" in tc["reason"]
    ref = tc["reference"]
    assert ref["deterministic"] and ref["input_sensitive"] and ref["finite"]
    assert ref["weak_task"] is None
    assert ref["seconds"] > 0 and ref["peak_bytes"] > 0 and ref["inputs_generated"] == "host"
    assert ref["outputs"] == {"count": 1, "bytes": 65536} and not ref["writes_inputs"]
    assert tc["footprint"]["method"] == "meta" and tc["budget"]["fits"] is True
    assert tc["budget"]["need_bytes"] == 3 * (65536 + 65536)
    assert tc["device"]["kind"] == "cpu" and tc["device"]["available_bytes"] > 0
    assert [e["stage"] for e in events] == ["footprint", "reference"]
    assert [c["check"] for c in events[0]["data"]["checks"]] == ["load", "footprint", "fits"]


def test_conv_task(tmp_path):
    body = CONV.replace("torch.randn(16, 3, 256, 256)", "torch.randn(2, 3, 32, 32)")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "ok", tc["reason"]
    assert tc["footprint"]["params"]["count"] == 7
    assert tc["budget"]["need_bytes"] == 3 * (2 * 3 * 32 * 32 * 4 + 2 * 64 * 30 * 30 * 4) + \
        2 * tc["footprint"]["params"]["bytes"]
    assert statuses(tc)["footprint_matches"] == "pass"


def test_data_dependent_shapes_run_with_a_warning(tmp_path):
    inputs = "[torch.randn(int((torch.randn(100) > 0).sum()), 10)]"
    tc, _ = check(write_task(tmp_path, simple("x[0] * 2", inputs)))
    assert tc["status"] == "ok" and tc["footprint"]["method"] == "unknown"
    assert statuses(tc)["footprint"] == "warn" and statuses(tc)["fits"] == "skip"
    assert "footprint_unknown" in tc["flags"] and tc["footprint"]["reason"]
    assert "footprint_matches" not in statuses(tc)


def test_task_larger_than_memory_is_refused_before_allocation(tmp_path):
    tc, events = check(write_task(tmp_path, simple("torch.relu(x[0])", "[torch.randn(10**13)]")))
    assert tc["status"] == "invalid_task" and tc["reference"] is None
    assert tc["footprint"]["inputs"]["bytes"] == 4 * 10**13  # ~40 TB, never allocated
    assert tc["checks"][-1]["check"] == "fits" and tc["checks"][-1]["status"] == "fail"
    assert tc["reason"].startswith("fits: needs ") and "TiB" in tc["reason"]
    assert tc["flags"] == ["too_large"] and tc["budget"]["fits"] is False
    assert events == []  # refused: the result frame carries everything


def test_child_host_limit_is_the_budget(tmp_path):
    rss = task_check.footprint.host_memory(None)["rss_bytes"]
    path = write_task(tmp_path, simple("x[0] + 1", "[torch.randn(16 << 20)]"))  # 64 MiB each way
    tc, _ = check(path, host_limit_bytes=rss + (256 << 20))
    assert tc["status"] == "invalid_task" and tc["device"]["available_source"] == "host_limit"
    assert "host_limit" in tc["reason"]


def test_dropout_in_training_mode_is_nondeterministic(tmp_path):
    body = simple("torch.nn.functional.dropout(x[0], 0.5, training=True)", "[torch.ones(64, 64)]")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "invalid_task" and "nondeterministic" in tc["flags"]
    assert statuses(tc)["deterministic"] == "fail" and "draws random numbers" in tc["reason"]
    assert tc["reference"]["reseeded"] == "equal"  # reproducible only when re-seeded


def test_randperm_is_nondeterministic(tmp_path):
    body = simple("x[0][torch.randperm(x[0].shape[0])]", "[torch.randn(64, 8)]")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "invalid_task" and "nondeterministic" in tc["flags"]


def test_rounding_level_differences_only_warn(tmp_path):
    # A forward that differs between calls by less than fp32's tolerance (as GPU atomics do).
    body = "import time\n" + simple("x[0] + (time.perf_counter_ns() % 997 + 1) * 1e-9",
                                    "[torch.randn(64)]")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "ok" and "not_bitwise_reproducible" in tc["flags"]
    assert statuses(tc)["deterministic"] == "warn" and tc["reference"]["repeat"] == "close"


def test_output_that_changes_even_when_re_seeded(tmp_path):
    body = "import time\n" + simple("x[0] + time.perf_counter_ns() % 997 + 1", "[torch.randn(64)]")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "invalid_task" and "even re-seeded" in tc["reason"]
    assert tc["reference"]["reseeded"] == "differ"


def test_inputs_not_reproducible_under_a_seed(tmp_path):
    body = "import os\n" + simple(
        "x[0] * 2", "[torch.frombuffer(bytearray(os.urandom(64)), dtype=torch.float32)]")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "invalid_task" and statuses(tc)["inputs_reproducible"] == "fail"


def test_tuple_of_1000_outputs(tmp_path):
    body = simple("tuple(x[0] + i for i in range(1000))", "[torch.randn(32, 32)]")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "ok", tc["reason"]
    assert tc["reference"]["outputs"] == {"count": 1000, "bytes": 1000 * 4096}
    assert tc["footprint"]["outputs"]["count"] == 1000 and tc["footprint"]["outputs"]["truncated"]
    assert statuses(tc)["footprint_matches"] == "pass"


def test_constant_reference_is_weak_and_input_insensitive(tmp_path):
    body = simple("torch.zeros_like(x[0]) + 3.0", "[torch.randn(32, 32)]")
    tc, _ = check(write_task(tmp_path, body))
    assert tc["status"] == "ok"
    assert set(tc["flags"]) == {"weak_task", "input_insensitive"}
    assert "near-constant" in tc["reference"]["weak_task"]
    assert not tc["reference"]["input_sensitive"]
    assert statuses(tc)["weak_task"] == "warn"


def test_same_inputs_for_every_seed_are_named(tmp_path):
    tc, _ = check(write_task(tmp_path, simple("x[0] * 2", "[torch.arange(16.0)]")))
    assert tc["status"] == "ok" and "input_insensitive" in tc["flags"]
    assert "same inputs for every seed" in next(c["detail"] for c in tc["checks"]
                                                if c["check"] == "input_sensitive")


def test_non_finite_output_is_flagged(tmp_path):
    tc, _ = check(write_task(tmp_path, simple("torch.log(x[0])", "[torch.randn(64)]")))
    assert tc["status"] == "ok" and "non_finite" in tc["flags"] and not tc["reference"]["finite"]


def test_reference_that_raises(tmp_path):
    tc, _ = check(write_task(tmp_path, simple("x[0] @ x[0]", "[torch.randn(3, 4)]")))
    assert tc["status"] == "invalid_task" and statuses(tc)["reference_runs"] == "fail"
    assert "Model forward" in tc["reason"] and tc["error"]["kind"] == "invalid_task"


def test_syntax_error(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("def get_inputs(:\n")
    tc, events = check(str(path))
    assert tc["status"] == "invalid_task" and tc["error"]["kind"] == "python_syntax"
    assert tc["checks"] == [{"check": "load", "status": "fail", "detail": tc["reason"]}]
    assert tc["footprint"] is None and events == []


def test_compare_and_helpers():
    a = torch.tensor([1.0, float("nan"), 3.0])
    assert task_check.compare(a, a.clone()) == ("equal", 0.0)
    verdict, diff = task_check.compare(a, a + 1e-5)  # within fp32's 1e-4: the verifier's "same"
    assert verdict == "close" and 0 < diff < 1e-4
    assert task_check.compare(a, a + 1e-3)[0] == "differ"
    assert task_check.compare(a.double(), a.double() + 1e-5)[0] == "differ"  # fp64: 1e-7
    assert task_check.compare((a,), (a, a))[0] == "differ"
    assert task_check.compare(torch.arange(3), torch.arange(3) + 1) == ("differ", None)
    assert task_check.human_bytes(1536) == "1.5 KiB" and task_check.human_bytes(10) == "10 B"
    assert task_check.human_bytes(4 * 10**13) == "36.4 TiB"


def test_parse_request_errors():
    good = {"task_path": "/t.py", "device": "cpu"}
    assert task_check.parse_request(good)[2] == task_check.DEFAULTS
    for bad in ({"device": "tpu"}, {"task_path": 3}, {"options": {"seed": -1}},
                {"options": {"host_limit_bytes": 1.5}}, {"options": "x"}):
        with pytest.raises(ProtocolError):
            task_check.parse_request({**good, **bad})


def test_over_the_protocol(tmp_path):
    request = {"protocol": 1, "op": "task_check", "task_path": write_task(tmp_path, ELEMENTWISE),
               "device": "cpu", "options": {"seed": 1}}
    frames, code, _, stderr = spawn_worker(request)
    assert code == 0 and frames[-1]["ok"], stderr[-2000:]
    assert [f.get("stage") for f in frames[:-1]] == ["footprint", "reference"]
    assert frames[-1]["task_check"]["status"] == "ok"
    frames, _, _, _ = spawn_worker({**request, "device": "cuda"})  # no GPU visible here
    assert frames[-1]["ok"] is False and frames[-1]["error"]["kind"] == "not_run"


def test_footprint_op_measures_a_task_without_allocating(tmp_path):
    from kz_worker.footprint_op import footprint_op
    path = tmp_path / "huge.py"
    path.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return x * 2\n\ndef get_inputs():\n    return [torch.rand(100000, 100000, 100)]\n\n"
                    "def get_init_inputs():\n    return []\n")
    result = footprint_op({"task_path": str(path)})
    assert result["ok"] and result["footprint"]["method"] == "meta"
    assert result["footprint"]["inputs"]["bytes"] == 4 * 10**12
    assert result["budget"]["need_bytes"] == 3 * 8 * 10**12 and result["budget"]["complete"]
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\n")
    bad = footprint_op({"task_path": str(broken)})
    assert not bad["ok"] and bad["error"]["kind"] == "invalid_task"
