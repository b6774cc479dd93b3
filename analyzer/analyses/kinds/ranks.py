"""Ranks: how many dimensions a tensor has, where the code fixes it.

The number of dimensions of a tensor is fixed in every traced graph, and the code often
says what it is: a factory's sizes (`torch.zeros(b, n, 2)` has three), a literal
(`torch.tensor(0.0)` has none), a shape unpacked into names (`b, n, c = x.shape` proves
`x` has three), and the ops that follow (elementwise ops broadcast, a reduction over a
named dimension drops it, `unsqueeze` adds one, indexing with an integer drops one, an
embedding adds one...). Where the code does not say, a rank is still known *relative*
to the rank of a function's tensor parameter: `m = x[:, 0] > 0` has one dimension less
than `x`, whatever that is.

A rank is a frozenset of the alternatives it may be (one per path that reached it, at
most `_MAX` of them), each a pair `(token, offset)`: `token` None for an absolute rank
(`offset` dimensions), else the rank of the parameter the token names plus `offset`.
None is "not known". A `RankFacts` of one function body holds what the code proves of
its parameters' ranks (`b, n, c = x.shape`; `torch.cat([x, pad])` with `pad` of three
dimensions makes `x` three too), which resolves the alternatives where they are read.

Ranks do not cross calls as such: a function's tensor parameters get tokens of their
own (`param_token`) and the arguments of a call are passed without ranks, so that the
summaries of a helper are shared by every caller (`strip`); a rank the callee returns
relative to a parameter is translated back to what the caller passed (`substitute`).

What uses it: a boolean-mask write of lower rank than its target (`lower_rank_mask`),
which the legacy exporter turns into a graph onnxruntime rejects.

    >>> x = frozenset({("x", 0)})                  # the rank of a parameter `x`
    >>> m = shifted(x, -1)                         # `x[:, 0] > 0`
    >>> difference(x, m, None)
    1
    >>> broadcast([x, absolute(0)]) == x           # `x * torch.tensor(2.0)`
    True
    >>> broadcast([x, absolute(2)]) is None        # `x + w` of a matrix: not known
    True
    >>> joined = join_ranks(x, absolute(3))        # `x` or `torch.cat([x, pad])` after an `if`
    >>> difference(joined, absolute(3), None) is None
    True
    >>> facts = RankFacts()
    >>> facts.learn_equal([x, absolute(3)])        # `torch.cat([x, pad])` with `pad` of three
    >>> difference(joined, shifted(x, -1), facts)  # so both paths have three
    1
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

from analyzer.analyses.kinds.levels import Level
from analyzer.frontend import ir

_MAX = 4


def absolute(n: int):
    return frozenset({(None, n)}) if isinstance(n, int) and n >= 0 else None


def param_token(path: str, qualname: str, name: str) -> tuple:
    return ("param", path, qualname, name)


def absent_or(rank, token):
    """``rank`` when known, else the rank of the parameter ``token`` names."""
    return rank if rank is not None else frozenset({(token, 0)})


def absolute_only(rank):
    """``rank`` when it is absolute on every path (a module attribute outlives the call
    whose parameters the tokens name), else None."""
    return rank if rank is not None and all(t is None for t, o in rank) else None


def join_ranks(a, b):
    if a == b:
        return a
    if a is None or b is None:
        return None
    both = a | b
    return both if len(both) <= _MAX else None


def shifted(rank, k: int):
    if rank is None:
        return None
    out = frozenset((t, o + k) for t, o in rank)
    return None if any(t is None and o < 0 for t, o in out) else out


def broadcast(ranks):
    """The rank of an elementwise result of operands of ``ranks`` (None for an operand
    tensor of unknown rank; Python numbers are left out by the caller)."""
    if not ranks or any(r is None for r in ranks):
        return None
    out = set()
    for combo in product(*ranks):
        pair = _broadcast_pair(combo)
        if pair is None:
            return None
        out.add(pair)
    return frozenset(out) if len(out) <= _MAX else None


def _broadcast_pair(pairs):
    tokens = {t for t, o in pairs if t is not None}
    absolutes = [o for t, o in pairs if t is None]
    if not tokens:
        return (None, max(absolutes))
    if len(tokens) > 1:
        return None
    token = tokens.pop()
    offset = max(o for t, o in pairs if t is not None)
    if any(o > 0 for o in absolutes):
        return None  # `x + torch.ones(3)`: as many as the larger, which is not known
    return (token, offset)


def number_like(v) -> bool:
    """Whether an operand beside a tensor leaves its rank as it is: a Python value, or one
    not resolved that is configuration (static: `scale * t` with `scale` a constructor
    argument); one computed from tensors may be a tensor of more dimensions."""
    return v.type in ("python", "none") or (v.type in ("unknown", "method") and max(v.level, v.ctl) == Level.STATIC)


class RankFacts:
    """What one function body proves of its parameters' ranks: token -> rank."""

    def __init__(self):
        self.known: dict[tuple, int] = {}

    def learn(self, rank, n: int) -> None:
        """``rank`` (a single alternative relative to a token) is ``n``."""
        if rank is not None and len(rank) == 1:
            (token, offset), = rank
            if token is not None and n - offset >= 0:
                self.known.setdefault(token, n - offset)

    def learn_equal(self, ranks) -> None:
        """The tensors of ``ranks`` have one rank (the items of `torch.cat`)."""
        single = [next(iter(r)) for r in ranks if r is not None and len(r) == 1]
        known = [o for t, o in single if t is None] + [self.known[t] + o for t, o in single if t in self.known]
        if known:
            for t, o in single:
                if t is not None:
                    self.learn(frozenset({(t, o)}), known[0])

    def resolve(self, rank):
        if rank is None:
            return None
        return frozenset((None, self.known[t] + o) if t in self.known else (t, o) for t, o in rank)


