"""What untrace knows of the PyTorch API without importing it: which calls return
tensors, sizes, Python constants or tuples, which escape into Python or NumPy, and
which produce tensors whose *shape* depends on data.

Names are canonical: torch functions as `torch.X` (including `torch.nn.functional.X`),
Tensor methods by bare method name.
"""

from __future__ import annotations

# Tensor attributes and methods --------------------------------------------------------

# `.shape`-like: the value is the tensor's size (level: the tensor's shape level).
SHAPE_ATTRIBUTES = frozenset({"shape"})
SHAPE_METHODS = frozenset({"size", "numel", "nelement", "stride"})

# Python values known when the graph is traced, independent of the tensor's data. The
# rank (`ndim`, `dim()`) is one: it is fixed in every traced or exported graph, even for
# a tensor whose sizes depend on data (`nonzero()` is always 2-D).
STATIC_ATTRIBUTES = frozenset({
    "ndim",
    "dtype", "device", "is_cuda", "is_cpu", "is_sparse", "is_quantized", "is_meta", "requires_grad",
    "is_leaf", "layout", "names", "is_mps", "is_nested", "itemsize",
})
STATIC_METHODS = frozenset({
    "dim", "ndimension",
    "is_floating_point", "is_complex", "is_contiguous", "get_device", "element_size", "data_ptr",
    "is_signed", "dim_order", "is_pinned", "is_shared", "storage_offset", "has_names",
    "is_inference",  # whether made under inference mode: a flag of the tensor, not its values
})

TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "real", "imag", "grad"})
VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "real", "imag"})

# Methods whose result may share storage with their receiver: a write into it is a write
# into the receiver too (an alias the trace does not follow: UT301).
VIEW_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t", "expand", "expand_as", "narrow",
    "select", "unsqueeze", "squeeze", "flatten", "unflatten", "diagonal", "as_strided", "detach", "movedim",
    "moveaxis", "swapaxes", "swapdims", "unfold", "contiguous", "view_as_real", "view_as_complex", "split",
    "chunk", "unbind", "tensor_split",
})

# Calls that may return their input itself (`x.float()` of a float tensor, dropout in eval
# mode): a write into the result is a write into the input, which eager then sees too.
ALIAS_METHODS = frozenset({
    "to", "type", "type_as", "float", "double", "half", "bfloat16", "int", "long", "bool", "cpu", "cuda",
})
# Methods that take only the dtype and device of a tensor operand (`w.to(x)`), not its values.
DTYPE_FROM_TENSOR_METHODS = frozenset({"to", "type_as"})
ALIAS_MODULES = frozenset("torch.nn." + name for name in (
    "Identity", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
))
ALIAS_FUNCTIONS = frozenset("torch.nn.functional." + name for name in (
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
))

# Tensor -> Python escapes (UT201) and -> NumPy (UT202).
PYTHON_ESCAPE_METHODS = frozenset({"item", "tolist"})
NUMPY_ESCAPE_METHODS = frozenset({"numpy", "__array__"})

# Methods returning a tuple of tensors.
TUPLE_METHODS = frozenset({
    "chunk", "split", "unbind", "tensor_split", "split_with_sizes", "hsplit", "vsplit", "dsplit",
    "topk", "sort", "kthvalue", "mode", "aminmax", "frexp", "std_mean", "var_mean", "slogdet",
    "qr", "svd", "eig", "lu", "cummax", "cummin", "unique_consecutive_with_counts",
})
# Methods that return a tuple only when given a dimension (`x.max()` vs `x.max(dim=1)`).
TUPLE_WITH_DIM_METHODS = frozenset({"max", "min", "median", "nanmedian"})

# Results whose shape depends on data values.
DATA_SHAPE_METHODS = frozenset({
    "nonzero", "masked_select", "unique", "unique_consecutive", "argwhere", "nonzero_static_unknown",
})

