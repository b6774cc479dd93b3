"""softmax / log_softmax / softmin (torch's and F's), in a floating dtype."""

from __future__ import annotations

from typing import Any

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import normalize_dim, require_value
from lowering.ops.registry import register


# ---------------------------------------------------------------------------- softmax


def _softmax(g: GraphBuilder, op_type: str, input, dim, dtype, name: str) -> Value:
    x = require_value(g, input, name)
    if dtype is not None:
        x = g.cast(x, dtype)
    if not is_float(x.dtype):
        raise g.error(f"{name} of a {x.dtype} tensor is not implemented in torch", hint="pass dtype=torch.float32")
    d = normalize_dim(g, dim, x.rank, name)
    if x.rank == 0:
        return g.squeeze(g.op(op_type, g.unsqueeze(x, [0]), axis=0), [0])
    return g.op(op_type, x, axis=d)


def _implicit_softmax_dim(g: GraphBuilder, x: Any, name: str) -> int:
    # torch.nn.functional._get_softmax_dim (deprecated implicit choice)
    rank = require_value(g, x, name).rank
    if rank is None:
        raise g.error(f"{name} without dim needs the input rank")
    return 0 if rank in (0, 1, 3) else 1


@register("torch.softmax", "Tensor.softmax", "torch.special.softmax")
def softmax(g, input, dim, dtype=None):
    """softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    return _softmax(g, "Softmax", input, dim, dtype, "softmax")


@register("torch.log_softmax", "Tensor.log_softmax", "torch.special.log_softmax")
def log_softmax(g, input, dim, dtype=None):
    """log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    return _softmax(g, "LogSoftmax", input, dim, dtype, "log_softmax")


@register("torch.nn.functional.softmax")
def f_softmax(g, input, dim=None, _stacklevel=3, dtype=None):
    """softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor"""
    if dim is None:
        dim = _implicit_softmax_dim(g, input, "softmax")
    return _softmax(g, "Softmax", input, dim, dtype, "softmax")


@register("torch.nn.functional.log_softmax")
def f_log_softmax(g, input, dim=None, _stacklevel=3, dtype=None):
    """log_softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor"""
    if dim is None:
        dim = _implicit_softmax_dim(g, input, "log_softmax")
    return _softmax(g, "LogSoftmax", input, dim, dtype, "log_softmax")


@register("torch.nn.functional.softmin")
def softmin(g, input, dim=None, _stacklevel=3, dtype=None):
    """softmin(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor"""
    x = require_value(g, input, "softmin")
    if dim is None:
        dim = _implicit_softmax_dim(g, x, "softmin")
    if dtype is not None:
        x = g.cast(x, dtype)
    if not is_float(x.dtype):
        raise g.error(f"softmin of a {x.dtype} tensor is not implemented in torch")
    return _softmax(g, "Softmax", g.op("Neg", x), dim, None, "softmin")