def difference(a, b, facts: RankFacts | None):
    """``rank(a) - rank(b)`` when the code fixes it, else None."""
    if facts is not None:
        a, b = facts.resolve(a), facts.resolve(b)
    if a is None or b is None or len(a) != 1 or len(b) != 1:
        return None
    (ta, oa), = a
    (tb, ob), = b
    return oa - ob if ta == tb else None


def single_absolute(rank, facts: RankFacts | None):
    if facts is not None:
        rank = facts.resolve(rank)
    if rank is None or len(rank) != 1:
        return None
    (t, o), = rank
    return o if t is None else None


# ---------------------------------------------------------------- across calls


def strip(value):
    """``value`` without ranks (an argument passed to a callee: `param_token`)."""
    if value is None:
        return None
    elems = value.elems
    if value.rank is None and (elems is None or all(e is None or e.rank is None for e in elems)) \
            and (value.elem is None or value.elem.rank is None):
        return value
    return replace(value, rank=None, elems=tuple(strip(e) for e in elems) if elems is not None else None,
                   elem=strip(value.elem))


def substitute(value, mapping: dict):
    """``value`` (returned by a callee) with ranks relative to the callee's parameters
    (tokens of ``mapping``) translated to what the caller passed (dropped when unknown)."""
    if value is None or not mapping:
        return value
    rank = value.rank
    if rank is not None and any(t in mapping or _foreign(t) for t, o in rank):
        out = set()
        for t, o in rank:
            if t is None:
                out.add((t, o))
                continue
            passed = mapping.get(t)
            if passed is None:
                out = None
                break
            shifted_passed = shifted(passed, o)
            if shifted_passed is None:
                out = None
                break
            out |= shifted_passed
        rank = frozenset(out) if out is not None and len(out) <= _MAX else None
    elems = tuple(substitute(e, mapping) for e in value.elems) if value.elems is not None else None
    elem = substitute(value.elem, mapping)
    if rank == value.rank and elems == value.elems and elem is value.elem:
        return value
    return replace(value, rank=rank, elems=elems, elem=elem)


def resolved(value, facts: RankFacts | None):
    """``value`` with the ranks the function body proved (`RankFacts`) made absolute."""
    if value is None or facts is None or not facts.known:
        return value
    elems = tuple(resolved(e, facts) for e in value.elems) if value.elems is not None else None
    elem = resolved(value.elem, facts)
    rank = facts.resolve(value.rank)
    if rank == value.rank and elems == value.elems and elem is value.elem:
        return value
    return replace(value, rank=rank, elems=elems, elem=elem)


