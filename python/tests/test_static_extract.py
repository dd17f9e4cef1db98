"""The static reading of load_inline calls (static_extract.py) against running the module:
wherever the static reading answers, its calls equal the recorded ones exactly."""

import glob
import os
import textwrap

import pytest

from kz_worker.farm import extract as extract_mod
from kz_worker.screen import static_extract
from kz_worker.farm.inline_fields import call_digest, fields_of

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CANDIDATES = sorted(p for pattern in ("examples/candidates/*.py", "tests/corpus/*/*.py",
                                      "python/tests/fixtures/*.py", "bench/suite20/kernels/*.py")
                    for p in glob.glob(os.path.join(ROOT, pattern))
                    if "load_inline" in open(p, encoding="utf-8", errors="replace").read())


def static_calls(text):
    found = static_extract.extract(text)
    return None if found is None else [{**f, "digest": call_digest(f)} for f in map(fields_of, found)]


@pytest.mark.parametrize("path", CANDIDATES, ids=os.path.basename)
def test_static_reading_equals_running_the_module(path):
    static = static_calls(open(path, encoding="utf-8").read())
    ran = extract_mod._run_module(path)
    if static is None:
        pytest.skip("not statically readable: the module is run (covered by test_extract_build)")
    assert ran == static


def test_most_candidates_are_read_statically():
    read = [p for p in CANDIDATES if static_extract.extract(open(p, encoding="utf-8").read()) is not None]
    assert len(CANDIDATES) >= 20 and len(read) >= 0.8 * len(CANDIDATES), (len(read), len(CANDIDATES))


HEAD = "from torch.utils.cpp_extension import load_inline\nimport torch\n"
TAIL = "\nclass ModelNew(torch.nn.Module):\n    pass\n"


def module(body):
    return HEAD + textwrap.dedent(body) + TAIL


@pytest.mark.parametrize("body,expect", [
    ('src = "a"\next = load_inline("e", "cpp", cuda_sources=[src + "b"], functions=["f"])\n',
     {"name": "e", "cpp_sources": "cpp", "cuda_sources": ["ab"], "functions": ["f"]}),
    ('K = "k"\nsrc = f"x{K}y"\next = load_inline(name="e", cpp_sources="", cuda_sources=textwrap.dedent("  z"))\n',
     {"name": "e", "cpp_sources": "", "cuda_sources": "z"}),
    ('ext = load_inline("e", "\\n".join(["a", "b"]), with_cuda=True, verbose=False)\n',
     {"name": "e", "cpp_sources": "a\nb", "with_cuda": True, "verbose": False}),
])
def test_readable_forms(body, expect):
    text = module(body)
    if "textwrap" in body:
        text = "import textwrap\n" + text
    assert static_extract.extract(text) == [expect]


@pytest.mark.parametrize("body", [
    'src = open("k.cu").read()\next = load_inline("e", "", cuda_sources=src)\n',          # run time
    'if True:\n    ext = load_inline("e", "")\n',                                         # in a branch
    'try:\n    ext = load_inline("e", "")\nexcept Exception:\n    ext = None\n',           # in a try
    'def build():\n    return load_inline("e", "")\next = build()\n',                      # in a function
    'src = "a"\nfor i in range(2):\n    src = src + "b"\next = load_inline("e", src)\n',     # rebound in a loop
    'f = load_inline\next = f("e", "")\n',                                                 # aliased
    'ext = load_inline("e", "", sycl_sources=["x"])\n',                                    # unknown keyword
    'ext = load_inline("e", "", None, ["f"])\n',                                           # 4 positionals
    'ext = load_inline(**{"name": "e", "cpp_sources": ""})\n',                             # ** arguments
    'x = 1\n',                                                                             # no call at all
])
def test_unsure_forms_are_left_to_running_the_module(body):
    assert static_extract.extract(module(body)) is None


def test_missing_model_new_or_missing_module_is_left_to_running_the_module():
    call = 'ext = load_inline("e", "")\n'
    assert static_extract.extract(HEAD + call) is None
    assert static_extract.extract("import no_such_module_kz\n" + module(call)) is None
    assert static_extract.extract(module(call)) is not None


def test_extract_op_says_how_it_extracted(tmp_path):
    path = tmp_path / "c.py"
    path.write_text(module('ext = load_inline("e", "cpp", cuda_sources="k")\n'))
    result = extract_mod.extract_op({"candidate_path": str(path)})
    assert result["ok"] and result["extracted"] == "static"
    assert result["calls"][0]["source_lines"] == {"cpp_sources": [3], "cuda_sources": [3]}
    path.write_text(module('ext = load_inline("e", "cpp", cuda_sources="k" * int("1"))\n'))
    result = extract_mod.extract_op({"candidate_path": str(path)})
    assert result["ok"] and result["extracted"] == "ran"


def test_screen_op_reads_the_calls_in_the_same_child(tmp_path):
    """One op: with extract=true the screen answers the calls as the extract op would, only
    when the static reading is sure and the screen passes; otherwise no calls (extract runs)."""
    from kz_worker.screen import screen_op
    path = tmp_path / "c.py"

    def candidate(line):
        return HEAD + line + "\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n" \
            "        return ext.f(x)\n"
    path.write_text(candidate('ext = load_inline("e", "cpp", cuda_sources="__global__ void k() {}", functions=["f"])'))
    request = {"candidate_path": str(path), "backend": "cuda", "extract": True}
    screened, extracted = screen_op(request), extract_mod.extract_op({"candidate_path": str(path)})
    assert screened["screen"]["verdict"] == "pass"
    assert {k: screened[k] for k in ("calls", "env", "extracted")} == \
        {k: extracted[k] for k in ("calls", "env", "extracted")}
    assert "calls" not in screen_op({**request, "extract": False})
    path.write_text(candidate('ext = load_inline("e", "cpp", cuda_sources="__global__ void k() {}" * int("1"), functions=["f"])'))
    assert screen_op(request)["screen"]["verdict"] == "pass" and "calls" not in screen_op(request)
    path.write_text(candidate('import ctypes\next = load_inline("e", "cpp", cuda_sources="__global__ void k() {}", functions=["f"])'))
    rejected = screen_op(request)
    assert rejected["screen"]["verdict"] == "reject" and "calls" not in rejected


def test_exact_mode_types_and_helpers():
    """The exact mode keeps types ("1" + 1 is unknown, not "11") and applies helpers."""
    assert static_extract.extract(module('ext = load_inline("e", "a" + 1)\n')) is None
    assert static_extract.extract(module('ext = load_inline("e", f"{1.5}")\n')) is None
    assert static_extract.extract(module('ext = load_inline("e", f"{\'x\'!r}")\n')) is None
    assert static_extract.extract(module('ext = load_inline("e", {[1]: 2})\n')) is None
    found = static_extract.extract(module('s = "  a\\n"\next = load_inline("e", s.strip(), functions={"f": "doc"})\n'))
    assert found == [{"name": "e", "cpp_sources": "a", "functions": {"f": "doc"}}]
