"""footprint.measure: a task's inputs, parameters and outputs counted on the meta device or
with fake tensors, nothing real allocated, and a safe `unknown` when neither works."""

import json
import random
import subprocess
import sys
import textwrap
import time

import torch

from kz_worker import loader
from kz_worker.task import footprint
from kzhelpers import PYTHON_DIR

HEADER = "import torch\nimport torch.nn as nn\n\n"
ELEMENTWISE = """
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(16, 1024)]

def get_init_inputs():
    return []
"""
CONV = """
class Model(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))

def get_inputs():
    return [torch.randn(16, 3, 256, 256)]

def get_init_inputs():
    return [3, 64, 3]
"""


def write_task(tmp_path, body: str, name: str = "task") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return str(path)


def task_of(tmp_path, body: str):
    return loader.load_task(write_task(tmp_path, body))


def simple(forward: str, inputs: str, init: str = "[]"):
    """A task body: forward(self, *args) returns `forward`; get_inputs returns `inputs`."""
    return (f"class Model(nn.Module):\n    def forward(self, *x):\n        return {forward}\n\n"
            f"def get_inputs():\n    return {inputs}\n\n"
            f"def get_init_inputs():\n    return {init}\n")


def test_elementwise_task_on_meta(tmp_path):
    fp = footprint.measure(task_of(tmp_path, ELEMENTWISE))
    assert fp["version"] == 2 and fp["method"] == "meta" and fp["reason"] is None
    assert fp["flops"] == 0 and fp["flops_by_op"] == {}  # elementwise work is not counted
    assert fp["inputs"]["tensors"] == [{"index": 0, "shape": [16, 1024], "dtype": "float32",
                                        "numel": 16384, "bytes": 65536}]
    assert fp["outputs"]["bytes"] == 65536 and fp["outputs"]["count"] == 1
    assert fp["params"]["bytes"] == 0 and fp["total_bytes"] == fp["known_bytes"] == 131072
    json.dumps(fp, allow_nan=False)  # the protocol sends it as is


def test_matmul_flops_counted_from_shapes(tmp_path):
    body = ("class Model(nn.Module):\n    def forward(self, a, b):\n        return torch.relu(a @ b)\n\n"
            "def get_inputs():\n    return [torch.randn(64, 128), torch.randn(128, 32)]\n\n"
            "def get_init_inputs():\n    return []\n")
    fp = footprint.measure(task_of(tmp_path, body))
    assert fp["method"] == "meta"
    assert fp["flops"] == 2 * 64 * 128 * 32 and fp["flops_by_op"] == {"aten.mm": 2 * 64 * 128 * 32}


def test_conv_task_parameters_buffers_and_output_shape(tmp_path):
    fp = footprint.measure(task_of(tmp_path, CONV))
    assert fp["method"] == "meta"
    assert fp["flops"] > 2 * 16 * 64 * 254 * 254 * 3 * 9 * 0.99  # the convolution's MACs x 2
    params = fp["params"]
    # conv weight 64x3x3x3 + bias 64; bn weight, bias (64 each); running mean/var (64 each,
    # fp32) and num_batches_tracked (one int64)
    assert params["parameters_bytes"] == (64 * 27 + 64 + 64 + 64) * 4
    assert params["buffers_bytes"] == 64 * 4 * 2 + 8
    assert params["dtypes"] == {"float32": params["bytes"] - 8, "int64": 8}
    assert {t["name"] for t in params["tensors"]} >= {"conv.weight", "bn.running_var"}
    assert fp["outputs"]["tensors"][0]["shape"] == [16, 64, 254, 254]
    assert fp["inputs"]["bytes"] == 16 * 3 * 256 * 256 * 4


def test_huge_task_is_measured_without_allocating(tmp_path):
    task = task_of(tmp_path, simple("torch.relu(x[0])", "[torch.randn(10**13)]"))
    fp = footprint.measure(task)  # 40 TB each way: a real allocation could not succeed
    assert fp["method"] == "meta"
    assert fp["inputs"]["bytes"] == 4 * 10**13 and fp["outputs"]["bytes"] == 4 * 10**13
    assert fp["total_bytes"] == 8 * 10**13


def test_explicit_cpu_tensors_fall_back_to_fake_without_allocating(tmp_path):
    inputs = "[torch.randn(10**12, device='cpu'), torch.ones(10**12, dtype=torch.float16).cpu()]"
    fp = footprint.measure(task_of(tmp_path, simple("x[0] * x[1]", inputs)))
    assert fp["method"] == "fake"
    assert fp["attempts"][0]["method"] == "meta" and fp["attempts"][0]["stage"] == "get_inputs"
    assert "explicit device" in fp["reason"]
    assert fp["inputs"]["dtypes"] == {"float32": 4 * 10**12, "float16": 2 * 10**12}
    assert fp["outputs"]["tensors"][0]["dtype"] == "float32"


