"""Tensor creation: zeros/ones/full/empty/arange/linspace/eye, their ``*_like`` and
``Tensor.new_*`` forms, and the random factories (refused).

Sizes may mix Python ints and 0-d graph ints (``x.shape[0]`` on a dynamic axis): a
fully static small result becomes a constant, anything else ``ConstantOfShape`` /
``Range`` / ``EyeLike`` over a shape computed in the graph -- a symbolic dim is never
baked into a constant.  ``empty*`` gives zeros (its contents are unspecified in torch).
Random factories are refused: no ONNX random op reproduces torch's generator.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import check_out, require_value
from lowering.ops.registry import register

_MAX_CONST_ELEMENTS = 1024


def _check_factory_kwargs(g: GraphBuilder, name: str, layout=None, **_ignored) -> None:
    if layout not in (None, torch.strided):
        raise g.error(f"{name}: layout {layout} is not supported")


def _sizes(g: GraphBuilder, size: tuple, name: str) -> list[int | Value] | Value:
    """``*size`` as torch takes it (varargs or one sequence): ints and 0-d graph ints,
    or one 1-d int64 shape value."""
    if len(size) == 1 and isinstance(size[0], (list, tuple, torch.Size)):
        size = tuple(size[0])
    if len(size) == 1 and isinstance(size[0], Value) and size[0].rank == 1:
        return g.cast(size[0], torch.int64)
    out: list[int | Value] = []
    for s in size:
        if isinstance(s, bool):
            raise g.error(f"{name}: a size must be an int, got {s!r}")
        if isinstance(s, int):
            if s < 0:
                raise g.error(f"{name}: negative dimension {s}")
            out.append(s)
        elif isinstance(s, Value) and s.rank == 0 and not is_float(s.dtype) and not is_bool(s.dtype):
            out.append(s)
        else:
            raise g.error(f"{name}: a size must be an int, got {s!r}")
    return out


def _scalar_dtype(value: Any) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, float):
        return torch.get_default_dtype()
    if isinstance(value, Value):
        if is_bool(value.dtype):
            return torch.bool
        return torch.get_default_dtype() if is_float(value.dtype) else torch.int64
    raise TypeError(value)


def filled(g: GraphBuilder, sizes: list[int | Value] | Value, value: Any, dtype: torch.dtype) -> Value:
    """A tensor of ``sizes`` filled with ``value`` (Python scalar or 0-d Value) as ``dtype``."""
    if isinstance(value, Value):
        if value.rank != 0:
            raise g.error("a fill value must be a number or a 0-d tensor")
        shape = sizes if isinstance(sizes, Value) else g.shape_tensor(sizes)
        return g.op("Expand", g.cast(value, dtype), shape)
    fill = torch.tensor(value).to(dtype)
    if isinstance(sizes, list) and all(isinstance(s, int) for s in sizes) and math.prod(sizes) <= _MAX_CONST_ELEMENTS:
        return g.const(torch.full(tuple(sizes), fill.item(), dtype=dtype))
    shape = sizes if isinstance(sizes, Value) else g.shape_tensor(sizes)
    from lowering.graph import _tensor_to_proto

    return g.op("ConstantOfShape", shape, value=_tensor_to_proto("value", fill.reshape(1)))


def _like_sizes(g: GraphBuilder, x: Value) -> list[int | Value] | Value:
    static = x.static_shape
    return list(static) if static is not None else g.shape_of(x)


# ---------------------------------------------------------------------------- factories


@register("torch.zeros")
def zeros(g, *size, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False, names=None):
    """zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    check_out(g, out, "zeros")
    _check_factory_kwargs(g, "zeros", layout)
    return filled(g, _sizes(g, size, "zeros"), 0, dtype or torch.get_default_dtype())


