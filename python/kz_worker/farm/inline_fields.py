"""The normalised fields and digest of a `load_inline` call, torch-free (shared by the
static extractor, which must not import torch, and `inline`).

`call_digest` is sha256 of `json.dumps(fields, sort_keys=True, separators=(",", ":"))`
over `DIGEST_FIELDS`, with string arguments normalised to one-element lists and None to
[] (`with_cuda` kept as given: null, true or false; `functions` may stay an object
{name: docstring})."""

import hashlib
import json

DIGEST_FIELDS = ("name", "cpp_sources", "cuda_sources", "functions", "extra_cflags",
                 "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "with_cuda")
LIST_FIELDS = DIGEST_FIELDS[1:-1]


def as_list(value):
    """Normalise a load_inline argument: None -> [], str -> [str], dict kept, else list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    return [str(v) for v in value]


def fields_of(values: dict) -> dict:
    """DIGEST_FIELDS from bound arguments (`name` and every list field present)."""
    fields = {"name": str(values["name"]), "with_cuda": values.get("with_cuda")}
    for key in LIST_FIELDS:
        fields[key] = as_list(values.get(key))
    return fields


def call_digest(fields: dict) -> str:
    """sha256 hex digest of the canonical JSON of the DIGEST_FIELDS of `fields`."""
    canonical = {key: fields[key] for key in DIGEST_FIELDS}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
