"""Name lists about PyTorch, used by the compute rules (no torch import: plain strings).

TENSOR_COMPUTE_METHODS is every public `torch.Tensor` method of torch 2.11 that is not
metadata, a view, a dtype/device move or an allocation (the catalogue's allowed kinds).
"""


def _words(text: str) -> frozenset:
    return frozenset(text.split())


TENSOR_COMPUTE_METHODS = _words(
    "abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ addbmm addbmm_ addcdiv addcdiv_ "
    "addcmul addcmul_ addmm addmm_ addmv addmv_ addr addr_ all allclose amax amin aminmax angle "
    "any apply_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 "
    "arctan2_ arctan_ arctanh arctanh_ argmax argmin argsort argwhere as_strided_ "
    "as_strided_scatter as_subclass asin asin_ asinh asinh_ atan atan2 atan2_ atan_ atanh atanh_ "
    "backward baddbmm baddbmm_ bernoulli bernoulli_ bincount bitwise_and bitwise_and_ "
    "bitwise_left_shift bitwise_left_shift_ bitwise_not bitwise_not_ bitwise_or bitwise_or_ "
    "bitwise_right_shift bitwise_right_shift_ bitwise_xor bitwise_xor_ bmm cauchy_ ceil ceil_ "
    "cholesky cholesky_inverse cholesky_solve clamp clamp_ clamp_max clamp_max_ clamp_min "
    "clamp_min_ clip clip_ coalesce conj_physical conj_physical_ copysign copysign_ corrcoef cos "
    "cos_ cosh cosh_ count_nonzero cov cross cummax cummin cumprod cumprod_ cumsum cumsum_ "
    "deg2rad deg2rad_ dequantize det diag diag_embed diagflat diagonal_scatter diff digamma "
    "digamma_ dist div div_ divide divide_ dot eig eq eq_ equal erf erf_ erfc erfc_ erfinv "
    "erfinv_ exp exp2 exp2_ exp_ expm1 expm1_ exponential_ fill_diagonal_ fix fix_ flip fliplr "
    "flipud float_power float_power_ floor floor_ floor_divide floor_divide_ fmax fmin fmod fmod_ "
    "frac frac_ frexp gather gcd gcd_ ge ge_ geometric_ geqrf ger greater greater_ greater_equal "
    "greater_equal_ gt gt_ hardshrink hash_tensor heaviside heaviside_ histc histogram hypot "
    "hypot_ i0 i0_ igamma igamma_ igammac igammac_ index_add index_add_ index_copy index_copy_ "
    "index_fill index_fill_ index_put index_put_ index_reduce index_reduce_ index_select inner "
    "int_repr inverse isclose isfinite isinf isnan isneginf isposinf isreal istft kron kthvalue "
    "lcm lcm_ ldexp ldexp_ le le_ lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_ log "
    "log10 log10_ log1p log1p_ log2 log2_ log_ log_normal_ log_softmax logaddexp logaddexp2 "
    "logcumsumexp logdet logical_and logical_and_ logical_not logical_not_ logical_or logical_or_ "
    "logical_xor logical_xor_ logit logit_ logsumexp lstsq lt lt_ lu lu_solve map2_ map_ "
    "masked_fill masked_fill_ masked_scatter masked_scatter_ masked_select matmul matrix_exp "
    "matrix_power max maximum mean median min minimum mm mode msort mul mul_ multinomial multiply "
    "multiply_ mv mvlgamma mvlgamma_ nan_to_num nan_to_num_ nanmean nanmedian nanquantile nansum "
    "narrow_copy ne ne_ neg neg_ negative negative_ nextafter nextafter_ nonzero nonzero_static "
    "norm normal_ not_equal not_equal_ numpy orgqr ormqr outer pinverse polygamma polygamma_ "
    "positive pow pow_ prelu prod put put_ qr quantile rad2deg rad2deg_ random_ reciprocal "
    "reciprocal_ reinforce relu relu_ remainder remainder_ renorm renorm_ repeat "
    "repeat_interleave resize_as_sparse_ roll rot90 round round_ rsqrt rsqrt_ scatter scatter_ "
    "scatter_add scatter_add_ scatter_reduce scatter_reduce_ select_scatter set_ sgn sgn_ sigmoid "
    "sigmoid_ sign sign_ signbit sin sin_ sinc sinc_ sinh sinh_ slice_inverse slice_scatter "
    "slogdet smm softmax solve sort sparse_mask sparse_resize_ sparse_resize_and_clear_ sqrt "
    "sqrt_ square square_ sspaddmm std stft sub sub_ subtract subtract_ sum sum_to_size svd "
    "symeig take take_along_dim tan tan_ tanh tanh_ tile to_dense to_mkldnn to_padded_tensor "
    "to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr topk trace "
    "triangular_solve tril tril_ triu triu_ true_divide true_divide_ trunc trunc_ uniform_ unique "
    "unique_consecutive var vdot where xlogy xlogy_ "
)

