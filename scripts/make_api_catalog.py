#!/usr/bin/env python3
"""Writes data/api_catalog.json, the curriculum's torch API catalog (docs/curriculum.md),
by introspecting the installed torch. Usage: make_api_catalog.py [OUT] (default
data/api_catalog.json). Deterministic: the same torch gives the same file.

Selection rule (docs/curriculum.md, "Selection rule"), from three sources:
  - nn modules: public `torch.nn` classes that subclass nn.Module;
  - functional: public callables of `torch.nn.functional`;
  - torch functions: public builtins of `torch` that are also `torch.Tensor` methods
    (the tensor-math namespace), the tensor functions without a method form because they
    take several tensors (TORCH_ONLY: cat, stack, einsum, ...), and a few method-only
    layout calls (METHOD_ONLY);
each kept only when it is computational (a tensor function of tensors), deterministic
(no sampling, no dropout) and expressible as one fixed-shape kernel (no data-dependent
output shapes, no LAPACK-style decompositions, no sparse / quantized / complex-only,
no creation, no in-place `_` variants, no containers or composites): DENY below.
Names whose lower-case, underscore-free spelling agree (a trailing `Loss` / `_loss`
dropped) across the sources are one API: nn.ReLU, F.relu, torch.relu and x.relu().
"""

import inspect
import json
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FORMAT, VERSION = "kz.api_catalog", 1
# Tensor functions with no method form: they take several tensors (a list, or operands).
TORCH_ONLY = ("cat", "stack", "hstack", "vstack", "dstack", "column_stack", "einsum", "tensordot",
              "cdist", "block_diag", "cartesian_prod")
METHOD_ONLY = ("view", "view_as", "expand", "expand_as", "repeat", "contiguous", "reshape_as",
               "unfold", "type_as")
DENY = [r"^is_", r"^rand", r"dropout", r"bernoulli", r"multinomial", r"poisson", r"normal$",
        r"^randperm", r"rrelu", r"gumbel", r"^(zeros|ones|empty|full|arange|linspace|logspace|eye)",
        r"_like$", r"sparse", r"quantiz", r"^q_", r"int_repr", r"^(real|imag|conj|conj_physical|"
        r"resolve_conj|resolve_neg|view_as_real|view_as_complex|polar|complex)$",
        r"^(nonzero|nonzero_static|unique|unique_consecutive|masked_select|argwhere|bincount|"
        r"histc|histogram|sort|argsort|msort|topk|kthvalue|median|nanmedian|mode|"
        r"count_nonzero)$", r"^(svd|qr|eig|symeig|lstsq|cholesky|lu|slogdet|logdet|det|inverse|pinverse|"
        r"matrix_exp|triangular_solve|ormqr|geqrf|orgqr|cholesky_solve|cholesky_inverse|"
        r"lu_solve|lu_unpack|matrix_power|linalg)", r"^(lobpcg|svd_lowrank|pca_lowrank)$",
        r"^(to|type|data_ptr|element_size|numel|dim|size|stride|storage|item|tolist|"
        r"nelement|is_\w+|retain_grad|requires_grad|detach|clone|new_\w+|pin_memory|share_memory|"
        r"record_stream|align_to|refine_names|rename|set_|fill|fill_diagonal|zero|copy|"
        r"dequantize|to_dense|to_mkldnn|to_padded_tensor|coalesce|indices|values|crow_indices|"
        r"col_indices|ccol_indices|row_indices|sum_to_size|numpy|cpu|cuda|float_power)$",
        r"^(Sequential|ModuleList|ModuleDict|ParameterList|ParameterDict|Module|Container|"
        r"Identity|Transformer\w*|MultiheadAttention|Lazy\w+|RNNBase|RNNCellBase|CrossMapLRN2d|"
        r"SyncBatchNorm|Buffer|Parameter|UninitializedParameter|UninitializedBuffer)$",
        r"^(handle_torch_function|has_torch_function\w*|boolean_dispatch|assert_int_or_pair|"
        r"multi_head_attention_forward|native_channel_shuffle|fractional_max_pool\w*|"
        r"ctc_loss|embedding_bag|grid_sample|affine_grid|upsample\w*|interpolate|"
        r"scaled_dot_product_attention)$",
        r"^(EmbeddingBag|CTCLoss|FractionalMaxPool\w+|AdaptiveLogSoftmaxWithLoss|Upsample\w*|"
        r"RMSNorm|rms_norm)$",
        r"^(bitwise|logical|gcd|lcm|fmod_|igamma|segment_reduce|split|unbind|chunk|tensor_split|"
        r"hsplit|vsplit|dsplit|split_with_sizes|unsafe_\w+|index_put|index_fill|put|"
        r"masked_scatter|resize\w*|as_strided\w*|stft|istft|nested\w*|allclose|equal|"
        r"is_\w+|result_type|can_cast|promote_types|ravel|frexp|xlogy|"
        r"diag_embed|select_scatter|slice_scatter|diagonal_scatter|take_along_dim|"
        r"histogramdd|aminmax|cummax|cummin|logcumsumexp|renorm|mvlgamma|nan_to_num|"
        r"count_nonzero|square|positive|fix|absolute|arccos|arcsin|arctan|arctan2|arccosh|"
        r"arcsinh|arctanh|negative|subtract|multiply|divide|true_divide|greater\w*|less\w*|"
        r"not_equal|clip|concat|concatenate|swapaxes|swapdims|moveaxis|matrix_H|adjoint|"
        r"det|hardshrink_|special_\w+|vdot|inner|ger|outer|cov|corrcoef|kron|tile|"
        r"sgn|signbit|copysign|nextafter|ldexp|hypot|i0|sinc|heaviside|float)$"]
