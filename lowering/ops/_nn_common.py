"""Helpers shared by the ``torch.nn`` lowerings (``modules``, ``convolution``, ``pooling``,
``normalization``, ``resize``, ``attention``, ``dropout``, ``distance``).

Function lowerings of other families are called through the registry (``_call``), so
opset variants and user overrides apply.  Training mode is refused where it changes the
result or mutates buffers (dropout with ``p > 0``, batch norm updating running
statistics, ...): ``_refuse_training``'s message says to call ``model.eval()``.  ``F.*``
forms with ``training=False`` (or no running statistics to update) are lowered.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import require_value
from lowering.ops.registry import ModuleCall, lookup
from lowering.ops.shape import known_rank, reshape

# ---------------------------------------------------------------------------- helpers


def _call(g: GraphBuilder, qualname: str, *args: Any, **kwargs: Any) -> Any:
    """The registered lowering of ``qualname`` at the target opset, called."""
    fn = lookup(qualname, g.opset)
    if fn is None:
        raise g.error(f"{qualname} has no lowering at opset {g.opset}")
    return fn(g, *args, **kwargs)


def _float_input(g: GraphBuilder, x: Any, name: str, what: str = "input") -> Value:
    v = require_value(g, x, name, what)
    if not is_float(v.dtype):
        raise g.error(
            f"{name} of a {v.dtype} {what} is not supported: the ONNX op is defined for floating point only",
            hint=f"cast the {what} to float32 first",
        )
    return v


def _ntuple(g: GraphBuilder, v: Any, n: int, name: str, what: str) -> list[int]:
    if isinstance(v, (list, tuple, torch.Size)):
        items = list(v)
        if len(items) == 1:
            items = items * n
    else:
        items = [v] * n
    if len(items) != n:
        raise g.error(f"{name}: {what} must be an int or a tuple of {n} ints, got {v!r}")
    out = []
    for e in items:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)):
            raise g.error(f"{name}: {what} must be Python ints known at export time, got {v!r}")
        out.append(int(e))
    return out


def _batched(g: GraphBuilder, x: Value, nsp: int, name: str) -> tuple[Value, bool]:
    """``x`` with a batch dim (unbatched inputs get one), and whether it was added."""
    rank = known_rank(g, x, name)
    if rank == nsp + 2:
        return x, False
    if rank == nsp + 1:
        return g.unsqueeze(x, [0]), True
    raise g.error(f"{name}: expected a {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input, got {rank}D (torch raises)")


def _with_rank(v: Value, rank: int) -> Value:
    """``v`` with its rank recorded when ONNX inference could not give its shape (a
    Conv whose weight dims are symbolic, ...)."""
    return v if v.shape is not None else dataclasses.replace(v, shape=(None,) * rank)


def _unbatch(g: GraphBuilder, y: Value, added: bool) -> Value:
    return g.squeeze(y, [0]) if added else y


def _channels(x: Value) -> int | None:
    d = x.shape[1] if x.shape is not None and len(x.shape) > 1 else None
    return d if isinstance(d, int) else None


def _ones_like_channels(g: GraphBuilder, x: Value, value: float) -> Value:
    """A 1-d tensor of x.shape[1] entries filled with ``value`` (x's dtype)."""
    c = _channels(x)
    if c is not None:
        return g.const(torch.full((c,), value, dtype=x.dtype))
    from lowering.ops._common import fill

    return fill(g, g.op("Shape", x, start=1, end=2), value, x.dtype)


def _channel_view(g: GraphBuilder, v: Value, rank: int) -> Value:
    """A per-channel 1-d tensor shaped to broadcast against an (N, C, ...) tensor."""
    return reshape(g, v, [-1] + [1] * (rank - 2))


def _refuse_training(g: GraphBuilder, mod: ModuleCall, what: str) -> None:
    if mod.module.training:
        raise g.error(
            f"{type(mod.module).__name__} at {mod.path or '<root>'} is in training mode: {what}",
            hint="call model.eval() before exporting",
        )


def _child(mod: ModuleCall, name: str, child: torch.nn.Module) -> ModuleCall:
    return ModuleCall(child, mod.name(name), mod.graph, mod.replaced)
