"""The catalog's categories and input requirements, by rule on the API id
(make_api_catalog.py; docs/curriculum.md, "Catalog format"). First matching rule wins."""

import re

CATEGORIES = [  # (category, id pattern)
    ("loss", r"(loss|entropy|nll|kl_div|mse|l1|huber|hinge|margin|poisson_nll|gaussian_nll|"
             r"binary_cross|soft_margin|cosine_embedding|triplet)"),
    ("convolution", r"^conv"),
    ("pooling", r"pool"),
    ("normalisation", r"(norm$|norm\d?d$|^normalize$|local_response|group_norm|layer_norm|"
                      r"instance_norm|batch_norm)"),
    ("contraction", r"^(matmul|mm|bmm|mv|dot|addmm|addbmm|baddbmm|addmv|addr|einsum|linear|"
                    r"bilinear|tensordot|chain_matmul|cdist|pdist|cosine_similarity|"
                    r"pairwise_distance)$"),
    ("recurrent", r"^(rnn|lstm|gru)(_cell)?|^(r_n_n|l_s_t_m|g_r_u)"),
    ("scan", r"^(cumsum|cumprod)$"),
    ("reduction", r"^(sum|mean|prod|max|min|amax|amin|argmax|argmin|std|var|std_mean|var_mean|"
                  r"logsumexp|norm|all|any|nansum|nanmean|trace)$"),
    ("softmax", r"softmax|softmin"),
    ("activation", r"(relu|elu|selu|celu|gelu|silu|mish|sigmoid|tanh$|hardtanh|hardswish|"
                   r"softplus|softsign|softshrink|hardshrink|tanhshrink|threshold|glu|prelu|"
                   r"logsigmoid|hardsigmoid)"),
    ("layout", r"^(view|view_as|reshape|reshape_as|flatten|unflatten|squeeze|unsqueeze|"
               r"transpose|permute|t|expand|expand_as|repeat|repeat_interleave|contiguous|cat|"
               r"stack|narrow|select|index_select|gather|scatter|scatter_add|scatter_reduce|"
               r"index_add|index_copy|index_reduce|take|roll|flip|fliplr|flipud|rot90|diag|"
               r"diagonal|tril|triu|movedim|unfold|fold|pad|pixel_shuffle|pixel_unshuffle|"
               r"channel_shuffle|zero_pad\dd|constant_pad\dd|reflection_pad\dd|"
               r"replication_pad\dd|circular_pad\dd|broadcast_to|masked_fill|one_hot|embedding|"
               r"type_as|narrow_copy|row_stack|column_stack|hstack|vstack|dstack|"
               r"diagflat|trapz|trapezoid|cumulative_trapezoid|block_diag|atleast_\dd)$"),
]
_CATS = [(c, re.compile(p)) for c, p in CATEGORIES]

RANGES = {  # value range of the (first) input the API needs
    "positive": r"^(log|log2|log10|sqrt|rsqrt|lgamma|digamma|polygamma|poisson_nll_loss)$",
    "open_unit": r"^(acos|asin|atanh|erfinv)$",
    "unit_interval": r"^(logit|binary_cross_entropy)$",
    "ge1": r"^(acosh)$",
    "gt_minus1": r"^(log1p)$",
    "nonzero": r"^(reciprocal|div|remainder|fmod|floor_divide)$",
}
_RANGES = [(r, re.compile(p)) for r, p in RANGES.items()]
INDEX_INPUT = re.compile(r"^(embedding|one_hot|gather|scatter|scatter_add|scatter_reduce|"
                         r"index_add|index_copy|index_reduce|index_select|take|nll_loss|"
                         r"cross_entropy|multi_margin_loss|multilabel_margin_loss)$")
RANK_BY_SUFFIX = {"1d": [2, 3], "2d": [3, 4], "3d": [4, 5]}
RANK_FIXED = {"mm": [2, 2], "bmm": [3, 3], "baddbmm": [3, 3], "addbmm": [3, 3], "mv": [2, 2],
              "addmm": [2, 2], "dot": [1, 1], "addmv": [2, 2], "addr": [1, 1], "t": [1, 2],
              "linear": [1, None], "bilinear": [2, None], "matmul": [1, None],
              "batch_norm": [2, None], "instance_norm": [3, None], "group_norm": [2, None],
              "pixel_shuffle": [3, None], "pixel_unshuffle": [3, None], "fold": [2, 3],
              "prelu": [1, None], "glu": [1, None], "trace": [2, 2], "tril": [2, None],
              "triu": [2, None], "diag": [1, 2]}


def category_of(api_id: str) -> str:
    for cat, pattern in _CATS:
        if pattern.search(api_id):
            return cat
    return "elementwise"


def inputs_of(api_id: str, category: str) -> dict:
    """{"rank": [lo, hi|None] | None, "dtype": float|index, "range": ...} of the main input."""
    rank = RANK_FIXED.get(api_id)
    suffix = re.search(r"([123]d)$", api_id)
    if rank is None and suffix and category in ("convolution", "pooling", "normalisation", "layout"):
        rank = RANK_BY_SUFFIX[suffix.group(1)]
    if rank is None and category == "recurrent":
        rank = [2, 3]
    value_range = next((r for r, p in _RANGES if p.search(api_id)), "any")
    dtype = "index" if api_id in ("embedding", "one_hot") else "float"
    needs = ["index"] if INDEX_INPUT.search(api_id) and dtype == "float" else []
    return {"rank": rank, "dtype": dtype, "range": value_range, "needs": needs}
