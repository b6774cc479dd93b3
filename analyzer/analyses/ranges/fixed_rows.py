"""Tensors whose number of rows (first dimension) the model fixes (`values.FIXED_ROWS`):
iterating one runs that many times for every input, so it is no tensor iteration (UT105).

    hidden = ()
    for layer in self.layers:                   # a ModuleList: as many passes as layers
        x = layer(x)
        hidden += (x,)
    stacked = torch.stack(hidden)               # one row per layer
    classes = self.class_predictor(stacked)     # nn.Linear: the leading dimensions kept
    masks = torch.einsum("lbqc, bchw -> lbqhw", self.mask_embedder(stacked), pixels)
    for aux_masks, aux_classes in zip(masks[:-1], classes[:-1]): ...

Made by `torch.arange(n)` / `torch.randperm(n)` of an `n` the model fixes, and by
`torch.stack` along dimension 0 of a sequence whose length the analysis takes for static
(a tuple grown once per layer, an attribute of a model output): not one whose items are
a tensor's rows (`list(x)`, `[r for r in x]`, `x.unbind(0)`, what a loop over them
grows) or the pieces of a split (`x.split(1)`), whose iteration is the finding. Kept by a layer that keeps the leading dimensions (`nn.Linear`, norms,
activations, dropout), by a slice of the first dimension with bounds the code writes as
constants (`masks[:-1]`), and by an `einsum` whose output starts with the first index of
such an operand."""

from __future__ import annotations

from analyzer.analyses.kinds.values import FIXED_ROWS, ROWS, SPLIT_PIECES, STATIC, Value, is_setting
from analyzer.frontend import ir

# `nn` layers whose output keeps the leading dimensions of their input.
LEADING_DIMS_MODULES = frozenset("torch.nn." + name for name in (
    "Linear", "LayerNorm", "RMSNorm", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Identity",
    "ReLU", "ReLU6", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LeakyReLU", "ELU", "Mish",
    "Hardswish", "Hardsigmoid", "Softplus", "PReLU",
))


def is_fixed(v: Value | None) -> bool:
    return v is not None and v.type == "tensor" and v.origin == FIXED_ROWS


def stacked(args, arg_nodes) -> bool:
    """`torch.stack(seq)` (along dimension 0) of a sequence whose length the model fixes."""
    if not args or any(a.keyword == "dim" or a.star for a in arg_nodes) or len(arg_nodes) > 1:
        return False
    seq = args[0]
    if seq.type == "container":
        items = seq.elem
        return (max(seq.level, seq.ctl) == STATIC and seq.ref not in (ROWS, SPLIT_PIECES)
                and not (items is not None and items.origin == "row"))
    return is_setting(seq) and max(seq.level, seq.ctl, seq.elem.level) == STATIC


def kept_by_module(cls: str, args) -> bool:
    return cls in LEADING_DIMS_MODULES and bool(args) and is_fixed(args[0])


def kept_by_slice(base: Value, index_node) -> bool:
    """`t[:-1]`, `t[1:]`, `t[:2, ...]` of a tensor with fixed rows."""
    first = index_node.elts[0] if isinstance(index_node, ir.Tuple) and index_node.elts else index_node
    return is_fixed(base) and isinstance(first, ir.Slice) and all(
        _constant(b) for b in (first.lower, first.upper, first.step))


def kept_by_einsum(args, arg_nodes) -> bool:
    """`torch.einsum("lbqc, bchw -> lbqhw", a, b)` with `a` of fixed rows."""
    equation = arg_nodes[0].value if arg_nodes else None
    if not (isinstance(equation, ir.Const) and isinstance(equation.value, str) and "->" in equation.value):
        return False
    inputs, output = equation.value.replace(" ", "").split("->", 1)
    operands = inputs.split(",")
    if not output or not output[0].isalpha() or len(operands) != len(args) - 1:
        return False
    return any(term[:1] == output[0] and is_fixed(v) for term, v in zip(operands, args[1:]))


def _constant(bound) -> bool:
    if bound is None or (isinstance(bound, ir.Const) and isinstance(bound.value, int)):
        return True
    return isinstance(bound, ir.UnaryOp) and bound.op == "-" and isinstance(bound.operand, ir.Const) \
        and isinstance(bound.operand.value, int)