@register("torch.ones")
def ones(g, *size, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False, names=None):
    """ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    check_out(g, out, "ones")
    _check_factory_kwargs(g, "ones", layout)
    return filled(g, _sizes(g, size, "ones"), 1, dtype or torch.get_default_dtype())


@register("torch.empty")
def empty(g, *size, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False, memory_format=None, names=None):
    """empty(SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor  (zeros: contents are unspecified)"""
    check_out(g, out, "empty")
    _check_factory_kwargs(g, "empty", layout)
    return filled(g, _sizes(g, size, "empty"), 0, dtype or torch.get_default_dtype())


@register("torch.full")
def full(g, size, fill_value, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False, names=None):
    """full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    check_out(g, out, "full")
    _check_factory_kwargs(g, "full", layout)
    if not isinstance(fill_value, (bool, int, float, Value)):
        raise g.error(f"full: unsupported fill value {fill_value!r}")
    return filled(g, _sizes(g, (size,), "full"), fill_value, dtype or _scalar_dtype(fill_value))


@register("torch.scalar_tensor")
def scalar_tensor(g, s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """scalar_tensor(Scalar s, *, ScalarType? dtype=None, ...) -> Tensor  (float32 by default)"""
    dtype = dtype or torch.get_default_dtype()
    if isinstance(s, Value):
        return g.cast(s, dtype)
    return g.const(torch.tensor(s).to(dtype))


# ---------------------------------------------------------------------------- *_like


@register("torch.zeros_like")
def zeros_like(g, input, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False, memory_format=None):
    """zeros_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor"""
    x = require_value(g, input, "zeros_like")
    return filled(g, _like_sizes(g, x), 0, dtype or x.dtype)


@register("torch.ones_like")
def ones_like(g, input, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False, memory_format=None):
    """ones_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor"""
    x = require_value(g, input, "ones_like")
    return filled(g, _like_sizes(g, x), 1, dtype or x.dtype)


@register("torch.empty_like")
def empty_like(g, input, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False, memory_format=None):
    """empty_like(Tensor self, *, ScalarType? dtype=None, ...) -> Tensor  (zeros)"""
    x = require_value(g, input, "empty_like")
    return filled(g, _like_sizes(g, x), 0, dtype or x.dtype)


@register("torch.full_like")
def full_like(g, input, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False, memory_format=None):
    """full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    x = require_value(g, input, "full_like")
    return filled(g, _like_sizes(g, x), fill_value, dtype or x.dtype)


@register("Tensor.zero_")
def zero_(g, self):
    """Tensor.zero_(Tensor self) -> Tensor"""
    x = require_value(g, self, "zero_")
    return filled(g, _like_sizes(g, x), 0, x.dtype)


@register("Tensor.fill_")
def fill_(g, self, value):
    """Tensor.fill_(Tensor self, Scalar|Tensor value) -> Tensor"""
    x = require_value(g, self, "fill_")
    return filled(g, _like_sizes(g, x), value, x.dtype)


@register("Tensor.new_zeros")
def new_zeros(g, self, *size, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """Tensor.new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    x = require_value(g, self, "new_zeros")
    return filled(g, _sizes(g, size, "new_zeros"), 0, dtype or x.dtype)


@register("Tensor.new_ones")
def new_ones(g, self, *size, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """Tensor.new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor"""
    x = require_value(g, self, "new_ones")
    return filled(g, _sizes(g, size, "new_ones"), 1, dtype or x.dtype)


@register("Tensor.new_empty")
def new_empty(g, self, *size, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """Tensor.new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...) -> Tensor  (zeros)"""
    x = require_value(g, self, "new_empty")
    return filled(g, _sizes(g, size, "new_empty"), 0, dtype or x.dtype)


@register("Tensor.new_full")
def new_full(g, self, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """Tensor.new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, ...) -> Tensor"""
    x = require_value(g, self, "new_full")
    return filled(g, _sizes(g, (size,), "new_full"), fill_value, dtype or x.dtype)


@register("Tensor.new_tensor")
def new_tensor(g, self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Tensor.new_tensor(Tensor self, data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)
    -> Tensor  (self's dtype unless dtype= is given; a tensor argument is copied)"""
    from lowering.ops.cast import tensor

    x = require_value(g, self, "new_tensor")
    _check_factory_kwargs(g, "new_tensor", layout)
    return tensor(g, data, dtype=dtype or x.dtype)


@register("Tensor.new")
def new(g, self, *args, device=None):
    """Tensor.new(Tensor self, *sizes) -> Tensor  (legacy constructor: no argument gives an empty 1-d tensor, ints
    or a torch.Size an uninitialised tensor of that size -- zeros here, as empty; the data forms, a sequence or a
    tensor whose storage the result shares, are refused)"""
    x = require_value(g, self, "new")
    if not args:
        return g.const(torch.zeros(0, dtype=x.dtype))
    if len(args) == 1 and isinstance(args[0], torch.Size):
        args = tuple(args[0])
    elif any(isinstance(a, (list, tuple, float, torch.Tensor)) or (isinstance(a, Value) and a.rank != 0) for a in args):
        raise g.error(
            "Tensor.new(data): the legacy constructor's data forms (a sequence, or a tensor whose storage the result "
            "shares) are not supported",
            hint="use x.new_tensor(data) for a copy with x's dtype, or x.new_zeros(size) / x.new_empty(size) for a size",
        )
    return filled(g, _sizes(g, args, "new"), 0, x.dtype)


# ---------------------------------------------------------------------------- ranges


def _range_args(g: GraphBuilder, args: tuple, start, end, step) -> tuple[Any, Any, Any]:
    if len(args) > 3:
        raise g.error("arange takes at most start, end, step")
    if len(args) == 1 and end is None:
        end = args[0]
    elif len(args) >= 2:
        start, end = args[0], args[1]
        if len(args) == 3:
            step = args[2]
    elif len(args) == 1:
        start = args[0]
    return (0 if start is None else start), end, (1 if step is None else step)


@register("torch.arange")
def arange(g, *args, start=None, end=None, step=None, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """arange(Scalar start=0, Scalar end, Scalar step=1, *, ScalarType? dtype=None, ...) -> Tensor

    Bounds may be 0-d graph values (``x.shape[0]`` on a dynamic axis, a 0-d tensor).  The
    dtype is torch's: the default float dtype when a bound is a float (a Python float or a
    floating tensor), else int64.  Graph bounds are computed as ATen's CPU kernel does: see
    ``_graph_range``."""
    check_out(g, out, "arange")
    _check_factory_kwargs(g, "arange", layout)
    start, end, step = (int(b) if isinstance(b, bool) else b for b in _range_args(g, args, start, end, step))
    if end is None:
        raise g.error("arange: end is required")
    bounds = (start, end, step)
    for b in bounds:
        if not isinstance(b, (int, float, Value)) or isinstance(b, bool) or (isinstance(b, Value) and b.rank != 0):
            raise g.error(f"arange: bounds must be numbers or 0-d tensors, got {b!r}")
        if isinstance(b, Value) and (is_bool(b.dtype) or b.dtype.is_complex):
            raise g.error(f"arange: a {b.dtype} tensor as a bound is not supported", hint="cast it to int64 or float")
    if dtype is None:
        floating = any(isinstance(b, float) or (isinstance(b, Value) and is_float(b.dtype)) for b in bounds)
        dtype = torch.get_default_dtype() if floating else torch.int64
    if not any(isinstance(b, Value) for b in bounds):
        t = torch.arange(start, end, step, dtype=dtype)
        if t.numel() <= _MAX_CONST_ELEMENTS or is_float(dtype):
            return g.const(t)
        return g.op("Range", g.const(start, dtype), g.const(end, dtype), g.const(step, dtype))
    return _graph_range(g, start, end, step, dtype)


def _graph_range(g: GraphBuilder, start, end, step, dtype: torch.dtype) -> Value:
    """``arange`` over graph bounds, as ATen's ``arange_out`` and CPU kernel compute it.
    The bounds are first converted to the accumulation type (``acc_type<dtype>``: int64
    for integers, truncating toward zero; double for float32/64; float for float16 and
    bfloat16).  The length is ``ceil((end - start) / step)`` in double over the original
    values -- for int64 results over the truncated ones, in integer arithmetic, which is
    what ONNX Range over int64 computes -- and element i is ``start + step * i``.  A step
    of 0 or of the wrong sign raises in eager; here it gives an empty tensor."""
    if not (is_float(dtype) or dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)):
        raise g.error(f"arange with graph-valued bounds and dtype={dtype} is not supported",
                      hint="use an integer or floating dtype")

    def as_(b, dt):
        return g.const(b, dt) if not isinstance(b, Value) else g.cast(b, dt)

    if dtype == torch.int64:
        return g.op("Range", *(as_(int(b) if isinstance(b, float) else b, torch.int64) for b in (start, end, step)))
    f64 = [as_(b, torch.float64) for b in (start, end, step)]
    count = g.cast(g.op("Ceil", g.op("Div", g.op("Sub", f64[1], f64[0]), f64[2])), torch.int64)
    index = g.op("Range", g.const(0, torch.int64), g.op("Max", count, g.const(0, torch.int64)), g.const(1, torch.int64))
    if is_float(dtype):
        acc = torch.float64 if dtype in (torch.float32, torch.float64) else torch.float32
        first, stride = as_(start, acc), as_(step, acc)
        index = g.cast(index, acc)
    else:
        first, stride = (as_(int(b) if isinstance(b, float) else b, torch.int64) for b in (start, step))
    return g.cast(g.op("Add", first, g.op("Mul", stride, index)), dtype)


@register("torch.linspace")
def linspace(g, start, end, steps, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, ...) -> Tensor  |
    linspace.Tensor_Tensor(Tensor start, Tensor end, int steps, ...)

    The default float dtype unless dtype= is given, whatever the bounds.  start/end may be
    0-d graph values, and steps a graph int (``x.shape[0]``).  Computed as ATen's CPU
    kernel does: start and end converted to the result dtype (integers truncate), ``step =
    (end - start) / (steps - 1)`` in that dtype (in double for integer results), element i
    ``start + step * i`` in the first half (i < steps // 2) and ``end - step * (steps - 1 -
    i)`` in the second; steps == 1 gives [start].  float16/bfloat16 are computed in float32
    and rounded once (ATen rounds each operation)."""
    check_out(g, out, "linspace")
    _check_factory_kwargs(g, "linspace", layout)
    dtype = dtype or torch.get_default_dtype()
    for b in (start, end):
        if isinstance(b, Value) and b.rank != 0:
            raise g.error(f"linspace only supports 0-dimensional start and end tensors, but got a bound with "
                          f"{b.rank} dimension(s) (torch raises)")
        if not isinstance(b, (bool, int, float, Value)):
            raise g.error(f"linspace: start and end must be numbers or 0-d tensors, got {b!r}")
    if isinstance(steps, Value):
        if is_float(steps.dtype) or is_bool(steps.dtype) or steps.rank != 0:
            raise g.error(f"linspace: steps must be an int, got {steps!r}")
    elif isinstance(steps, bool) or not isinstance(steps, int):
        raise g.error(f"linspace: steps must be an int, got {steps!r}")
    elif steps < 0:
        raise g.error("linspace: number of steps must be non-negative (torch raises)")
    if not any(isinstance(b, Value) for b in (start, end, steps)):
        return g.const(torch.linspace(start, end, steps, dtype=dtype))
    if not (is_float(dtype) or dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)):
        raise g.error(f"linspace with graph-valued bounds and dtype={dtype} is not supported",
                      hint="use an integer or floating dtype")
    compute = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    step_dtype = compute if is_float(dtype) else torch.float64

    def bound(b):
        v = g.const(b, compute) if not isinstance(b, Value) else g.cast(b, compute)
        return g.cast(v, step_dtype)

    first, last = bound(start), bound(end)
    n = g.const(steps, torch.int64) if isinstance(steps, int) else g.cast(steps, torch.int64)
    index = g.op("Range", g.const(0, torch.int64), n, g.const(1, torch.int64))
    from_end = g.op("Sub", g.op("Sub", n, g.const(1, torch.int64)), index)
    stride = g.op("Div", g.op("Sub", last, first), g.cast(g.op("Sub", n, g.const(1, torch.int64)), step_dtype))
    low = g.op("Add", first, g.op("Mul", stride, g.cast(index, step_dtype)))
    high = g.op("Sub", last, g.op("Mul", stride, g.cast(from_end, step_dtype)))
    halfway = g.op("Div", n, g.const(2, torch.int64))
    values = g.op("Where", g.op("Less", index, halfway), low, high)
    # steps == 1: the one element is start (the formula would give end - nan * 0).
    values = g.op("Where", g.op("Equal", n, g.const(1, torch.int64)), first, values)
    return g.cast(values, dtype)


@register("torch.logspace")
def logspace(g, start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """logspace(Scalar start, Scalar end, int steps, float base=10.0, *, ScalarType? dtype=None, ...) -> Tensor  (constants only)"""
    check_out(g, out, "logspace")
    if any(isinstance(b, Value) for b in (start, end, steps, base)):
        raise g.error("logspace with graph-valued bounds is not supported")
    return g.const(torch.logspace(start, end, steps, base, dtype=dtype))


@register("torch.eye")
def eye(g, n, m=None, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """eye(SymInt n, SymInt? m=None, *, ScalarType? dtype=None, ...) -> Tensor"""
    check_out(g, out, "eye")
    dtype = dtype or torch.get_default_dtype()
    m = n if m is None else m
    dims = _sizes(g, (n, m), "eye")
    if all(isinstance(d, int) for d in dims) and n * m <= _MAX_CONST_ELEMENTS * 4:
        return g.const(torch.eye(n, m, dtype=dtype))
    work = dtype if dtype in (torch.float32, torch.float64, torch.int32, torch.int64) else torch.float32
    zeros = filled(g, dims, 0, work)
    return g.cast(g.op("EyeLike", zeros), dtype)


# ---------------------------------------------------------------------------- random (refused)


def _random(name: str):
    def refuse(g, *args, **kwargs):
        raise g.error(
            f"{name} draws random numbers; no ONNX graph reproduces torch's generator",
            hint="pass the random tensor in as an input, generate it outside forward(), or draw with "
                 "generator=torch.Generator().manual_seed(<seed>) created in forward, with a static shape "
                 "(a constant of the export)",
        )

    refuse.__name__ = name.rsplit(".", 1)[-1]
    refuse.__doc__ = f"{name}: refused (random)."
    refuse.__module__ = __name__
    return refuse


for _name in (
    "torch.rand",
    "torch.randn",
    "torch.randint",
    "torch.rand_like",
    "torch.randn_like",
    "torch.randint_like",
    "torch.randperm",
    "torch.bernoulli",
    "Tensor.bernoulli",
    "Tensor.bernoulli_",
    "torch.multinomial",
    "Tensor.multinomial",
    "torch.normal",
    "Tensor.normal_",
    "Tensor.uniform_",
    "Tensor.random_",
    "Tensor.exponential_",
    "torch.poisson",
):
    register(_name, refuses=True)(_random(_name))
del _name
