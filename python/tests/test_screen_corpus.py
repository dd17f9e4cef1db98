"""Static screen over every entry of the adversarial corpus manifest
(tests/corpus/manifest.jsonl; its README, "How it is run", CPU part): entries labelled
`caught_by: "screen"` are rejected with their screen `expect_rules` among the reject
findings, no other entry is rejected, `expect_warn` rules are warnings, and the detected
backend is the labelled one. Screen-caught entries whose rules reject under kernelbench
too are rejected under kernelbench. Screen only: no torch import, nothing is run."""

import json

import pytest

from kzhelpers import PYTHON_DIR
from kz_worker.screen import screen_source
from kz_worker.screen.policy import RULES, severity

ROOT = PYTHON_DIR.parent
MANIFEST = ROOT / "tests" / "corpus" / "manifest.jsonl"
ENTRIES = ([json.loads(line) for line in MANIFEST.read_text().splitlines() if line.strip()]
           if MANIFEST.exists() else [])


def _screen(entry, policy):
    source = (ROOT / entry["candidate"]).read_text()
    backend = "cuda" if "load_inline" in source else "triton"  # as `kz` detects it
    return backend, screen_source(source, backend, policy)


def _rules(result, sev):
    return {f["rule"] for f in result["findings"] if f["severity"] == sev}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["candidate"].rsplit("/", 1)[-1])
def test_manifest_entry_gets_its_screen_verdict(entry):
    backend, result = _screen(entry, "strict")
    assert backend == entry["backend"]
    screen_rules = {r for r in entry["expect_rules"] if r in RULES}
    if entry["caught_by"] == "screen":
        assert result["verdict"] == "reject", result["findings"]
        assert screen_rules <= _rules(result, "reject"), result["findings"]
    else:
        assert result["verdict"] == "pass", result["findings"]
    assert set(entry.get("expect_warn", [])) <= _rules(result, "warn"), result["findings"]


KERNELBENCH = [e for e in ENTRIES if e["caught_by"] == "screen" and all(
    severity(r, "kernelbench") == "reject" for r in e["expect_rules"] if r in RULES)]


@pytest.mark.parametrize("entry", KERNELBENCH, ids=lambda e: e["candidate"].rsplit("/", 1)[-1])
def test_screen_caught_entry_is_rejected_under_kernelbench_too(entry):
    _, result = _screen(entry, "kernelbench")
    assert result["verdict"] == "reject", result["findings"]
    assert {r for r in entry["expect_rules"] if r in RULES} <= _rules(result, "reject")


def test_manifest_has_the_try_except_fallback_entries():
    fallbacks = [e for e in KERNELBENCH if e["expect_rules"] == ["py.try_except"]]
    assert {e["backend"] for e in fallbacks} == {"cuda", "triton"}