def as_passed(value, originals: dict):
    """``value`` with every part equal to an argument of the call (``originals``: value ->
    the caller's object) replaced by the caller's object itself."""
    if value is None:
        return None
    same = originals.get(value)
    if same is not None:
        return same
    if value.elems is None:
        return value
    elems = tuple(as_passed(e, originals) for e in value.elems)
    if all(a is b for a, b in zip(elems, value.elems)):
        return value
    return replace(value, elems=elems)


def _foreign(token) -> bool:
    return isinstance(token, tuple) and token[:1] == ("param",)


# ---------------------------------------------------------------- the ops

# Methods and functions whose result has the rank of their tensor operands broadcast.
BROADCASTING = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "pow", "float_power", "atan2", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "gt", "lt", "ge",
    "le", "greater", "less", "greater_equal", "less_equal", "not_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "where", "lerp", "addcmul", "addcdiv",
    "xlogy", "copysign", "hypot", "heaviside",
})
# ... and those whose result has the rank of their first tensor (the receiver of a method).
KEEPING = frozenset({
    "abs", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
    "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "sigmoid", "relu", "relu6", "gelu", "silu",
    "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardswish", "hardsigmoid", "softplus",
    "softsign", "logsigmoid", "tanhshrink", "erf", "erfc", "erfinv", "sign", "sgn", "square", "reciprocal",
    "floor", "ceil", "round", "trunc", "frac", "clamp", "clamp_min", "clamp_max", "clip", "logical_not",
    "bitwise_not", "isnan", "isinf", "isfinite", "isneginf", "isposinf", "nan_to_num", "masked_fill",
    "softmax", "log_softmax", "softmin", "cumsum", "cumprod", "flip", "roll", "triu", "tril", "normalize",
    "layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm", "dropout", "dropout1d",
    "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "float", "double", "half",
    "bfloat16", "int", "long", "short", "bool", "byte", "char", "to", "type_as", "clone", "detach",
    "contiguous", "cpu", "cuda", "permute", "transpose", "swapaxes", "swapdims", "t", "movedim", "moveaxis",
    "masked_scatter", "index_put", "index_copy", "index_add", "index_fill", "scatter", "scatter_add",
    "scatter_reduce", "narrow", "rot90", "prelu", "pad", "interpolate", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "linear", "argsort", "logit", "fill_", "zero_", "expand_as_unknown",
})
ELEMENTWISE = BROADCASTING | KEEPING

# Reductions: over the dimensions named (one fewer each, unless keepdim), else over all.
REDUCTIONS = frozenset({
    "sum", "mean", "amax", "amin", "any", "all", "prod", "argmax", "argmin", "norm", "std", "var",
    "logsumexp", "nansum", "nanmean", "count_nonzero",
})
_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn", "full"})
_NEW_FACTORIES = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})
_LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                   "randint_like", "clone", "polar_unknown"})
_VECTORS = frozenset({"arange", "linspace", "logspace", "randperm", "bincount_unknown"})

# `nn` modules whose output has the rank of their input (the first argument).
_KEEPING_MODULES = frozenset("torch.nn." + n for n in (
    "Linear", "LazyLinear", "Bilinear_unknown", "LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm",
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "ReLU", "ReLU6", "GELU", "SiLU",
    "Mish", "Sigmoid", "Tanh", "ELU", "SELU", "CELU", "LeakyReLU", "PReLU", "Softplus", "Softmax",
    "LogSoftmax", "Hardswish", "Hardsigmoid", "Hardtanh", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d",
    "ReflectionPad2d", "ReplicationPad2d", "SyncBatchNorm",
))
_EMBEDDINGS = frozenset({"torch.nn.Embedding", "torch.embedding", "torch.nn.functional.embedding"})


