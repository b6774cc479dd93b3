"""Python builtins over graph values: `len`, `range`, `int`/`float`/`bool`, `min`/`max`,
`isinstance`, `list`/`tuple`, `abs`, `sum`, `any`/`all`, `round` (`math` in `number_math`),
`slice`, `enumerate`/`zip`/`reversed`, `map`, `filter` (`min`/`max` in `builtin_minmax`, zip and the
others over the rows of a dynamic axis in `graph_rows`)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import torch

from lowering.graph import Value
from lowering.numpy_arrays import NDArray
from lowering.errors import PythonException
from lowering.interp.builtin_minmax import python_minmax
from lowering.interp.graph_rows import (graph_enumerate, graph_reversed, graph_zip, refuse_python_iteration,
                                       rows_of)
from lowering.interp.python_state import has_varying_items
from lowering.interp.values import BoundUserMethod, Closure, GraphChoice, GraphRange, GraphRows, Stacked, TensorMethod

if TYPE_CHECKING:
    from lowering.interpreter import Interpreter


def _len(interp: Interpreter, args, kwargs):
    (x,) = args
    if isinstance(x, NDArray):
        if x.scalar or x.value.rank == 0:
            raise interp.error("len() of a 0-d NumPy array (eager raises)", construct="len",
                               hint="eager PyTorch raises here too for these inputs: fix the call")
        x = x.value
    if isinstance(x, Value):
        return interp.python_number(interp.g.size(x, 0))
    if isinstance(x, Stacked):
        return interp.python_number(interp.g.size(x.value, 0))
    if isinstance(x, (list, tuple)):
        return interp.list_length(x)  # a graph int64 when a graph region appended to it
    interp.check_memo_read(x, "len() of")
    return len(x)


def _range(interp: Interpreter, args, kwargs):
    if any(isinstance(a, Value) for a in args):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
        if isinstance(step, Value) and (step.rank != 0 or step.dtype.is_floating_point or step.dtype == torch.bool):
            raise interp.error("range() with a step that is not an integer (eager raises TypeError)",
                               construct="range", hint="pass an int step")
        if isinstance(step, int) and step == 0:
            raise interp.error("range() arg 3 must not be zero (eager raises ValueError)", construct="range",
                               hint="pass a step other than 0")
        return GraphRange(start, stop, step)  # a graph step (`range(0, rows, max_rows)`): its sign decides in the graph
    return range(*args)


def _scalar(kind):
    def convert(interp: Interpreter, args, kwargs):
        x = args[0] if args else 0
        if isinstance(x, NDArray):
            x = x.value
        if isinstance(x, Value):
            # int(t) / float(t) of a graph value stays in the graph as a 0-d tensor.
            if kind is bool:
                return interp.to_bool(x)
            scalar = x
            if scalar.rank not in (0, None):
                scalar = interp.g.op("Reshape", scalar, interp.g.shape_tensor([]))
            # float() of a size is a double, as Python's; of a tensor value, float32 as before.
            double = x in interp.python_numbers and kind is float
            number = interp.g.cast(scalar, torch.int64 if kind is int else torch.float64 if double else torch.float32)
            # A new Python number, never the tensor itself (`t += 1` stays in place on t).
            return interp.python_number(interp.fresh_copy(number) if number is x else number)
        if isinstance(x, torch.Tensor):
            return kind(x)
        if kind is bool and has_varying_items(x):
            return interp.test_value(x)  # not empty: whether it is, the graph decides
        return kind(*args, **kwargs)

    return convert


def _isinstance(interp: Interpreter, args, kwargs):
    obj, classes = args
    if isinstance(obj, NDArray):
        return isinstance(np.ones(()) if not obj.scalar else np.float32(0), classes)
    if isinstance(obj, Value) and obj in interp.python_numbers:
        # A number the graph holds (a dynamic size, `total += v` in a graph loop) is what
        # torch.export makes of it: a SymInt / SymFloat / SymBool, not an `int` and not a
        # tensor. Library code tests `isinstance(length, int)` to skip checks on such sizes.
        classes = classes if isinstance(classes, tuple) else (classes,)
        return any(isinstance(c, type) and issubclass(_symbolic_type(obj), c) for c in classes)
    if isinstance(obj, Value):
        classes = classes if isinstance(classes, tuple) else (classes,)
        return any(c is torch.Tensor or (isinstance(c, type) and issubclass(torch.Tensor, c)) for c in classes)
    return isinstance(obj, classes)


def _symbolic_type(number: Value) -> type:
    return torch.SymBool if number.dtype == torch.bool else torch.SymFloat if number.dtype.is_floating_point \
        else torch.SymInt


def _is_tensor(interp: Interpreter, args, kwargs):
    """`torch.is_tensor(obj)` is `isinstance(obj, torch.Tensor)`."""
    return _isinstance(interp, [*args, *kwargs.values(), torch.Tensor], {})


def _list(kind):
    def make(interp: Interpreter, args, kwargs):
        if args and isinstance(args[0], Value):
            return kind(interp.unpack(args[0], 0, True))
        if args and isinstance(args[0], Stacked):
            raise interp.error(f"{kind.__name__}() of a graph loop's appended values", construct="call",
                               hint="torch.stack(...) the list after the loop, or index the tensor")
        if args and isinstance(args[0], GraphRows):
            raise refuse_python_iteration(interp, f"{kind.__name__}() of")
        return kind(*args)

    return make


def _abs(interp: Interpreter, args, kwargs):
    if isinstance(args[0], NDArray):
        return interp.call(np.absolute, [args[0]], {})
    if isinstance(args[0], Value):
        result = interp.call_op("torch.abs", [args[0]], {})
        return interp.python_number(result) if args[0] in interp.python_numbers else result  # abs(float) is a float
    return abs(args[0])


def _iterating(kind):
    def make(interp: Interpreter, args, kwargs):
        return kind(*[list(interp.iterate(a)) if isinstance(a, Value) else a for a in args], **kwargs)

    return make


def _over_rows(graph_handler, kind):
    """zip / enumerate / reversed: over the rows of a dynamic axis a `GraphRows` (or the
    flipped tensor), else as Python iterates."""
    fallback = _iterating(kind)
    return lambda interp, args, kwargs: graph_handler(interp, args, kwargs, fallback)


def _zip_longest(interp: Interpreter, args, kwargs):
    """`itertools.zip_longest` of static sequences (ranges, tuples, ModuleLists, the rows of a
    static axis): as Python pairs them. Over a dynamic number of rows the lengths, and so
    where the fill value goes, are the run time's: `interp.iterate` refuses those."""
    if any(rows_of(a, interp) is not None for a in args):
        raise interp.error("itertools.zip_longest() over the rows of a dynamic axis: how many items it gives, and "
                           "where the fill value goes, is decided at run time", "pad the tensors to one length "
                           "and zip them, or iterate over a static sequence", construct="call")
    return itertools.zip_longest(*[list(interp.iterate(a)) for a in args], **kwargs)