# Arithmetic/comparison dunders: `x.__mul__(y)` is compute like `x * y`.
DUNDER_OPS = _words(
    "__abs__ __add__ __and__ __div__ __eq__ __floordiv__ __ge__ __gt__ __iadd__ __iand__ "
    "__idiv__ __ifloordiv__ __ilshift__ __imod__ __imul__ __invert__ __ior__ __ipow__ "
    "__irshift__ __isub__ __itruediv__ __ixor__ __le__ __lshift__ __lt__ __matmul__ __mod__ "
    "__mul__ __ne__ __neg__ __or__ __pos__ __pow__ __radd__ __rand__ __rdiv__ __rfloordiv__ "
    "__rlshift__ __rmatmul__ __rmod__ __rmul__ __ror__ __rpow__ __rrshift__ __rshift__ "
    "__rsub__ __rtruediv__ __rxor__ __sub__ __truediv__ __xor__ __imatmul__")

# Methods whose result is a Python value (shapes, pointers, flags), not a tensor.
SCALAR_METHODS = _words(
    "size stride numel nelement dim ndimension element_size data_ptr storage_offset "
    "is_contiguous get_device item tolist dim_order is_cuda is_floating_point is_complex "
    "is_signed is_pinned is_leaf nbytes itemsize bit_length")
SCALAR_ATTRS = _words(
    "shape ndim dtype device layout is_cuda requires_grad is_leaf itemsize nbytes")
TENSOR_ATTRS = _words("T mT H mH real imag data grad")

# Allowed methods that return a tensor: views, moves and allocation.
TENSOR_VIEW_METHODS = _words(
    "view view_as reshape reshape_as flatten unflatten ravel squeeze squeeze_ unsqueeze "
    "unsqueeze_ permute transpose transpose_ t t_ swapaxes swapdims movedim moveaxis expand "
    "expand_as broadcast_to narrow select unfold diagonal conj resolve_conj resolve_neg "
    "contiguous clone copy_ to cpu cuda float double half bfloat16 int long short char byte "
    "bool type type_as pin_memory detach detach_ requires_grad_ new new_empty "
    "new_empty_strided new_full new_ones new_tensor new_zeros fill_ zero_ resize_ as_strided "
    "split chunk unbind tensor_split split_with_sizes hsplit vsplit dsplit unsafe_chunk "
    "unsafe_split")

# torch.* callables allowed in forward: allocation, views, dtype/device and context helpers.
TORCH_ALLOWED = (
    "torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
    "torch.ones", "torch.ones_like", "torch.full", "torch.full_like", "torch.arange",
    "torch.tensor", "torch.as_tensor", "torch.scalar_tensor", "torch.from_numpy",
    "torch.frombuffer", "torch.as_strided", "torch.reshape", "torch.flatten", "torch.squeeze",
    "torch.unsqueeze", "torch.transpose", "torch.permute", "torch.t", "torch.narrow",
    "torch.select", "torch.split", "torch.chunk", "torch.unbind", "torch.movedim",
    "torch.swapaxes", "torch.broadcast_to", "torch.view_as_real", "torch.view_as_complex",
    "torch.Size", "torch.device", "torch.dtype", "torch.finfo", "torch.iinfo",
    "torch.is_tensor", "torch.is_floating_point", "torch.is_complex", "torch.numel",
    "torch.get_default_dtype", "torch.get_default_device", "torch.promote_types",
    "torch.result_type", "torch.can_cast", "torch.broadcast_shapes", "torch.no_grad",
    "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
    "torch.is_grad_enabled", "torch.is_inference_mode_enabled", "torch.Generator",
    "torch.get_num_threads", "torch.nn.Parameter", "torch.nn.parameter",
    "torch.nn.Module.__init__", "torch.cuda", "torch.utils", "torch.autograd.Function",
    "torch.autograd.function.FunctionCtx", "torch.Tensor.size", "torch.Tensor.stride",
    "torch.Tensor.contiguous", "torch.Tensor.data_ptr", "torch.Tensor.numel",
    "torch.amp", "torch.autocast", "torch.typename", "torch.manual_seed", "torch.backends",
    "torch.version", "torch.is_*", "torch.get_*", "torch.are_deterministic_algorithms_enabled",
    "torch.autograd.grad_mode", "torch.autograd.no_grad", "torch.autograd.enable_grad",
    "torch.jit.is_scripting", "torch.jit.is_tracing", "torch.jit.annotate", "torch.jit.ignore",
    "torch.jit.unused", "torch.jit.Final", "torch._C._cuda_getCurrentRawStream",
    "torch._C._cuda_getDevice", "torch.compiler.is_compiling", "torch.compiler.disable",
)
# ...except these under torch.cuda / torch.utils, which compute or are other rules' business.
TORCH_DENIED = ("torch.cuda.comm", "torch.utils._python_dispatch", "torch.utils.checkpoint",
                "torch.cuda.jiterator", "torch.cuda.amp.GradScaler")

# torch.nn containers and parameter holders: constructing and iterating them is not compute.
NN_HOLDERS = ("torch.nn.Parameter", "torch.nn.parameter", "torch.nn.ParameterList",
              "torch.nn.ParameterDict", "torch.nn.ModuleList", "torch.nn.ModuleDict",
              "torch.nn.Sequential", "torch.nn.Module", "torch.nn.modules.module.Module",
              "torch.nn.Buffer", "torch.nn.Identity")
NN_CONTAINERS = ("torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential")

# torch.ops namespaces that are PyTorch's own operators (others are custom ops).
TORCH_OPS_BUILTIN = ("aten", "prims", "quantized", "quantized_decomposed", "inductor",
                     "higher_order", "c10d", "_c10d_functional", "_c10d_functional_autograd",
                     "profiler", "_quantized", "rngprims", "debugprims", "mkldnn", "_inductor_test")
