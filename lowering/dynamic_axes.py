"""`export(dynamic_shapes=...)`: which axes of which inputs stay symbolic, checked against
forward's parameters and the example arguments before anything is lowered.

The layout is torch.export's. At the top, a dict keyed by forward's parameter names (or a
tuple/list with one spec per parameter, in order). For a tensor, `{axis: symbol}` or a
tuple/list with one entry per axis (None: static); for a list or tuple of tensors, a list
or tuple with one spec per item (`{"images": [{1: "h0", 2: "w0"}, {1: "h1", 2: "w1"}]}`);
for a dict, a dict with a spec per key; None anywhere means all static. A symbol is a
string, or a `torch.export.Dim` (its name is used).

A spec that names no parameter, has the wrong structure for its argument, or an axis out
of range is refused with a LoweringError, as torch.export refuses it: ignored, it would
leave the graph silently static.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.errors import LoweringError


def by_parameter(dynamic_shapes: Any, arguments: dict[str, Any], owner: str) -> dict[str, Any]:
    """{parameter: normalised spec}: for each tensor {axis (non-negative): symbol}."""
    if dynamic_shapes is None:
        return {}
    names = list(arguments)
    if isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(names):
            raise LoweringError(f"dynamic_shapes has {len(dynamic_shapes)} entries, but {owner} is given "
                                f"{len(names)} arguments ({', '.join(names)})")
        dynamic_shapes = dict(zip(names, dynamic_shapes))
    if not isinstance(dynamic_shapes, dict):
        raise LoweringError(f"dynamic_shapes must be a dict keyed by {owner}'s parameter names, got "
                            f"{type(dynamic_shapes).__name__}")
    unknown = [k for k in dynamic_shapes if k not in arguments]
    if unknown:
        raise LoweringError(f"dynamic_shapes names {', '.join(map(repr, unknown))}, which {owner} is not given "
                            f"(its arguments: {', '.join(names) or 'none'})")
    return {name: _spec(spec, arguments[name], name) for name, spec in dynamic_shapes.items()}


def _spec(spec: Any, value: Any, where: str) -> Any:
    if spec is None:
        return None
    if isinstance(value, torch.Tensor):
        return _tensor_axes(spec, value, where)
    if isinstance(value, (tuple, list)):
        if not isinstance(spec, (tuple, list)) or len(spec) != len(value):
            raise LoweringError(f"dynamic_shapes[{where}] must be a list of {len(value)} specs, one per item of the "
                                f"{type(value).__name__} argument, got {spec!r}")
        return [_spec(s, v, f"{where}[{i}]") for i, (s, v) in enumerate(zip(spec, value))]
    if isinstance(value, dict):
        if not isinstance(spec, dict) or any(k not in value for k in spec):
            raise LoweringError(f"dynamic_shapes[{where}] must be a dict keyed by the argument's keys "
                                f"({', '.join(map(repr, value))}), got {spec!r}")
        return {k: _spec(s, value[k], f"{where}[{k!r}]") for k, s in spec.items()}
    raise LoweringError(f"dynamic_shapes[{where}] gives axes for a {type(value).__name__} argument, which has none")


def _tensor_axes(spec: Any, value: torch.Tensor, where: str) -> dict[int, str]:
    if isinstance(spec, (tuple, list)):
        if len(spec) != value.dim():
            raise LoweringError(f"dynamic_shapes[{where}] has {len(spec)} entries for a tensor of rank {value.dim()}")
        spec = {axis: s for axis, s in enumerate(spec) if s is not None}
    if not isinstance(spec, dict):
        raise LoweringError(f"dynamic_shapes[{where}] must be {{axis: name}} for a tensor, got {spec!r}")
    axes: dict[int, str] = {}
    for axis, symbol in spec.items():
        rank = value.dim()
        if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
            raise LoweringError(f"dynamic_shapes[{where}]: axis {axis!r} is out of range for a tensor of rank {rank}")
        if symbol is None:
            continue
        axes[axis % rank] = symbol if isinstance(symbol, str) else getattr(symbol, "__name__", f"{where}_dim{axis}")
    return axes
