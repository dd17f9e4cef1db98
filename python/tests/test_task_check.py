"""Op `task_check` on the CPU: the facts only (kz judges them, tests/unit/verify/
task_rules_test.cc): the footprint first, the stop before allocation, the reference's time
and peak, determinism, input sensitivity, finite and weak outputs, where a failure stopped."""

import json

import pytest
import torch

from kz_worker.task import task_check
from kz_worker.protocol import ProtocolError
from kzhelpers import RecordingChannel, spawn_worker
from test_footprint import CONV, ELEMENTWISE, simple, write_task


def check(path, **options):
    """The task_facts object and the recorded events of an in-process run."""
    channel = RecordingChannel()
    result = task_check.task_check_op(
        {"op": "task_check", "task_path": path, "device": "cpu", "options": options}, channel)
    assert result["type"] == "result" and result["ok"], result
    json.dumps(result, allow_nan=False)
    return result["task_facts"], channel.events


def test_elementwise_task_facts(tmp_path):
    tf, events = check(write_task(tmp_path, ELEMENTWISE))
    assert tf["version"] == 2 and tf["stop"] is None and tf["seconds"] > 0, tf
    assert "checks" not in tf and "status" not in tf and "flags" not in tf  # kz judges
    ref = tf["reference"]
    assert ref["deterministic"] and ref["input_sensitive"] and ref["finite"]
    assert ref["repeat"] == "equal" and ref["reseeded"] is None and ref["inputs_vary"]
    assert ref["inputs_reproducible"] and ref["weak_task"] is None
    # On the CPU the peak is a rise of the resident set: 0 when the allocator reuses pages that
    # were already resident (seen under load), so only its presence and method are asserted.
    assert ref["seconds"] > 0 and ref["peak_bytes"] >= 0 and ref["peak_method"]
    assert ref["inputs_generated"] == "host"
    assert ref["check_peak_bytes"] >= ref["peak_bytes"]
    assert ref["outputs"] == {"count": 1, "bytes": 65536} and not ref["writes_inputs"]
    assert tf["footprint"]["method"] == "meta" and tf["budget"]["fits"] is True
    assert tf["budget"]["need_bytes"] == 3 * (65536 + 65536)
    assert tf["device"]["kind"] == "cpu" and tf["device"]["available_bytes"] > 0
    assert [e["stage"] for e in events] == ["footprint", "reference"]
    assert set(events[0]["data"]) == {"footprint", "budget", "device"}
    assert events[1]["data"] == ref


def test_conv_task(tmp_path):
    body = CONV.replace("torch.randn(16, 3, 256, 256)", "torch.randn(2, 3, 32, 32)")
    tf, _ = check(write_task(tmp_path, body))
    assert tf["stop"] is None and tf["footprint"]["params"]["count"] == 7
    assert tf["budget"]["need_bytes"] == 3 * (2 * 3 * 32 * 32 * 4 + 2 * 64 * 30 * 30 * 4) + \
        2 * tf["footprint"]["params"]["bytes"]
    for key in ("inputs", "outputs"):
        group = tf["footprint"][key]
        assert (group["count"], group["bytes"]) == (tf["reference"][key]["count"],
                                                    tf["reference"][key]["bytes"])


def test_data_dependent_shapes_run(tmp_path):
    inputs = "[torch.randn(int((torch.randn(100) > 0).sum()), 10)]"
    tf, _ = check(write_task(tmp_path, simple("x[0] * 2", inputs)))
    assert tf["stop"] is None and tf["footprint"]["method"] == "unknown"
    assert tf["footprint"]["reason"] and tf["budget"]["fits"] is None
    assert not tf["budget"]["complete"] and tf["reference"]["finite"]


def test_task_larger_than_memory_stops_before_allocation(tmp_path):
    tf, events = check(write_task(tmp_path, simple("torch.relu(x[0])", "[torch.randn(10**13)]")))
    assert tf["stop"] == {"at": "fits"} and tf["reference"] is None
    assert tf["footprint"]["inputs"]["bytes"] == 4 * 10**13  # ~40 TB, never allocated
    assert tf["budget"]["fits"] is False and tf["budget"]["need_bytes"] == 3 * 8 * 10**13
    assert events == []  # stopped: the result frame carries everything


def test_child_host_limit_is_the_budget(tmp_path):
    rss = task_check.footprint.host_memory(None)["rss_bytes"]
    path = write_task(tmp_path, simple("x[0] + 1", "[torch.randn(16 << 20)]"))  # 64 MiB each way
    tf, _ = check(path, host_limit_bytes=rss + (256 << 20))
    assert tf["stop"] == {"at": "fits"} and tf["device"]["available_source"] == "host_limit"


def test_dropout_in_training_mode_differs_but_not_re_seeded(tmp_path):
    body = simple("torch.nn.functional.dropout(x[0], 0.5, training=True)", "[torch.ones(64, 64)]")
    tf, _ = check(write_task(tmp_path, body))
    ref = tf["reference"]
    assert ref["repeat"] == "differ" and not ref["deterministic"]
    assert ref["reseeded"] == "equal"  # reproducible only when re-seeded
    assert ref["max_abs_diff"] > 0