# Methods that write into their receiver (besides the generic trailing-underscore rule).
INDEX_PUT_METHODS = frozenset({"index_put_", "index_put", "masked_scatter_", "index_copy_", "index_fill_"})
# In-place methods that write values at positions (or the whole of) their receiver, as an
# index assignment does (`t[idx] = v`, `t[mask] = 0`, `t[:] = v`): reported as one, into
# whatever the receiver is, a tensor made here included (UT304).
POSITION_WRITE_METHODS = frozenset({
    "index_put_", "masked_scatter_", "index_copy_", "index_fill_", "index_add_", "index_reduce_",
    "scatter_", "scatter_add_", "scatter_reduce_", "masked_fill_", "put_", "copy_",
})
# Out-of-place writes whose result has the receiver's shape (broadcast with the mask of
# the masked ones, their first argument): the values written, however many (`source` of
# `masked_scatter` taken from a boolean mask), size nothing.
RECEIVER_SHAPE_METHODS = frozenset({"index_put", "index_copy", "index_add", "index_fill", "scatter", "scatter_add",
                                    "scatter_reduce"})
MASKED_WRITE_METHODS = frozenset({"masked_fill", "masked_scatter"})

# Common Tensor method names: calling one on a value proves it is a tensor (or array).
TENSOR_METHODS = frozenset({
    "abs", "add", "addmm", "all", "amax", "amin", "any", "argmax", "argmin", "argsort", "bmm",
    "bool", "byte", "ceil", "char", "chunk", "clamp", "clamp_min", "clamp_max", "clip", "clone",
    "contiguous", "cos", "cpu", "cuda", "cumprod", "cumsum", "detach", "diag", "diagonal", "div",
    "double", "eq", "equal", "exp", "expand", "expand_as", "flatten", "flip", "float", "floor", "gather",
    "ge", "gt", "half", "index_select", "int", "isnan", "isinf", "le", "log", "log_softmax", "logical_and",
    "logical_not", "logical_or", "long", "lt", "masked_fill", "matmul", "max", "mean", "min", "mm",
    "mul", "narrow", "ne", "neg", "new_empty", "new_full", "new_ones", "new_tensor", "new_zeros",
    "norm", "permute", "pow", "prod", "reciprocal", "relu", "repeat", "repeat_interleave", "reshape",
    "reshape_as", "roll", "round", "rsqrt", "scatter", "scatter_add", "select", "sigmoid", "sign",
    "sin", "softmax", "sort", "split", "sqrt", "square", "squeeze", "std", "sub", "sum", "t", "tanh",
    "to", "topk", "transpose", "tril", "triu", "type_as", "unbind", "unflatten", "unfold", "unsqueeze",
    "var", "view", "view_as", "where", "logsumexp", "nonzero", "masked_select", "unique", "argwhere",
    "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "ndimension", "float", "bfloat16",
    "cumsum", "count_nonzero", "isfinite", "fill_", "zero_", "copy_", "index_put_", "masked_fill_",
    "add_", "mul_", "sub_", "div_", "clamp_", "scatter_", "index_add", "index_copy", "index_fill",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_not", "softplus", "erf", "exp2", "log2",
    "log1p", "expm1", "atan2", "maximum", "minimum", "fmod", "remainder", "floor_divide", "sum_to_size",
    "movedim", "moveaxis", "swapaxes", "tile", "take", "take_along_dim", "outer", "dot", "baddbmm",
    "einsum", "addcmul", "addcdiv", "lerp", "nan_to_num", "allclose", "isclose", "median", "mode",
    "kthvalue", "cummax", "cummin", "trunc", "frac", "sinh", "cosh", "asin", "acos", "atan",
})

# torch functions ------------------------------------------------------------------------

