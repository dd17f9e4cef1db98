"""data/api_catalog.json (docs/curriculum.md): every entry resolves in the installed torch,
ids and aliases are unique, the format and fields are as documented."""

import json
import pathlib

import pytest
import torch

CATALOG = pathlib.Path(__file__).resolve().parents[2] / "data" / "api_catalog.json"
KINDS = {"module", "functional", "function", "method"}
RANGES = {"any", "positive", "open_unit", "unit_interval", "ge1", "gt_minus1", "nonzero"}


@pytest.fixture(scope="module")
def catalog():
    return json.loads(CATALOG.read_text(encoding="utf-8"))


def resolve(qualified: str):
    root, *rest = qualified.split(".")
    obj = torch.Tensor if root == "Tensor" else {"torch": torch}[root]
    for part in rest:
        obj = getattr(obj, part)
    return obj


def test_format_and_version(catalog):
    assert catalog["format"] == "kz.api_catalog" and catalog["version"] == 1
    assert catalog["count"] == len(catalog["apis"]) >= 200
    assert catalog["torch"] == torch.__version__.split("+")[0] or catalog["torch"].startswith("2.")


def test_every_alias_resolves_in_torch(catalog):
    missing = [a for e in catalog["apis"] for a in e["aliases"] if not _resolves(a)]
    assert missing == []


def _resolves(qualified: str) -> bool:
    try:
        return callable(resolve(qualified))
    except AttributeError:
        return False


def test_ids_and_aliases_unique(catalog):
    ids = [e["id"] for e in catalog["apis"]]
    aliases = [a for e in catalog["apis"] for a in e["aliases"]]
    assert len(ids) == len(set(ids))
    assert len(aliases) == len(set(aliases))


def test_fields(catalog):
    for e in catalog["apis"]:
        assert e["kind"] in KINDS and e["qualified"] == e["aliases"][0], e
        assert e["inputs"]["range"] in RANGES and e["category"], e
        assert e["call"].startswith(e["qualified"].rsplit(".", 1)[0]), e


def test_alias_rule_joins_the_four_spellings(catalog):
    by_id = {e["id"]: e for e in catalog["apis"]}
    assert by_id["relu"]["aliases"] == ["torch.nn.ReLU", "torch.nn.functional.relu", "torch.relu",
                                        "Tensor.relu"]
    assert "torch.conv2d" in by_id["conv2d"]["aliases"]
    assert by_id["log"]["inputs"]["range"] == "positive"
    assert by_id["matmul"]["category"] == "contraction"


def test_selection_rule_leaves_out_random_and_creation(catalog):
    ids = {e["id"] for e in catalog["apis"]}
    assert not ids & {"dropout", "rand", "randn", "zeros", "nonzero", "svd", "bernoulli", "rrelu"}