def of_call(func, args, kwargs, node, facts: RankFacts | None):
    """The rank of the tensor a call of ``func`` (a torch function, a tensor method or an
    `nn` module) returns, when the code fixes it; None otherwise."""
    if not isinstance(node, ir.Call) or any(a.star for a in node.args):
        return None
    arg_nodes = [a.value for a in node.args if a.keyword is None]
    keywords = {a.keyword: a.value for a in node.args if a.keyword is not None}
    if func.type == "module" and isinstance(func.ref, str):
        first = args[0] if args else None
        if func.ref in _KEEPING_MODULES:
            return _rank(first)
        if func.ref in _EMBEDDINGS:
            return shifted(_rank(first), 1)
        return None
    if func.type == "method" and func.elem is not None and func.elem.type == "tensor" and isinstance(func.ref, str):
        return _method(func.ref, func.elem, args, kwargs, arg_nodes, keywords, facts)
    if func.type == "ext" and isinstance(func.ref, str):
        qualname = func.ref
        if qualname in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"):
            return _rank(args[0]) if args else None
        if qualname in _EMBEDDINGS:
            return shifted(_rank(args[0]), 1) if args else None
        namespace, _, name = qualname.rpartition(".")
        if namespace not in ("torch", "torch.nn.functional", "torch.special"):
            return None
        return _function(name, args, kwargs, arg_nodes, keywords, facts)
    return None


def _method(name: str, recv, args, kwargs, arg_nodes, keywords, facts):
    rank = recv.rank
    if name.endswith("_") and not name.startswith("_"):
        return rank  # in place: the receiver itself
    if name in BROADCASTING:
        return broadcast([rank] + [a.rank for a in args if a.type == "tensor"])
    if name in KEEPING:
        return rank
    if name in REDUCTIONS:
        return _reduced(rank, *_dim_keepdim(name, arg_nodes, keywords))
    if name == "unsqueeze":
        return shifted(rank, 1)
    if name in ("view", "reshape", "expand", "repeat", "tile") or name in _NEW_FACTORIES:
        n = _size_count(args[:1], arg_nodes[:1]) if name == "new_full" else _size_count(args, arg_nodes)
        if name in ("repeat", "tile") and n is not None:
            r = single_absolute(rank, facts)
            return absolute(max(n, r)) if r is not None else None
        return absolute(n) if n is not None else None
    if name in ("view_as", "reshape_as", "expand_as"):
        return _rank(args[0]) if args else None
    if name == "flatten":
        return _flattened(rank, arg_nodes, facts)
    if name in ("size",):
        return None
    return None


def _function(name: str, args, kwargs, arg_nodes, keywords, facts):
    tensors = [a for a in args if a.type == "tensor"]
    if name in _FACTORIES:
        if not args and "size" in kwargs:
            return absolute(_size_count([kwargs["size"]], [keywords.get("size")]))
        if name == "full":
            return absolute(_size_count(args[:1], arg_nodes[:1]))
        return absolute(_size_count(args, arg_nodes))
    if name in _LIKE:
        return _rank(args[0]) if args else None
    if name in _VECTORS:
        return absolute(1)
    if name == "eye":
        return absolute(2)
    if name in ("tensor", "as_tensor"):
        return absolute(_nesting(arg_nodes[0])) if arg_nodes else None
    if name in ("cat", "concat", "concatenate", "stack", "hstack_unknown"):
        items = args[0] if args else kwargs.get("tensors")
        if items is None or items.type != "container":
            return None
        ranks = [e.rank for e in items.elems] if items.elems is not None else [items.elem.rank if items.elem else None]
        if facts is not None and items.elems is not None:
            facts.learn_equal(ranks)
        known = [r for r in ranks if r is not None]
        if not known:
            return None
        if facts is not None:
            known = [facts.resolve(r) for r in known]
        rank = next((r for r in known if single_absolute(r, None) is not None), known[0])
        return shifted(rank, 1) if name == "stack" else rank
    if name in ("matmul", "mm", "bmm"):
        if name == "mm":
            return absolute(2)
        if name == "bmm":
            return absolute(3)
        return _matmul(tensors, facts)
    if name in REDUCTIONS:
        if not args:
            return None
        return _reduced(_rank(args[0]), *_dim_keepdim(name, arg_nodes[1:], keywords))
    if name == "unsqueeze":
        return shifted(args[0].rank, 1) if args else None
    if name == "flatten":
        return _flattened(args[0].rank, arg_nodes[1:], facts) if args else None
    if name in BROADCASTING:
        return broadcast([a.rank for a in tensors]) if tensors else None
    if name in KEEPING:
        return _rank(args[0]) if args else None
    return None


