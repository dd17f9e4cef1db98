"""Static screen over real files: every honest example passes under strict, the worker op
`screen` serves it without importing torch, and it is fast. The adversarial corpus (when
present) is checked both ways: honest files pass, and each cheat whose docstring says
"Caught by the screen: <rules>" gets those rules."""

import ast
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kzhelpers import PYTHON_DIR, spawn_worker
from kz_worker.screen import screen_source

ROOT = PYTHON_DIR.parent
HONEST = (sorted(ROOT.glob("examples/candidates/*_ok.py"))
          + sorted(ROOT.glob("bench/timing/candidates/*.py")))
CORPUS = ROOT / "tests" / "corpus"
CORPUS_HONEST = sorted((CORPUS / "honest").glob("*.py"))
CORPUS_CHEATS = sorted((CORPUS / "cheats").glob("*.py"))
RULE_ID = re.compile(r"\b(?:py|cpp|gen)\.[a-z_]+")


def backend_of(source):
    return "cuda" if "load_inline" in source else "triton"  # as `kz` detects it


def screen_file(path, policy="strict", backend=None):
    source = path.read_text()
    return screen_source(source, backend or backend_of(source), policy)


@pytest.mark.parametrize("path", HONEST + CORPUS_HONEST, ids=lambda p: p.name)
def test_honest_candidates_pass_under_strict(path):
    result = screen_file(path)
    rejects = [f for f in result["findings"] if f["severity"] == "reject"]
    assert result["verdict"] == "pass" and rejects == [], rejects


def _screen_claims(path):
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    if "Caught by the screen:" not in doc:
        return None
    claim = doc.split("Caught by the screen:", 1)[1].split("At run time")[0].split("\n\n")[0]
    return set(RULE_ID.findall(claim))


@pytest.mark.parametrize("path", [p for p in CORPUS_CHEATS if _screen_claims(p)],
                         ids=lambda p: p.name)
def test_corpus_cheats_get_the_rules_they_claim(path):
    backend = "cuda" if path.stem.endswith("_cuda") else "triton"
    result = screen_file(path, backend=backend)
    assert _screen_claims(path) <= {f["rule"] for f in result["findings"]}, result["findings"]


def test_bad_input_examples_pass_the_screen_and_syntax_errors_do_not():
    """The bad-input examples are real Triton kernels with bugs for the later stages to
    find (shape, dtype, constructor, missing ModelNew): the screen lets them through."""
    for name in ("cand_wrong_dtype", "cand_wrong_shape", "cand_ctor_mismatch", "cand_no_model_new"):
        result = screen_file(ROOT / f"examples/candidates/{name}.py")
        assert result["verdict"] == "pass", (name, result["findings"])
    syntax = screen_file(ROOT / "examples/candidates/cand_syntax_error.py")
    assert syntax["findings"][0]["rule"] == "py.syntax"


def test_screen_is_fast():
    paths = HONEST + sorted(ROOT.glob("examples/candidates/*.py")) + CORPUS_HONEST + CORPUS_CHEATS
    start = time.perf_counter()
    for p in paths:
        screen_file(p)
    per_file = (time.perf_counter() - start) / len(paths)
    assert per_file < 0.1, f"{per_file * 1000:.1f} ms per candidate"


def test_worker_op_screen_round_trip():
    path = str(ROOT / "examples/candidates/relu_cuda_ok.py")
    frames, code, _, _ = spawn_worker({"protocol": 1, "op": "screen", "candidate_path": path,
                                       "backend": "cuda", "policy": "strict"}, timeout=30)
    assert code == 0 and len(frames) == 1
    result = frames[0]
    assert result["type"] == "result" and result["ok"] is True
    assert result["screen"]["verdict"] == "pass" and result["screen"]["rules_version"] == 1


def test_worker_op_screen_errors():
    frames, _, _, _ = spawn_worker({"protocol": 1, "op": "screen", "backend": "triton",
                                    "candidate_path": "/nonexistent.py", "policy": "strict"},
                                   timeout=30)
    assert frames[0]["ok"] is False and frames[0]["error"]["kind"] == "unreadable_file"
    frames, _, _, _ = spawn_worker({"protocol": 1, "op": "screen", "candidate_path": "/x.py",
                                    "backend": "opencl", "policy": "strict"}, timeout=30)
    assert frames[0]["ok"] is False and frames[0]["error"]["kind"] == "protocol"


def test_screen_op_never_imports_torch_or_triton_nor_runs_the_candidate(tmp_path):
    marker = tmp_path / "ran"
    cand = tmp_path / "cand.py"
    cand.write_text(f"open({str(marker)!r}, 'w').close()\nimport torch\n")
    code = ("import sys, json\nfrom kz_worker.__main__ import handle\n"
            f"r = handle({{'protocol': 1, 'op': 'screen', 'candidate_path': {str(cand)!r}, "
            "'backend': 'triton', 'policy': 'strict'}, None)\n"
            "print(json.dumps({'torch': 'torch' in sys.modules, 'triton': 'triton' in sys.modules, "
            "'verdict': r['screen']['verdict']}))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=PYTHON_DIR, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == {"torch": False, "triton": False, "verdict": "reject"}
    assert not marker.exists()


def test_screen_op_reads_files_as_python_does(tmp_path):
    from kz_worker.screen import screen_op

    def screen_bytes(data):
        path = tmp_path / "cand.py"
        path.write_bytes(data)
        request = {"candidate_path": str(path), "backend": "triton", "policy": "strict"}
        return screen_op(request)["screen"]

    kernel = b"import triton\n\n@triton.jit\ndef k():\n    pass\n"
    assert screen_bytes(b"\xef\xbb\xbf" + kernel)["verdict"] == "pass"  # BOM
    latin = b"# -*- coding: latin-1 -*-\n" + kernel + b"s = '\xe9'\n"
    assert screen_bytes(latin)["verdict"] == "pass"
    bad = screen_bytes(kernel + b"s = '\xff\xfe'\n")
    assert bad["verdict"] == "reject" and bad["findings"][0]["rule"] == "py.syntax"
