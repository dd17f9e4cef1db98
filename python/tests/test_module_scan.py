"""module_scan / ast_facts (docs/curriculum.md "Module facts"): alias resolution, scopes,
operators, bad files, and the canonical hash (no torch import needed)."""

import subprocess
import sys

from kz_worker.screen.ast_facts import OPERATORS  # noqa: F401 - importable without torch
from kz_worker.screen.module_scan import facts_of_source, module_scan_op, scan_file

SOURCE = '''
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.nn import Conv2d


def helper(x):
    return torch.sigmoid(x)


class Model(nn.Module):
    """doc"""
    def __init__(self):
        super().__init__()
        self.conv = Conv2d(3, 3, 3)
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.scale = torch.exp(torch.ones(1))
        self.bias = nn.Parameter(torch.randn(3))

    def forward(self, x):
        y = F.gelu(self.conv(x)) @ x
        return helper(y).view(-1) - self.scale + self.bias


def get_inputs():
    return [torch.randn(2, 3)]


def get_init_inputs():
    return []
'''


def test_resolution_and_scopes():
    f = facts_of_source(SOURCE)
    assert f["status"] == "ok" and f["model"]["defined"]
    fwd = f["functions"]["Model.forward"]
    assert "torch.nn.functional.gelu" in fwd["calls"]
    assert "torch.nn.Conv2d" in fwd["calls"]            # through self.conv
    assert "Tensor.view" in fwd["calls"] and "local.helper" in fwd["calls"]
    assert "torch.exp" not in fwd["calls"]              # self.scale is no nn constructor
    assert "torch.nn.Linear" not in fwd["calls"]        # self.seq is not read in forward
    assert "torch.randn" not in fwd["calls"]            # nn.Parameter(...) is data, not a module
    assert set(fwd["ops"]) == {"torch.matmul", "torch.sub", "torch.add"}
    init = f["functions"]["Model.__init__"]
    assert {"torch.exp", "torch.ones", "torch.nn.Sequential", "torch.nn.ReLU"} <= set(init["calls"])
    assert f["functions"]["helper"]["calls"] == ["torch.sigmoid"]
    assert f["imports"] == ["torch", "torch.nn"]  # `from torch.nn import functional`: torch.nn


RENAMED = '''
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.nn import Conv2d


def act(t):  # comment
    return torch.sigmoid(t)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Conv2d(3, 3, 3)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.factor = torch.exp(torch.ones(1))
        self.shift = nn.Parameter(torch.randn(3))

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        """Another docstring."""
        hidden = F.gelu(self.layer(inp)) @ inp
        return act(hidden).view(-1) - self.factor + self.shift


def get_inputs():
    return [torch.randn(2, 3)]


def get_init_inputs():
    return []
'''


def test_canonical_hash_ignores_names_comments_docstrings():
    a, b = facts_of_source(SOURCE), facts_of_source(RENAMED)
    assert b["status"] == "ok"
    assert a["canonical_hash"] == b["canonical_hash"]
    c = facts_of_source(SOURCE.replace("torch.sigmoid", "torch.tanh"))
    assert c["canonical_hash"] != a["canonical_hash"]
    d = facts_of_source(SOURCE.replace("(2, 3)", "(2, 4)"))
    assert d["canonical_hash"] != a["canonical_hash"]  # sizes are part of the module


def test_bad_files(tmp_path):
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\n")
    (tmp_path / "broken.py").write_text("class Model(:\n")
    (tmp_path / "big.py").write_text("x = 1\n" * 100)
    out = module_scan_op({"paths": [str(tmp_path / n) for n in ("latin1.py", "broken.py", "missing.py")]})
    assert [m["status"] for m in out["modules"]] == ["not_utf8", "syntax_error", "unreadable"]
    assert out["modules"][1]["line"] == 1
    assert scan_file(str(tmp_path / "big.py"), 100)["status"] == "too_large"


def test_no_torch_import():
    code = ("import sys; sys.path.insert(0, '.'); from kz_worker.screen.module_scan import facts_of_source; "
            "facts_of_source('import torch\\nclass Model: pass\\n'); assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sketch_near_copies_and_others():
    from kz_worker.screen.ast_facts import SKETCH_K
    a = facts_of_source(SOURCE)["sketch"]
    resized = facts_of_source(RENAMED.replace("(2, 3)", "(64, 128)").replace("(3, 3, 3)", "(8, 8, 5)"))["sketch"]
    other = facts_of_source(SOURCE.replace("F.gelu(self.conv(x)) @ x", "torch.cumsum(x, 0).flip(0)"))["sketch"]
    assert len(a) <= SKETCH_K and a == sorted(a) and all(0 <= h < 2 ** 48 for h in a)

    def sim(x, y):
        union = sorted(set(x) | set(y))[:SKETCH_K]
        return sum(1 for h in union if h in x and h in y) / len(union)
    assert sim(a, resized) == 1.0   # names and sizes changed: the same structure
    assert sim(a, other) < 0.85     # one expression of forward changed: 0.80, below the default