def _sum(interp: Interpreter, args, kwargs):
    items = list(interp.iterate(args[0]))
    total = args[1] if len(args) > 1 else kwargs.get("start", 0)
    for item in items:
        total = interp.binop("+", total, item)
    return total


def _slice(interp: Interpreter, args, kwargs):
    """`slice(a, b)` only holds its bounds, graph values too: indexing with it is `x[a:b]`."""
    return slice(*args, **kwargs)


def _any_all(kind):
    """`any(s < 16 for s in x.shape[-2:])` over graph values: their truth values joined
    with Or / And. A known item that decides (a true one for `any`) decides alone."""
    def join(interp: Interpreter, args, kwargs):
        items = list(interp.iterate(args[0]))
        if not any(isinstance(v, Value) for v in items):
            return kind(items)
        deciding = kind is any
        out = None
        for v in items:
            if not isinstance(v, Value):
                if interp.truth(v) is deciding:
                    return deciding
                continue
            b = interp.to_bool(v)
            out = b if out is None else interp.call_op("torch.logical_or" if deciding else "torch.logical_and", [out, b], {})
        return out

    return join


def _round(interp: Interpreter, args, kwargs):
    x = args[0]
    ndigits = args[1] if len(args) > 1 else kwargs.get("ndigits")
    if isinstance(x, Value):
        if ndigits is not None:
            raise interp.error("round(x, ndigits) of a graph value", construct="round",
                               hint="use torch.round(x * 10**n) / 10**n")
        # Python's round() is round-half-even and returns an int, as ONNX Round does.
        result = interp.g.cast(interp.call_op("torch.round", [interp.g.cast(x, torch.float32)], {}), torch.int64)
        return interp.python_number(result) if x in interp.python_numbers else result
    return round(*args, **kwargs)


def _callable(interp: Interpreter, args, kwargs):
    (x,) = args
    return isinstance(x, (Closure, BoundUserMethod, TensorMethod, GraphChoice)) or callable(x)


def _hasattr(interp: Interpreter, args, kwargs):
    obj, name = args
    if isinstance(obj, Value):
        return hasattr(torch.Tensor, name)  # what a tensor has, whatever its values
    try:
        interp.attribute(obj, name)
    except PythonException as exc:
        if isinstance(exc.exception, AttributeError):
            return False
        raise
    return True


def _type(interp: Interpreter, args, kwargs):
    if len(args) != 1 or kwargs:
        return type(*args, **kwargs)
    return torch.Tensor if isinstance(args[0], Value) else type(args[0])


def _iter(interp: Interpreter, args, kwargs):
    if len(args) == 1 and isinstance(args[0], (list, tuple)) and has_varying_items(args[0]):
        raise interp.refuse_varying_list(args[0], "iter()")  # its items are not Python's to hand out one by one
    if len(args) == 1 and isinstance(args[0], (list, tuple, dict)):
        return iter(args[0])  # a Python container holding tensors: its items, as Python iterates them
    if args and isinstance(args[0], GraphRows):
        raise refuse_python_iteration(interp, "iter() of")
    if any(isinstance(a, (Value, NDArray)) for a in args):
        raise interp.error("iter() of a tensor", "iterate over `t.unbind(0)` or index the rows", construct="call")
    return iter(*args)


