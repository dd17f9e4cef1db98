"""cpp.aten_compute: ATen/torch compute called from extension sources: qualified calls
(`torch::matmul(`, `at::native::`, namespace aliases), references (`&at::mm`,
`using at::mm;`), tensor compute methods (`x.mm(`), unqualified calls under
`using namespace at/torch`, and operators looked up in the dispatcher."""

import re

from .torch_names import TENSOR_COMPUTE_METHODS

# Qualified torch::/at:: callables that are allowed: allocation, metadata, types, guards.
ATEN_ALLOWED = frozenset(
    "empty empty_like empty_strided zeros zeros_like ones ones_like full full_like arange "
    "from_blob tensor scalar_tensor TensorOptions dtype device layout requires_grad "
    "memory_format pinned_memory Device Scalar ScalarType IntArrayRef ArrayRef DimVector "
    "Tensor TensorList globalContext elementSize toString isFloatingType isComplexType "
    "isIntegralType typeMetaToScalarType ceil_div Half BFloat16 DeviceGuard "
    "OptionalDeviceGuard NoGradGuard InferenceMode AutoGradMode maybe_wrap_dim "
    "check_dim_size zeros_symint empty_symint".split())
FREE_NAMESPACES = ("indexing::", "cuda::", "detail::", "autograd::")  # guards, streams, types
# ATen functions that are not Tensor methods (caught qualified anyway; listed for the
# unqualified and reference forms).
ATEN_FUNCTIONS = frozenset(
    "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d convolution "
    "linear bilinear layer_norm group_norm batch_norm instance_norm rms_norm gelu silu mish "
    "hardswish hardsigmoid elu selu celu leaky_relu softplus softsign dropout embedding "
    "max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d "
    "adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool2d "
    "scaled_dot_product_attention einsum cat stack cdist cosine_similarity pairwise_distance "
    "pixel_shuffle upsample_bilinear2d upsample_nearest2d grid_sampler mse_loss "
    "cross_entropy_loss nll_loss binary_cross_entropy kl_div smooth_l1_loss huber_loss "
    "addmm_out mm_out bmm_out matmul_out".split())
COMPUTE_METHODS = TENSOR_COMPUTE_METHODS - {"any", "all"}
# Names that are also CUDA/C math or everyday helper names: not flagged unqualified.
C_NAMES = frozenset(
    "abs exp exp2 expm1 log log10 log1p log2 sqrt rsqrt pow sin cos tan sinh cosh tanh asin "
    "acos atan atan2 asinh acosh atanh floor ceil round trunc fmod fmax fmin erf erfc erfinv "
    "lgamma max min hypot copysign frexp ldexp remainder sign signbit isnan isinf isfinite "
    "nextafter fix frac sgn neg square positive digamma i0 add sub mul div dot where clamp "
    "maximum minimum sort put take diff trace mode std".split())

_PATH = r"((?:\w+\s*::\s*)*)(\w+)"
_TEMPLATE = r"(?:<[^;(){}]*?>\s*)?"
_ALIAS = re.compile(r"\bnamespace\s+(\w+)\s*=\s*((?:torch|at)(?:\s*::\s*\w+)*)\s*;")
_USING_NS = re.compile(r"\busing\s+namespace\s+(?:torch|at)\b")
_NATIVE = re.compile(r"\bat\s*::\s*(native|_ops|cpu)\s*::")
_DISPATCHER = re.compile(r"\bDispatcher\s*::\s*singleton\b|\bfindSchema\w*|\bfindOp\w*|"
                         r"\bcallBoxed\b|\bAutoDispatch\w*")
_METHOD = re.compile(r"(?:\.|->)\s*(\w+)\s*" + _TEMPLATE + r"\(")
_UNQUALIFIED = re.compile(r"(?<![\w.:>])(\w+)\s*" + _TEMPLATE + r"\(")


def _qualified(code, aliases):
    """(offset, full path, name, is_call) of every torch::/at::/alias-qualified name."""
    roots = "|".join(["torch", "at"] + [re.escape(a) for a in aliases])
    pattern = re.compile(r"\b(" + roots + r")\s*::\s*" + _PATH + r"\b(?!\s*::)\s*("
                         + _TEMPLATE + r"\()?")
    for m in pattern.finditer(code):
        root = aliases.get(m.group(1), m.group(1))
        full = re.sub(r"\s+", "", f"{root}::{m.group(2)}")
        yield m.start(), full, m.group(3), m.group(4) is not None


def check_aten(code, emit) -> None:
    """Emit cpp.aten_compute findings for blanked source `code`; emit(rule, offset, msg)."""
    rule = "cpp.aten_compute"
    aliases = {m.group(1): re.sub(r"\s+", "", m.group(2)) for m in _ALIAS.finditer(code)}
    for m in _NATIVE.finditer(code):
        emit(rule, m.start(), f"at::{m.group(1)}:: call: ATen compute in the extension")
    for m in _DISPATCHER.finditer(code):
        emit(rule, m.start(), f"{m.group(0)}: calls operators through the dispatcher")
    for offset, path, name, is_call in _qualified(code, aliases):
        inner = path.split("::", 1)[1]
        if inner.startswith(("native::", "_ops::", "cpu::")) or inner.startswith(FREE_NAMESPACES):
            continue  # at::native:: reported above; at::cuda::blas:: is cpp.vendor_library's
        if is_call and name not in ATEN_ALLOWED:
            emit(rule, offset, f"{path}{name}(): ATen/torch compute in the extension")
        elif not is_call and (name in COMPUTE_METHODS or name in ATEN_FUNCTIONS):
            emit(rule, offset, f"{path}{name}: reference to an ATen/torch operator")
    for m in _METHOD.finditer(code):
        if m.group(1) in COMPUTE_METHODS:
            emit(rule, m.start(), f".{m.group(1)}(): tensor compute method in the extension")
    if _USING_NS.search(code):
        for m in _UNQUALIFIED.finditer(code):
            name = m.group(1)
            if (name in COMPUTE_METHODS or name in ATEN_FUNCTIONS) and name not in C_NAMES:
                emit(rule, m.start(), f"{name}(): ATen/torch compute (using namespace)")