def test_randperm_differs(tmp_path):
    body = simple("x[0][torch.randperm(x[0].shape[0])]", "[torch.randn(64, 8)]")
    tf, _ = check(write_task(tmp_path, body))
    assert tf["reference"]["repeat"] == "differ" and tf["reference"]["reseeded"] == "equal"


def test_rounding_level_differences_are_close(tmp_path):
    # A forward that differs between calls by less than fp32's tolerance (as GPU atomics do).
    body = "import time\n" + simple("x[0] + (time.perf_counter_ns() % 997 + 1) * 1e-9",
                                    "[torch.randn(64)]")
    tf, _ = check(write_task(tmp_path, body))
    ref = tf["reference"]
    assert ref["repeat"] == "close" and ref["deterministic"] and 0 < ref["max_abs_diff"] < 1e-4


def test_output_that_changes_even_when_re_seeded(tmp_path):
    body = "import time\n" + simple("x[0] + time.perf_counter_ns() % 997 + 1", "[torch.randn(64)]")
    tf, _ = check(write_task(tmp_path, body))
    assert tf["reference"]["repeat"] == "differ" and tf["reference"]["reseeded"] == "differ"


def test_inputs_not_reproducible_under_a_seed(tmp_path):
    body = "import os\n" + simple(
        "x[0] * 2", "[torch.frombuffer(bytearray(os.urandom(64)), dtype=torch.float32)]")
    tf, _ = check(write_task(tmp_path, body))
    assert tf["reference"]["inputs_reproducible"] is False


def test_tuple_of_1000_outputs(tmp_path):
    body = simple("tuple(x[0] + i for i in range(1000))", "[torch.randn(32, 32)]")
    tf, _ = check(write_task(tmp_path, body))
    assert tf["stop"] is None
    assert tf["reference"]["outputs"] == {"count": 1000, "bytes": 1000 * 4096}
    assert tf["footprint"]["outputs"]["count"] == 1000 and tf["footprint"]["outputs"]["truncated"]
    assert tf["footprint"]["outputs"]["bytes"] == 1000 * 4096


def test_constant_reference_is_weak_and_input_insensitive(tmp_path):
    body = simple("torch.zeros_like(x[0]) + 3.0", "[torch.randn(32, 32)]")
    tf, _ = check(write_task(tmp_path, body))
    ref = tf["reference"]
    assert "near-constant" in ref["weak_task"] and not ref["input_sensitive"]
    assert ref["inputs_vary"] and ref["sensitivity_max_abs_diff"] == 0


def test_same_inputs_for_every_seed(tmp_path):
    tf, _ = check(write_task(tmp_path, simple("x[0] * 2", "[torch.arange(16.0)]")))
    assert tf["reference"]["inputs_vary"] is False and not tf["reference"]["input_sensitive"]


def test_non_finite_output(tmp_path):
    tf, _ = check(write_task(tmp_path, simple("torch.log(x[0])", "[torch.randn(64)]")))
    assert tf["stop"] is None and tf["reference"]["finite"] is False


def test_reference_that_raises(tmp_path):
    tf, events = check(write_task(tmp_path, simple("x[0] @ x[0]", "[torch.randn(3, 4)]")))
    assert tf["stop"]["at"] == "reference" and tf["stop"]["out_of_memory"] is False
    assert "Model forward" in tf["stop"]["reason"] and tf["stop"]["error"]["kind"] == "invalid_task"
    assert tf["reference"] is None and [e["stage"] for e in events] == ["footprint"]


def test_syntax_error(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("def get_inputs(:\n")
    tf, events = check(str(path))
    assert tf["stop"]["at"] == "load" and tf["stop"]["error"]["kind"] == "python_syntax"
    assert tf["stop"]["error"]["line"] == 1 and tf["stop"]["reason"]
    assert tf["footprint"] is None and tf["device"] == {} and events == []


def test_compare_and_helpers():
    a = torch.tensor([1.0, float("nan"), 3.0])
    assert task_check.compare(a, a.clone()) == ("equal", 0.0)
    verdict, diff = task_check.compare(a, a + 1e-5)  # within fp32's 1e-4: the verifier's "same"
    assert verdict == "close" and 0 < diff < 1e-4
    assert task_check.compare(a, a + 1e-3)[0] == "differ"
    assert task_check.compare(a.double(), a.double() + 1e-5)[0] == "differ"  # fp64: 1e-7
    assert task_check.compare((a,), (a, a))[0] == "differ"
    assert task_check.compare(torch.arange(3), torch.arange(3) + 1) == ("differ", None)


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
    assert frames[-1]["task_facts"]["stop"] is None
    frames, _, _, _ = spawn_worker({**request, "device": "cuda"})  # no GPU visible here
    assert frames[-1]["ok"] is False and frames[-1]["error"]["kind"] == "not_run"


def test_footprint_op_measures_a_task_without_allocating(tmp_path):
    from kz_worker.task.footprint_op import footprint_op
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
