"""Static sizes of a tensor's last axis, and the index values that reductions over it
return (the `index_bounds` tags `("axis", ...)` and `("index", size)`).

A mixture-of-experts router reads

    self.weight = nn.Parameter(torch.zeros(self.num_experts, hidden))     # __init__
    logits = F.linear(hidden_states, self.weight)       # last axis: self.num_experts
    scores = logits.softmax(dim=-1) + self.bias         # the same axis
    _, top_k_index = torch.topk(scores, self.top_k, dim=-1)

so every entry of `top_k_index` is below `self.num_experts`, for every input.

Sizes are known from: a tensor factory with literal sizes (`torch.zeros(n, h)`: axis 0 of
2 has size n), `nn.Parameter` / `nn.Buffer` of one, `F.linear(x, w)` (its last axis is
the first of `w`), `torch.mm(x, w.t())` / `torch.matmul` (the last of the second),
`view` / `reshape` whose last size is fixed. They survive dtype casts,
elementwise functions of one tensor, and a broadcasting operation only when every tensor
operand has the same last-axis size (broadcasting a size-1 axis against another size
would change it). `topk` / `argmax` / `argmin` / `argsort` / `sort` along that axis give
indices below its size."""

from __future__ import annotations

from analyzer.frontend import expr_text, ir

FACTORIES = ("torch.zeros", "torch.ones", "torch.empty", "torch.randn", "torch.rand")
_WRAPPERS = ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer")
_LINEAR = ("torch.nn.functional.linear",)
_PRODUCTS = ("torch.mm", "torch.matmul")
# Functions of one tensor that keep its shape (the casts and elementwise maps a router
# applies between its logits and its top-k).
_SAME_SHAPE = frozenset({
    "float", "half", "bfloat16", "double", "type", "to", "type_as", "bool", "contiguous", "detach", "clone",
    "softmax", "log_softmax", "sigmoid", "tanh", "exp", "relu", "abs", "neg", "sqrt", "square",
})
_REDUCED_TO_INDEX = ("topk", "argmax", "argmin", "argsort", "sort")
_INDEX_POSITION = {"topk": 1, "sort": 1}  # the piece of the returned tuple that holds indices


def sized_result(name: str, args: list, node) -> tuple | None:
    """The `("axis", ...)` bound of the tensor a call to ``name`` returns, from the bounds
    of its tensor arguments ``args`` (the receiver first for a method, None for an
    argument that is not a bounded tensor); None when unknown."""
    short = name.rsplit(".", 1)[-1]
    method = "." not in name
    if name in FACTORIES:
        return _factory(node)
    if name in _WRAPPERS or short in _SAME_SHAPE and (method or name.startswith("torch.")):
        return args[0] if args and args[0] is not None and args[0][0] == "axis" else None
    if name in _LINEAR:
        weight = args[1] if len(args) > 1 else None
        return ("axis", -1, None, weight[3]) if weight is not None and weight[0] == "axis" and (weight[1], weight[2]) == (0, 2) else None
    if name in _PRODUCTS:
        other = args[1] if len(args) > 1 else None  # `torch.mm(x, w.t())`: the columns of a matrix
        return _last_axis(other) if other is not None and other[0] == "axis" and other[2] == 2 else None
    if short == "t" and method:
        return _transposed(args[0]) if args else None
    if short in ("view", "reshape") and method:
        return _reshaped(node)
    if short == "masked_fill" and method:
        return broadcast(args[:2])
    return None


def broadcast(bounds) -> tuple | None:
    """The bound of a broadcasting operation's result, ``bounds`` those of its tensor
    operands: kept when all of them have the same known last-axis size."""
    sizes = {_last_axis(b) for b in bounds}
    return sizes.pop() if len(sizes) == 1 and None not in sizes else None


def index_piece(name: str, recv, node) -> tuple[int, tuple] | None:
    """(position in the returned tuple or -1 for a tensor, `("index", size)`) for a
    reduction that returns indices along the receiver's known last axis (``recv`` its
    bound), as `torch.topk(x, k, dim=-1)` or `x.argmax(-1)` do."""
    short = name.rsplit(".", 1)[-1]
    if short not in _REDUCED_TO_INDEX or recv is None or not isinstance(node, ir.Call):
        return None
    last = _last_axis(recv)
    if last is None:
        return None
    skip = 1 if "." in name else 0  # `torch.topk(x, ...)` names its tensor first
    dim_position = {"topk": 1, "sort": 0, "argsort": 0, "argmax": 0, "argmin": 0}[short] + skip
    dim = argument(node, dim_position, "dim")
    if dim is None and short in ("argmax", "argmin"):
        return None  # over the flattened tensor
    if dim is not None and int_value(dim) != -1:
        return None
    return _INDEX_POSITION.get(short, -1), ("index", last[3])


def _transposed(bound) -> tuple | None:
    if bound is None or bound[0] != "axis" or bound[2] != 2 or bound[1] not in (0, 1, -1, -2):
        return None
    return ("axis", 1 - bound[1] % 2, 2, bound[3])


def _last_axis(bound) -> tuple | None:
    if bound is None or bound[0] != "axis":
        return None
    _, axis, ndim, size = bound
    if axis == -1 or (ndim is not None and axis == ndim - 1):
        return ("axis", -1, None, size)
    return None


def size_arguments(node) -> list:
    """The size expressions a call takes (`torch.zeros(n, h)`, `x.view((n, h))`)."""
    sizes = [a.value for a in node.args if a.keyword is None and not a.star] if isinstance(node, ir.Call) else []
    if len(sizes) == 1 and isinstance(sizes[0], (ir.Tuple, ir.List)):
        sizes = list(sizes[0].elts)
    return sizes


def _factory(node) -> tuple | None:
    sizes = size_arguments(node)
    if not sizes or not fixed_size(sizes[0]):
        return None
    return ("axis", 0, len(sizes), expr_text(sizes[0]))


def _reshaped(node) -> tuple | None:
    sizes = size_arguments(node)
    if len(sizes) < 2 or not fixed_size(sizes[-1]) or int_value(sizes[-1]) is not None and int_value(sizes[-1]) < 0:
        return None
    return ("axis", -1, len(sizes), expr_text(sizes[-1]))


def argument(node: ir.Call, position: int, keyword: str):
    for a in node.args:
        if a.keyword == keyword:
            return a.value
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    return positional[position] if len(positional) > position else None


def int_value(e) -> int | None:
    if isinstance(e, ir.Const) and type(e.value) is int:
        return e.value
    if isinstance(e, ir.UnaryOp) and e.op == "-" and isinstance(e.operand, ir.Const) and type(e.operand.value) is int:
        return -e.operand.value
    return None


def fixed_size(e) -> bool:
    """An expression a forward does not rebind: attributes of `self`, integer constants
    and arithmetic on them."""
    if isinstance(e, ir.Const):
        return type(e.value) is int
    if isinstance(e, ir.Attribute):
        return isinstance(e.value, ir.Name) and e.value.id == "self" or (
            isinstance(e.value, ir.Attribute) and fixed_size(e.value))
    if isinstance(e, ir.BinOp):
        return e.op in ("+", "-", "*", "//") and fixed_size(e.left) and fixed_size(e.right)
    return False