def matmul(a, b):
    """The rank of `a @ b` (a tensor and maybe a Python value)."""
    if a.type != "tensor" or b.type != "tensor":
        return None
    return _matmul([a, b], None)


def _matmul(tensors, facts):
    if len(tensors) != 2:
        return None
    a, b = tensors[0].rank, tensors[1].rank
    ra, rb = single_absolute(a, facts), single_absolute(b, facts)
    if rb == 2 and ra != 0:
        return a  # `x @ w` of a matrix: x's rank, whatever it is (a vector's 1 included)
    if ra is not None and rb is not None:
        if ra == 1 and rb == 1:
            return absolute(0)
        if rb == 1:
            return absolute(ra - 1)
        if ra == 1:
            return absolute(rb - 1)
        return absolute(max(ra, rb))
    return None


def _dim_keepdim(name: str, positional, keywords) -> tuple:
    """The `dim` and `keepdim` expressions of a reduction's arguments after the tensor:
    `norm(p, dim, keepdim)`, `std(dim, unbiased, keepdim)` / `var(...)`, the others
    `(dim, keepdim)`."""
    at = {"norm": (1, 2), "std": (0, 2), "var": (0, 2)}.get(name, (0, 1))
    dim = positional[at[0]] if len(positional) > at[0] else keywords.get("dim")
    keepdim = positional[at[1]] if len(positional) > at[1] else keywords.get("keepdim")
    return dim, keepdim


def _reduced(rank, dim_node, keepdim_node):
    if isinstance(keepdim_node, ir.Const) and keepdim_node.value is True:
        return rank
    if keepdim_node is not None and not (isinstance(keepdim_node, ir.Const) and keepdim_node.value is False):
        return None  # a keepdim that is not a constant
    if dim_node is None:
        return absolute(0)
    if isinstance(dim_node, (ir.Tuple, ir.List)):
        return shifted(rank, -len(dim_node.elts))
    if _is_int(dim_node):
        return shifted(rank, -1)
    return None


def _flattened(rank, arg_nodes, facts):
    start = _int_of(arg_nodes[0]) if arg_nodes else 0
    end = _int_of(arg_nodes[1]) if len(arg_nodes) > 1 else -1
    if start is None or end is None:
        return None
    if start >= 0 and end == -1:
        return absolute(start + 1)
    r = single_absolute(rank, facts)
    if r is None:
        if start < 0 and end == -1:
            return shifted(rank, start + 1)  # `flatten(-2)`: the last two become one
        return None
    s, e = start % max(r, 1), end % max(r, 1)
    return absolute(r - (e - s))


def _size_count(sizes, nodes) -> int | None:
    """How many sizes a factory or `view` gets: as many as it is given when it is given
    several (each is then a number), the items of one sequence (a display, a shape of
    known rank), or one when the only one is a number as written (`view(-1)`,
    `zeros(x.shape[0])`): a name may hold a tuple (`zeros(size)`)."""
    if not sizes or len(nodes) != len(sizes):
        return None
    if len(sizes) == 1:
        c = sizes[0]
        if c.type == "container":
            if c.elems is not None:
                return len(c.elems) if not any(e.type == "starred" for e in c.elems) else None
            if c.ref == "shape" and c.rank is not None and len(c.rank) == 1:
                (t, o), = c.rank
                return o if t is None else None
            return None
        return 1 if _is_number(nodes[0]) else None
    if all(s.type in ("python", "unknown", "tensor", "method") for s in sizes):
        return len(sizes)
    return None