# Calls answered when the graph is traced, from configuration only.
STATIC_FUNCTIONS = frozenset({
    "torch.is_tensor", "torch.is_storage", "torch.is_floating_point", "torch.is_complex",
    "torch.jit.is_scripting", "torch.jit.is_tracing", "torch.onnx.is_in_onnx_export",
    "torch.is_grad_enabled", "torch.is_inference_mode_enabled", "torch.is_autocast_enabled",
    "torch.get_default_dtype", "torch.finfo", "torch.iinfo", "torch.device", "torch.dtype",
    "torch.compiler.is_compiling", "torch._dynamo.is_compiling", "torch.compiler.is_dynamo_compiling",
    "torch.fx._symbolic_trace.is_fx_tracing", "torch.are_deterministic_algorithms_enabled",
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
    "torch._assert", "torch._check", "torch._check_is_size", "torch.get_autocast_gpu_dtype",
    "torch.promote_types", "torch.result_type", "torch.can_cast", "torch._C._get_tracing_state",
    "torch.distributed.is_initialized", "torch.distributed.get_world_size", "torch.distributed.get_rank",
    "torch.jit.annotate", "torch.jit.unused", "torch.jit.ignore", "torch.jit.export",
    "torch.is_nonzero_unknown", "torch.autocast", "torch.typename", "torch.nn.init.calculate_gain",
    # dtypes, devices and switches of the process, not tensors
    "torch.get_autocast_dtype", "torch.get_autocast_cpu_dtype", "torch.get_autocast_ipu_dtype",
    "torch.get_autocast_xla_dtype", "torch.is_autocast_cpu_enabled", "torch.is_autocast_available",
    "torch.is_autocast_cache_enabled", "torch.get_default_device", "torch.get_num_threads",
    "torch.get_num_interop_threads", "torch.get_deterministic_debug_mode", "torch.is_warn_always_enabled",
    "torch.get_float32_matmul_precision", "torch.is_deterministic_algorithms_warn_only_enabled",
    "torch.set_default_dtype", "torch.set_grad_enabled", "torch.use_deterministic_algorithms",
    "torch.amp.autocast", "torch.cpu.amp.autocast", "torch.manual_seed",
})
STATIC_PREFIXES = ("torch.cuda.", "torch.backends.", "torch.distributed.", "torch.utils.checkpoint.is_",
                   "torch.version", "torch.__version__", "torch.overrides.", "torch.fx.", "torch._C.",
                   "torch.jit.", "torch.compiler.", "torch._dynamo.", "torch.testing.", "torch.hub.")

SHAPE_FUNCTIONS = frozenset({"torch.numel", "torch.Size"})

# SymInt-aware casts and their kin (what `--fix` writes for `int(t)`): Python numbers in
# eager, symbolic under torch.export.
SYMBOLIC_CASTS = frozenset({"torch.sym_int", "torch.sym_float", "torch.sym_max", "torch.sym_min", "torch.sym_not",
                            "torch.sym_sum", "torch.sym_ite"})

TUPLE_FUNCTIONS = frozenset({
    "torch.chunk", "torch.split", "torch.unbind", "torch.tensor_split", "torch.hsplit", "torch.vsplit",
    "torch.dsplit", "torch.topk", "torch.sort", "torch.kthvalue", "torch.mode", "torch.aminmax",
    "torch.frexp", "torch.std_mean", "torch.var_mean", "torch.meshgrid", "torch.broadcast_tensors",
    "torch.atleast_1d_many", "torch.linalg.qr", "torch.linalg.svd", "torch.linalg.eig",
    "torch.linalg.eigh", "torch.linalg.slogdet", "torch.linalg.lu", "torch.cummax", "torch.cummin",
    "torch.histogram", "torch.lstsq", "torch.svd", "torch.qr", "torch.nn.functional.multi_head_attention_forward",
    "torch.multi_head_attention_forward",  # F.multi_head_attention_forward, as `call_torch` spells it
})
TUPLE_WITH_DIM_FUNCTIONS = frozenset({"torch.max", "torch.min", "torch.median", "torch.nanmedian"})

DATA_SHAPE_FUNCTIONS = frozenset({
    "torch.nonzero", "torch.masked_select", "torch.unique", "torch.unique_consecutive",
    "torch.argwhere", "torch.repeat_interleave_unknown", "torch.bincount", "torch.histc_unknown",
})

# nn modules whose call returns a tuple rather than one tensor.
TUPLE_MODULES = frozenset({
    "torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN", "torch.nn.MultiheadAttention",
    "torch.nn.AdaptiveLogSoftmaxWithLoss", "torch.nn.MaxPool1d_indices",
})
CONTAINER_MODULES = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict",
                               "torch.nn.ParameterList", "torch.nn.ParameterDict"})
TENSOR_FACTORIES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"})

# Python builtins -------------------------------------------------------------------------

TENSOR_TO_PYTHON_BUILTINS = frozenset({"int", "float", "bool", "complex"})
STATIC_BUILTINS = frozenset({
    "isinstance", "issubclass", "hasattr", "callable", "type", "id", "print", "repr", "str",
    "format", "hash", "vars", "dir", "super", "object", "NotImplementedError", "ValueError",
    "TypeError", "RuntimeError", "AssertionError", "KeyError", "IndexError", "Exception", "warnings",
    "locals", "globals", "ord", "chr", "slice",
})
ITERATING_BUILTINS = frozenset({"list", "tuple", "enumerate", "zip", "reversed", "sorted", "iter", "set", "map", "filter"})
PYTHON_MATH_BUILTINS = frozenset({"min", "max", "abs", "round", "sum", "pow", "divmod", "all", "any"})


