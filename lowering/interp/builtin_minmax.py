"""Python's `max` / `min` (and `torch.sym_max` / `torch.sym_min`) over graph values.

Python's `max` keeps the first item and replaces it by each later one that is greater
(`min`: smaller), so its result is always one of its arguments, unchanged: with a NaN,
`max(nan, 1)` is nan and `max(1, nan)` is 1, and `max(0.0, -0.0)` is 0.0. ONNX `Max` /
`Min` decide those otherwise (and take fewer dtypes), so the result is built as Python
builds it, one `Where(item > best, item, best)` per item.

Which argument is returned depends on the data, so their types must not:

- Python numbers only (sizes, `int(t)` of a tensor, constants): a Python number, as before.
- 0-d tensors of one dtype: that tensor.
- 0-d int64 tensors with Python ints (`max(box[0], 0)` in torchvision): the int64
  tensor, which every later operation treats as it treats the Python int.

Otherwise eager returns a tensor of one dtype or a number (or tensors of two dtypes)
depending on the values, and what later operations make of it differs: refused. So are
tensors that are not 0-d (eager raises for more than one element, and the result's shape
would depend on which argument is returned), `max(t)` over a dynamic axis, and `key=` /
`default=` with graph values."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from lowering.graph import Value

if TYPE_CHECKING:
    from lowering.interpreter import Interpreter


def _is_number(interp: Interpreter, v) -> bool:
    """Whether eager holds `v` as a Python number (not a tensor)."""
    return v in interp.python_numbers if isinstance(v, Value) else isinstance(v, (int, float))


def _items(interp: Interpreter, name: str, args) -> list:
    if len(args) != 1:
        return list(args)
    (iterable,) = args
    if isinstance(iterable, Value):
        if iterable.rank == 0:
            raise interp.error(f"{name}() of a 0-d tensor (eager raises: iteration over a 0-d tensor)",
                               f"use torch.{name}(t) or pass several values", construct="call")
        if isinstance(interp.g.size(iterable, 0), Value):
            raise interp.error(f"{name}() over the elements of a tensor whose first axis is dynamic",
                               f"use torch.{name}(t) or t.{name}()", construct="call")
    return list(interp.iterate(iterable))


def _check_types(interp: Interpreter, name: str, values: list) -> bool:
    """Whether the result is a Python number; refuses types that depend on the data."""
    tensors = [v for v in values if isinstance(v, Value) and not _is_number(interp, v)]
    if not tensors:
        return True
    others = [v for v in values if not any(v is t for t in tensors)]
    if any(t.rank != 0 for t in tensors):
        raise interp.error(f"{name}() of a tensor that is not 0-d: eager raises for more than one element, and "
                           "the result's shape would depend on which argument is returned",
                           f"use torch.{name}imum(a, b) for elementwise {name}ima", construct="call")
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise interp.error(f"{name}() of tensors of dtypes {sorted(map(str, dtypes))}: eager returns one of them, "
                           "so the result's dtype would depend on the values",
                           f"cast them to one dtype, or use torch.{name}imum(a, b)", construct="call")
    (dtype,) = dtypes
    ints = all(isinstance(v, (bool, int)) or isinstance(v, Value) and not v.dtype.is_floating_point for v in others)
    if others and not (dtype == torch.int64 and ints):
        raise interp.error(f"{name}() of a {dtype} tensor and a Python number: eager returns the tensor or the "
                           "number depending on the values, and later operations treat the two differently",
                           f"make every argument a tensor of one dtype (torch.as_tensor), or use "
                           f"torch.{name}imum(a, b)", construct="call")
    return False


def _graph_args(args) -> bool:
    if any(isinstance(a, Value) for a in args):
        return True
    return len(args) == 1 and isinstance(args[0], (list, tuple)) and any(isinstance(v, Value) for v in args[0])


def python_minmax(kind):
    name = kind.__name__
    compare = "operator.gt" if kind is max else "operator.lt"

    def pick(interp: Interpreter, args, kwargs):
        if not _graph_args(args) and not interp._has_graph(args, kwargs):
            return kind(*args, **kwargs)
        if kwargs:
            raise interp.error(f"{name}() with {', '.join(f'{k}=' for k in kwargs)} over graph values",
                               "compute the key with tensor operations and pick with torch.where", construct="call")
        values = _items(interp, name, args)
        if not values:
            raise interp.error(f"{name}() of an empty sequence (eager raises)", construct="call")
        number = _check_types(interp, name, values)
        if number and any(isinstance(v, float) or isinstance(v, Value) and v.dtype.is_floating_point for v in values):
            values = [interp.g.cast(interp.as_graph(v), torch.float64) for v in values]  # a Python float is a double
        best = values[0]
        for v in values[1:]:
            a, b = interp.g.promote(interp.as_graph(best), interp.as_graph(v))
            # Python replaces the best so far only by a greater (smaller) item.
            best = interp.call_op("torch.where", [interp.call_op(compare, [b, a], {}), b, a], {})
        if number:
            interp.python_number(best)  # min(h, w) of sizes is a Python number too
        interp.merge_aliases(best, values, f"`{name}()` at line {interp.location[1]}")  # eager returns one of them
        return best

    return pick