def _map(interp: Interpreter, args, kwargs):
    """`map(f, *iterables)`: `f` called on the items as Python calls it, by the interpreter
    when `f` is forward's own (a lambda, a nested def, a method) or an item is a graph
    value (`q, k, v = map(lambda t: rearrange(t, ...), qkv)`). The calls are made at once,
    in order: Python makes them as the result is consumed, which differs only when the
    consumer changes what `f` reads between items."""
    if kwargs or len(args) < 2:
        return map(*args, **kwargs)  # raises the TypeError Python raises
    func, *iterables = args
    if not isinstance(func, (Closure, BoundUserMethod, TensorMethod, GraphChoice)) and not interp._has_graph(args, {}):
        return map(func, *iterables)  # static Python
    columns = [interp.iterate(a) for a in iterables]
    return iter([interp.call(func, list(items), {}) for items in zip(*columns)])


def _filter(interp: Interpreter, args, kwargs):
    """`filter(f, iterable)`: `f` called on the items as `map` does (`_map`); which items
    are kept must be known at export time (a filter on tensor values is refused by
    `static_truth`, naming it)."""
    if kwargs or len(args) != 2:
        return filter(*args, **kwargs)  # raises the TypeError Python raises
    func, iterable = args
    if not isinstance(func, (Closure, BoundUserMethod, TensorMethod, GraphChoice)) and not interp._has_graph(args, {}):
        return filter(func, iterable)  # static Python
    items = list(interp.iterate(iterable))
    tests = items if func is None else [interp.call(func, [x], {}) for x in items]
    return iter([x for x, t in zip(items, tests) if interp.static_truth(t, "the test of `filter()`")])


def _super(interp: Interpreter, args, kwargs):
    """Zero-argument `super()`: the class comes from the method's `__class__` cell, the
    object from its first parameter, as Python's compiler arranges."""
    if args or kwargs:
        return super(*args, **kwargs)
    frame = interp.frames[-1].root() if interp.frames else None
    if frame is None or "__class__" not in frame.env or frame.first_param not in frame.env:
        raise interp.error("zero-argument `super()` outside a method defined in a class",
                           "call `super(Class, self)` with explicit arguments", construct="super")
    return super(frame.env["__class__"], frame.env[frame.first_param])


def _next(interp: Interpreter, args, kwargs):
    if args and isinstance(args[0], (Value, NDArray, Stacked, GraphRows)):
        raise interp.error("next() of a tensor", "iterate over `t.unbind(0)` or index the rows", construct="next")
    return next(*args)


def _pow(interp: Interpreter, args, kwargs):
    """`pow(a, b)` is `a ** b`; with a modulus, Python's on Python ints only."""
    if len(args) == 2 and not kwargs:
        return interp.binop("**", *args)
    if interp._has_graph(args, kwargs):
        raise interp.error("pow(a, b, mod) of a tensor value", "write `(a ** b) % mod`", construct="pow")
    return pow(*args, **kwargs)


def _divmod(interp: Interpreter, args, kwargs):
    a, b = args
    if isinstance(a, Value) and a not in interp.python_numbers or isinstance(b, Value) and b not in interp.python_numbers:
        raise interp.error("divmod() of a tensor (eager raises: tensors have no __divmod__)",
                           "write `(a // b, a % b)`", construct="divmod")
    if isinstance(a, Value) or isinstance(b, Value):
        return interp.binop("//", a, b), interp.binop("%", a, b)  # of Python numbers the graph holds
    return divmod(a, b)


def _dict(interp: Interpreter, args, kwargs):
    """`dict(...)` only arranges its arguments: tensors may be its values, not its keys."""
    made = dict(*args, **kwargs)
    for key in made:
        interp.check_key(made, key)
    return made


_BUILTIN_HANDLERS = {
    round: _round, sum: _sum, slice: _slice, torch.sym_min: python_minmax(min), torch.sym_max: python_minmax(max),
    enumerate: _over_rows(graph_enumerate, enumerate), zip: _over_rows(graph_zip, zip),
    reversed: _over_rows(graph_reversed, reversed), itertools.zip_longest: _zip_longest,
    len: _len, range: _range, int: _scalar(int), float: _scalar(float), bool: _scalar(bool),
    max: python_minmax(max), min: python_minmax(min), isinstance: _isinstance, list: _list(list), tuple: _list(tuple),
    abs: _abs, any: _any_all(any), all: _any_all(all), super: _super, callable: _callable, hasattr: _hasattr,
    type: _type, iter: _iter, next: _next, pow: _pow, divmod: _divmod, dict: _dict, map: _map, filter: _filter,
    torch.is_tensor: _is_tensor,
}