def _is_number(node) -> bool:
    """An expression that is a number as written: an int, a size (`x.shape[0]`,
    `x.size(0)`, `len(...)`, `int(...)`), or arithmetic on those."""
    if isinstance(node, ir.Const):
        return type(node.value) in (int, float)
    if isinstance(node, ir.UnaryOp):
        return node.op == "-" and _is_number(node.operand)
    if isinstance(node, ir.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    if isinstance(node, ir.Subscript):
        of = node.value
        return (isinstance(of, ir.Attribute) and of.attr == "shape") or (
            isinstance(of, ir.Call) and isinstance(of.func, ir.Attribute) and of.func.attr == "size" and not of.args)
    if isinstance(node, ir.Call):
        f = node.func
        return (isinstance(f, ir.Attribute) and f.attr in ("size", "numel", "dim") and bool(node.args or f.attr != "size")) \
            or (isinstance(f, ir.Name) and f.id in ("len", "int"))
    return False


def _nesting(node) -> int | None:
    """How many dimensions `torch.tensor(node)` has, from the literal as written."""
    if _is_number(node) or (isinstance(node, ir.Const) and type(node.value) is bool):
        return 0
    if isinstance(node, (ir.List, ir.Tuple)) and node.elts:
        inner = {_nesting(e) for e in node.elts}
        if len(inner) == 1 and None not in inner:
            return 1 + inner.pop()
    return None


def _rank(v):
    return v.rank if v is not None and v.type == "tensor" else None


def _is_int(node) -> bool:
    return _int_of(node) is not None


def _int_of(node) -> int | None:
    if isinstance(node, ir.Const) and type(node.value) is int:
        return node.value
    if isinstance(node, ir.UnaryOp) and node.op == "-" and isinstance(node.operand, ir.Const) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


# ---------------------------------------------------------------- indexing


def of_subscript(base_rank, index, index_node, facts: RankFacts | None):
    """The rank of `t[index]` for ``t`` of ``base_rank``: an integer drops a dimension, a
    slice keeps one, None adds one, a boolean mask of rank r stands for r dimensions and
    gives one, an index tensor of rank r for one and gives r."""
    if base_rank is None:
        return None
    parts = index_node.elts if isinstance(index_node, ir.Tuple) else [index_node]
    values = index.elems if isinstance(index_node, ir.Tuple) and index.type == "container" and index.elems is not None \
        else [index] if not isinstance(index_node, ir.Tuple) else None
    if values is None or len(values) != len(parts):
        return None
    delta = 0
    tensors = 0
    for node, value in zip(parts, values):
        if isinstance(node, ir.Slice):
            continue
        if isinstance(node, ir.Const) and node.value is Ellipsis:
            continue
        if isinstance(node, ir.Const) and node.value is None:
            delta += 1
            continue
        if _is_int(node) or (value.type == "python" and value.ref != "slice"):
            delta -= 1
            continue
        if value.type == "tensor":
            tensors += 1
            r = single_absolute(value.rank, facts)
            if r is None:
                return None
            delta += 1 - r if value.ref == "bool" else r - 1
            continue
        return None
    if tensors > 1:
        return None  # advanced indices broadcast together
    return shifted(base_rank, delta)


def lower_rank_mask(base, index, index_node, value, facts: RankFacts | None) -> bool:
    """Whether `base[index] = value` writes through a boolean mask of fewer dimensions
    than ``base`` (the mask first, followed by full slices at most) a value that does not
    hold the masked rows (a Python number, a tensor of no more dimensions than those
    the mask leaves): the legacy exporter emits a Where / ScatterND whose shapes
    onnxruntime rejects (measured: `benchmarks/data/mask_writes.md`)."""
    parts = index_node.elts if isinstance(index_node, ir.Tuple) else [index_node]
    values = index.elems if isinstance(index_node, ir.Tuple) and index.type == "container" and index.elems is not None \
        else [index] if not isinstance(index_node, ir.Tuple) else None
    if not values or len(values) != len(parts):
        return False
    mask = values[0]
    boolean = mask.ref == "bool" or isinstance(parts[0], (ir.Compare,))  # a comparison of sizes is one too
    if mask.type != "tensor" or not boolean:
        return False
    if not all(isinstance(p, ir.Slice) and p.lower is None and p.upper is None and p.step is None for p in parts[1:]):
        return False
    left = difference(base.rank, mask.rank, facts)
    if left is None or left <= 0:
        return False
    if value.type == "python" and value.ref not in ("ndarray",):
        return True
    if value.type == "tensor" and value.shape_level < Level.DATA:  # not sized by the mask (`z[m]`)
        r = single_absolute(value.rank, facts)
        return r is not None and r <= left
    return False