def test_model_moved_to_a_device_in_forward_falls_back(tmp_path):
    body = simple("x[0].to('cpu') + 1", "[torch.randn(8, 8)]")
    fp = footprint.measure(task_of(tmp_path, body))
    assert fp["method"] == "fake" and fp["attempts"][0]["stage"] == "forward"
    assert fp["outputs"]["bytes"] == 256


def test_data_dependent_get_inputs_is_unknown_with_reason(tmp_path):
    inputs = "[torch.randn(int((torch.randn(100) > 0).sum()), 10)]"
    fp = footprint.measure(task_of(tmp_path, simple("x[0] * 2", inputs)))
    assert fp["method"] == "unknown"
    assert [(a["method"], a["stage"]) for a in fp["attempts"]] == \
        [("meta", "get_inputs"), ("fake", "get_inputs")]
    assert "meta:" in fp["reason"] and "fake:" in fp["reason"]
    assert fp["inputs"] is None and fp["outputs"] is None and fp["total_bytes"] is None
    assert fp["params"] == footprint.params_group(torch.nn.Module())  # measured before the failure


def test_nonzero_in_forward_keeps_the_inputs(tmp_path):
    fp = footprint.measure(task_of(tmp_path, simple("x[0].nonzero()", "[torch.randn(1000, 10)]")))
    assert fp["method"] == "unknown" and fp["attempts"][-1]["stage"] == "forward"
    assert fp["inputs"]["bytes"] == 40000 and fp["outputs"] is None
    assert fp["known_bytes"] == 40000 and fp["total_bytes"] is None


def test_item_in_forward_is_unknown(tmp_path):
    body = simple("x[0] * x[0].sum().item()", "[torch.randn(4)]")
    fp = footprint.measure(task_of(tmp_path, body))
    assert fp["method"] == "unknown" and "forward" in fp["reason"]


def test_task_code_that_raises_is_reported_not_raised(tmp_path):
    body = simple("x[0]", "[torch.randn(4)]", init="[1 / 0]")
    fp = footprint.measure(task_of(tmp_path, body))
    assert fp["method"] == "unknown" and fp["attempts"][0]["stage"] == "get_init_inputs"
    assert "ZeroDivisionError" in fp["reason"]


def test_huge_tuple_output_is_counted_and_listed_in_part(tmp_path):
    body = simple("tuple(x[0] + i for i in range(1000))", "[torch.randn(32, 32)]")
    fp = footprint.measure(task_of(tmp_path, body))
    outputs = fp["outputs"]
    assert outputs["count"] == 1000 and outputs["bytes"] == 1000 * 4096
    assert len(outputs["tensors"]) == footprint.MAX_LISTED and outputs["truncated"]
    assert outputs["tensors"][-1]["index"] == footprint.MAX_LISTED - 1


def test_nested_and_non_tensor_leaves(tmp_path):
    body = simple("{'a': x[0], 'b': (x[0][:2], 3)}", "[torch.randn(4, 4), 7]")
    fp = footprint.measure(task_of(tmp_path, body))
    assert fp["inputs"]["count"] == 1 and fp["inputs"]["non_tensors"] == 1
    assert [t["index"] for t in fp["outputs"]["tensors"]] == [0, 1]
    assert fp["outputs"]["non_tensors"] == 1 and fp["outputs"]["bytes"] == 64 + 32


def test_rng_states_are_restored(tmp_path):
    body = "import random\n" + simple("x[0]", "[torch.randn(3), torch.tensor(random.random())]")
    task = task_of(tmp_path, body)
    torch.manual_seed(5)
    random.seed(5)
    torch_state, py_state = torch.random.get_rng_state(), random.getstate()
    footprint.measure(task)
    assert torch.equal(torch.random.get_rng_state(), torch_state) and random.getstate() == py_state


def test_cheap_for_a_level1_task(tmp_path):
    task = task_of(tmp_path, CONV)
    footprint.measure(task)  # the first call in a process imports torch's Python meta kernels
    start = time.monotonic()
    fp = footprint.measure(task)
    assert time.monotonic() - start < 1.0 and fp["seconds"] < 1.0


def test_import_has_no_side_effects():
    code = ("import sys; import kz_worker.task.footprint as f; "
            "print('torch._dynamo' in sys.modules, f._CONSTRUCTORS is None)")
    out = subprocess.run([sys.executable, "-c", code], cwd=PYTHON_DIR, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_host_memory_respects_the_limit():
    rss = footprint.host_memory(None)["rss_bytes"]
    mem = footprint.host_memory(rss + (1 << 20))
    assert mem["available_source"] == "host_limit" and mem["available_bytes"] <= 1 << 20
    assert footprint.host_memory(None)["available_bytes"] > 0


def test_peak_meter_on_the_cpu():
    meter = footprint.PeakMeter(torch.device("cpu"))
    meter.start()
    block = torch.ones(64 << 18)  # 64 MiB, touched
    assert meter.peak() >= 60 << 20
    del block