DENY += [r"^(bitwise|logical)_", r"^(get_device|hash_tensor|grouped_mm|scaled_grouped_mm|scaled_mm|"
         r"smm|sspaddmm|slice_inverse|conv_tbc|isreal|isclose|igammac|angle|isfinite|isinf|"
         r"isnan|isneginf|isposinf|Upsampling\w+|RReLU)$"]
_DENY = [re.compile(p, re.IGNORECASE) for p in DENY]
# Aliases that the spelling rule cannot see (torch's own synonyms).
SYNONYMS = {"torch.nn.BCELoss": "binarycrossentropy",
            "torch.nn.BCEWithLogitsLoss": "binarycrossentropywithlogits"}


def denied(name: str) -> bool:
    return any(p.search(name) for p in _DENY)


def key_of(name: str) -> str:
    k = name.lower().replace("_", "")
    return k[:-4] if k.endswith("loss") and k != "loss" else k


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    return re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s).lower()


def call_of(qualified: str, obj) -> str:
    """How it is called: the signature, else the docstring's first line, else `name(input)`."""
    short = qualified.rsplit(".", 1)[-1]
    try:
        sig = str(inspect.signature(obj.__init__ if isinstance(obj, type) else obj))
        sig = sig.replace("(self, ", "(").replace("(self)", "()")
        return f"{qualified}{sig}" if len(sig) < 400 else f"{qualified}(...)"
    except (TypeError, ValueError):
        pass
    first = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    if first and first[0].startswith(short + "("):
        return qualified.rsplit(".", 1)[0] + "." + first[0].split(" ->")[0]
    return f"{qualified}(input)"


def sources() -> list:
    """(kind, qualified, object) of every candidate, before grouping."""
    out = []
    for n in sorted(nn.modules.__all__):
        obj = getattr(nn, n, None)
        if isinstance(obj, type) and issubclass(obj, nn.Module) and not denied(n):
            out.append(("module", f"torch.nn.{n}", obj))
    for n in sorted(dir(F)):
        obj = getattr(F, n)
        if n.startswith("_") or n.endswith("_") or not callable(obj) or isinstance(obj, type):
            continue
        if "torch" in str(getattr(obj, "__module__", "torch")) and not denied(n):
            out.append(("functional", f"torch.nn.functional.{n}", obj))
    for n in sorted(dir(torch)):
        obj = getattr(torch, n)
        if (n.startswith("_") or n.endswith("_") or type(obj).__name__ != "builtin_function_or_method"
                or not hasattr(torch.Tensor, n) or denied(n)):
            continue
        out.append(("function", f"torch.{n}", obj))
    keys = {key_of(q.rsplit(".", 1)[-1]) for k, q, _ in out if k in ("module", "functional")}
    for n in sorted(dir(torch)):  # torch.conv2d, torch.layer_norm: builtins beside nn / F
        obj = getattr(torch, n)
        if (not n.startswith("_") and not hasattr(torch.Tensor, n) and key_of(n) in keys
                and type(obj).__name__ == "builtin_function_or_method" and not denied(n)):
            out.append(("function", f"torch.{n}", obj))
    for n in TORCH_ONLY:
        out.append(("function", f"torch.{n}", getattr(torch, n)))
    for n in METHOD_ONLY:
        out.append(("method", f"Tensor.{n}", getattr(torch.Tensor, n)))
    return out


from api_catalog_rules import category_of, inputs_of  # noqa: E402  (scripts/ on sys.path)


def build() -> dict:
    groups, order = {}, []
    for kind, qualified, obj in sources():
        short = qualified.rsplit(".", 1)[-1]
        key = SYNONYMS.get(qualified) or key_of(short)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((kind, qualified, obj))
    apis = []
    rank = {"module": 0, "functional": 1, "function": 2, "method": 3}
    for key in order:
        members = sorted(groups[key], key=lambda m: (rank[m[0]], m[1]))
        kind, qualified, obj = members[0]
        plain = [m for m in members if m[0] != "module"]
        api_id = plain[0][1].rsplit(".", 1)[-1] if plain else snake(qualified.rsplit(".", 1)[-1])
        aliases = [m[1] for m in members]
        aliases += [f"Tensor.{m[1].rsplit('.', 1)[-1]}" for m in members
                    if m[0] == "function" and hasattr(torch.Tensor, m[1].rsplit(".", 1)[-1])]
        cat = category_of(api_id)
        apis.append({"id": api_id, "kind": kind, "qualified": qualified, "aliases": aliases,
                     "call": call_of(qualified, obj), "category": cat,
                     "inputs": inputs_of(api_id, cat)})
    apis.sort(key=lambda a: a["id"])
    seen = set()
    for a in apis:  # ids must be unique: a clash keeps the first and suffixes the kind
        if a["id"] in seen:
            a["id"] = f"{a['id']}.{a['kind']}"
        seen.add(a["id"])
    return {"format": FORMAT, "version": VERSION, "torch": torch.__version__.split("+")[0],
            "selection": __doc__.split("Selection rule")[1].split("\n\"\"\"")[0].strip(),
            "count": len(apis), "apis": apis}


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "data/api_catalog.json"
    catalog = build()
    with open(out, "w", encoding="utf-8") as f:
        json.dump(catalog, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"{out}: {catalog['count']} APIs from torch {catalog['torch']}")


if __name__ == "__main__":
    main()
