"""Masks made from indices: tril / triu (the triangle below or above a diagonal kept) and
one_hot (one class marked per index)."""

from __future__ import annotations

import math
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import check_out, require_value
from lowering.ops.registry import register
from lowering.ops.shape import (
    int_arg,
    known_rank,
)


# ---------------------------------------------------------------------------- tril / triu


def _trilu(g: GraphBuilder, input: Any, diagonal: Any, upper: int, name: str) -> Value:
    x = require_value(g, input, name)
    if known_rank(g, x, name) < 2:
        raise g.error(f"{name}: input tensor must have at least 2 dimensions (torch raises)")
    k = int_arg(g, diagonal, name, "diagonal")
    k_v = g.const(k, torch.int64) if isinstance(k, int) else k
    if x.dtype in (torch.int64, torch.float32, torch.float64, torch.bool, torch.int32, torch.float16):
        return g.op("Trilu", x, k_v, upper=upper)
    return g.cast(g.op("Trilu", g.cast(x, torch.int64), k_v, upper=upper), x.dtype)


@register("torch.tril", "Tensor.tril", "Tensor.tril_")
def tril(g, input, diagonal=0, *, out=None):
    """tril(Tensor self, int diagonal=0) -> Tensor"""
    check_out(g, out, "tril")
    return _trilu(g, input, diagonal, 0, "tril")


@register("torch.triu", "Tensor.triu", "Tensor.triu_")
def triu(g, input, diagonal=0, *, out=None):
    """triu(Tensor self, int diagonal=0) -> Tensor"""
    check_out(g, out, "triu")
    return _trilu(g, input, diagonal, 1, "triu")


# ---------------------------------------------------------------------------- one_hot


@register("torch.nn.functional.one_hot")
def one_hot(g, tensor, num_classes=-1):
    """one_hot(Tensor self, int num_classes=-1) -> Tensor  (int64)"""
    x = require_value(g, tensor, "one_hot")
    if x.dtype != torch.int64:
        raise g.error("one_hot is only applicable to index tensor of type LongTensor (torch raises)")
    n = int_arg(g, num_classes, "one_hot", "num_classes")
    if isinstance(n, int) and n == -1:
        if x.static_shape is not None and math.prod(x.static_shape) == 0:
            raise g.error("one_hot: can not infer total number of classes from empty tensor (torch raises)")
        depth: Value = g.op("Add", g.reduce("ReduceMax", x, None, False), g.const(1, torch.int64))
    elif isinstance(n, int):
        if n < -1:
            raise g.error("one_hot: num_classes should be positive (torch raises)")
        depth = g.const(n, torch.int64)
    else:
        depth = n
    classes = g.op("Range", g.const(0, torch.int64), depth, g.const(1, torch.int64))
    return g.cast(g.op("Equal", g.unsqueeze(x, [-1]), classes), torch.int64)