# Namespaces whose functions return tensors (unless listed above). Anything else under
# torch (torch.utils, torch.distributions, torch.autograd, ...) is not assumed to.
TENSOR_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                     "torch.sparse", "torch.nested", "torch.ops.aten", "torch.ops.torchvision", "torchvision.ops")


def returns_tensor(qualname: str) -> bool:
    namespace, _, name = qualname.rpartition(".")
    return namespace in TENSOR_NAMESPACES and not name[:1].isupper() or qualname == "torch.Tensor"


def is_static_function(qualname: str) -> bool:
    return qualname in STATIC_FUNCTIONS or qualname.startswith(STATIC_PREFIXES)


_RANDOM = ("rand", "normal", "bernoulli", "multinomial", "poisson", "dropout", "exponential_", "geometric_",
           "cauchy_", "log_normal_", "uniform_", "random_")


def is_random(name: str) -> bool:
    """Functions and methods whose values are drawn at run time (`torch.rand`, `x.uniform_()`,
    `F.dropout`): not known when the graph is traced, even from constant arguments."""
    last = name.rsplit(".", 1)[-1]
    return any(r in last for r in _RANDOM)


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in ("requires_grad_",)

# Calls whose first argument is only checked at run time (torch.export keeps the check;
# the legacy tracer drops it): a Python value computed for them is no value escape.
RUNTIME_CHECKS = frozenset({"torch._check", "torch._check_is_size", "torch._assert"})

# Tracing guards: calls whose value under the legacy tracer (`torch.jit.trace`, which
# `torch.onnx.export(dynamo=False)` runs) is known, matched by the called name's last
# part (`torch.jit.is_tracing`, `jit.is_tracing`, a `from ... import is_tracing`). Code a
# guard makes unreachable under tracing is not reported; code that only runs under the
# guard is. Each entry is checked against the real function under `torch.jit.trace` in
# tests/analyzer/test_tracing_guards.py.
TRUE_WHEN_TRACING = frozenset({
    "is_tracing",             # torch.jit.is_tracing; transformers.utils.is_tracing (any tracer)
    "_get_tracing_state",     # torch._C._get_tracing_state (a truthy state object)
    "is_in_onnx_export",      # torch.onnx.is_in_onnx_export (True inside torch.onnx.export)
    "is_jit_tracing",         # transformers.utils.import_utils.is_jit_tracing
    "_is_tracing",            # torchvision._is_tracing
})
FALSE_WHEN_TRACING = frozenset({
    "is_scripting",           # torch.jit.is_scripting
    "is_compiling",           # torch.compiler.is_compiling, torch._dynamo.is_compiling
    "is_dynamo_compiling",    # torch.compiler.is_dynamo_compiling
    "is_exporting",           # torch.compiler.is_exporting; timm.layers.is_exporting (torch.export only)
    "is_torchdynamo_compiling",   # transformers
    "is_torchdynamo_exporting",   # transformers
    "is_fx_tracing",          # torch.fx._symbolic_trace.is_fx_tracing
})
# True whenever torch runs (availability flags of libraries that work without it:
# transformers' `_is_torch_available`, `is_torch_available()`).
TRUE_WITH_TORCH = frozenset({"is_torch_available", "_is_torch_available", "_torch_available"})

# Decorators that make a function scripted when it is called under the tracer: its
# branches and loops are kept (TorchScript If/Loop), so they are no trace hazards.
SCRIPTED_WHEN_TRACING_DECORATORS = frozenset({"_script_if_tracing"})

# Forward parameters that hold training targets: defaulting to None, they are None in an
# export, and `if labels is not None:` (loss computation, label checks, teacher forcing
# from labels) is training-only code.
TRAINING_TARGET_PARAMETERS = frozenset({
    "labels", "label", "targets", "target", "start_positions", "end_positions", "mask_labels",
    "class_labels", "next_sentence_label", "sentence_order_label", "lm_labels", "gt_labels",
    "gt_bboxes", "gt_boxes", "ground_truth",
})

# Helpers that test whether a value is a tensor (`torch.is_tensor`, transformers'
# `is_torch_tensor`): a dispatch on them is decided for a value known to be one.
TENSOR_TESTS = frozenset({"is_tensor", "is_torch_tensor"})
