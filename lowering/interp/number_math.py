"""`math` functions and the methods of Python numbers, on numbers the graph holds.

A size of a dynamic axis, `len(x)`, `n / w`, `float(t)` are Python numbers of eager code
that the interpreter holds as 0-d graph values (`python_numbers`). Eager code calls the
`math` module and the number's own methods on them; each has Python's result type:

- `math.sqrt`, `exp`, `log` (with a base too), `log2`, `log10`, `pow`, `fabs`, `sin`, ...
  return a float (a double in the graph, as Python's float is), whatever the argument's type;
- `math.ceil`, `floor`, `trunc` return an int (int64), `math.isclose`, `isfinite`,
  `isinf`, `isnan` a bool, `math.prod` Python's `*` over the items;
- `f.is_integer()` of a float is whether it is finite and whole; `conjugate()` is the
  number itself; `int.is_integer()` exists from Python 3.12 only, as in eager.

`math` computes in double precision; so does the graph (a float32 number is widened first,
as Python widens a float32 tensor's `__float__`). A one-element tensor passed to `math`
is taken as Python takes it, through `__float__`. Where eager raises (`math.sqrt(-1.0)`,
`math.log(0)`), the graph gives NaN or -inf: eager has no result there to match. What is
not covered (`math.gcd`, `bit_length`, `as_integer_ratio`, ...) is refused by name.
"""

from __future__ import annotations

import math

import torch

from lowering.graph import Value

_FLOAT_UNARY = {
    math.sqrt: "Sqrt", math.exp: "Exp", math.log2: None, math.log10: None, math.fabs: "Abs",
    math.sin: "Sin", math.cos: "Cos", math.tan: "Tan", math.atan: "Atan", math.tanh: "Tanh",
    math.degrees: None, math.radians: None,
}
_INT_ROUNDING = {math.ceil: "Ceil", math.floor: "Floor", math.trunc: None}
_PREDICATES = (math.isfinite, math.isinf, math.isnan)


def _number_type(interp, v: Value) -> type:
    """The Python type eager has for graph number `v`."""
    if v.dtype == torch.bool:
        return bool
    return float if v.dtype.is_floating_point else int


def _as_scalar(interp, x, name: str) -> Value:
    """`x` as a 0-d graph value, as `math` takes it (`__float__` / `__index__` of a tensor)."""
    if x.rank not in (0, None):
        if x.static_shape is not None and math.prod(x.static_shape) == 1:
            return interp.g.op("Reshape", x, interp.g.shape_tensor([]))
        raise interp.error(f"`math.{name}` of a tensor that may hold more than one element (eager raises unless it "
                           "holds exactly one)", "use the torch function (`torch.sqrt(t)`, ...) on tensors",
                           construct="math")
    return x


def _double(interp, x) -> Value:
    if isinstance(x, Value):
        return interp.g.cast(x, torch.float64)
    return interp.g.const(float(x), torch.float64)


def _float_result(interp, v: Value) -> Value:
    return interp.python_number(v)


def _log(interp, x: Value) -> Value:
    return interp.g.op("Log", _double(interp, x))


def math_call(interp, func, args, kwargs):
    """A `math` function of which an argument is a graph value; NotImplemented when `func`
    is not one of them."""
    name = getattr(func, "__name__", str(func))
    args = [_as_scalar(interp, a, name) if isinstance(a, Value) else a for a in args]
    g = interp.g
    if func in _INT_ROUNDING and len(args) == 1 and not kwargs:
        (x,) = args
        if _number_type(interp, x) is not float:
            result = g.cast(x, torch.int64)
            # a new Python int, never the tensor itself (`t += 1` stays in place on t)
            return interp.python_number(interp.fresh_copy(result) if result is x else result)
        op = _INT_ROUNDING[func]
        if op is None:  # trunc: toward zero
            x = _double(interp, x)
            rounded = g.op("Where", g.op("Less", x, g.const(0.0, torch.float64)), g.op("Ceil", x), g.op("Floor", x))
        else:
            rounded = g.op(op, _double(interp, x))
        return interp.python_number(g.cast(rounded, torch.int64))
    if func in _FLOAT_UNARY and len(args) == 1 and not kwargs:
        x = _double(interp, args[0])
        op = _FLOAT_UNARY[func]
        if op is not None:
            return _float_result(interp, g.op(op, x))
        if func is math.log2:
            return _float_result(interp, g.op("Div", g.op("Log", x), g.const(math.log(2.0), torch.float64)))
        if func is math.log10:
            return _float_result(interp, g.op("Div", g.op("Log", x), g.const(math.log(10.0), torch.float64)))
        if func is math.degrees:
            return _float_result(interp, g.op("Mul", x, g.const(180.0 / math.pi, torch.float64)))
        if func is math.radians:
            return _float_result(interp, g.op("Mul", x, g.const(math.pi / 180.0, torch.float64)))
    if func is math.log and len(args) in (1, 2) and not kwargs:
        if len(args) == 1:
            return _float_result(interp, _log(interp, args[0]))
        return _float_result(interp, g.op("Div", _log(interp, args[0]), _log(interp, args[1])))  # as Python divides
    if func is math.pow and len(args) == 2 and not kwargs:
        return _float_result(interp, g.op("Pow", _double(interp, args[0]), _double(interp, args[1])))
    if func in _PREDICATES and len(args) == 1 and not kwargs:
        x = _double(interp, args[0])
        if func is math.isnan:
            return g.op("IsNaN", x)
        if func is math.isinf:
            return g.op("IsInf", x)
        return g.op("Not", g.op("Or", g.op("IsNaN", x), g.op("IsInf", x)))
    if func is math.isclose:
        return _isclose(interp, args, kwargs)
    if func is math.prod and len(args) == 1:
        total = kwargs.get("start", 1)
        for item in interp.iterate(args[0]):
            total = interp.binop("*", total, item)
        return total
    raise interp.error(f"`math.{name}` of a number computed in the graph is not supported by untrace",
                       "compute it with torch operations on a tensor, or from static values", construct="math")


def _isclose(interp, args, kwargs):
    """Python's `math.isclose`: equal, or both finite and `|a-b| <= max(rel_tol * max(|a|, |b|), abs_tol)`."""
    if len(args) != 2 or set(kwargs) - {"rel_tol", "abs_tol"}:
        raise interp.error("math.isclose with these arguments", construct="math", hint="call math.isclose(a, b, ...)")
    rel_tol, abs_tol = kwargs.get("rel_tol", 1e-9), kwargs.get("abs_tol", 0.0)
    if isinstance(rel_tol, Value) or isinstance(abs_tol, Value):
        raise interp.error("math.isclose with tolerances computed in the graph", construct="math",
                           hint="pass the tolerances as Python numbers")
    g = interp.g
    a, b = (_double(interp, x) for x in args)
    diff = g.op("Abs", g.op("Sub", b, a))
    bound = g.op("Max", g.op("Mul", g.const(float(rel_tol), torch.float64), g.op("Max", g.op("Abs", a), g.op("Abs", b))),
                 g.const(float(abs_tol), torch.float64))
    infinite = g.op("Or", g.op("IsInf", a), g.op("IsInf", b))
    close = g.op("And", g.op("Not", infinite), g.op("LessOrEqual", diff, bound))
    return g.op("Or", g.op("Equal", a, b), close)


def is_math_function(func) -> bool:
    return getattr(func, "__module__", None) == "math" or func in _INT_ROUNDING or func in _FLOAT_UNARY


NUMBER_METHODS = ("is_integer", "conjugate", "__floor__", "__ceil__", "__trunc__")


def number_method(interp, v: Value, name: str, args, kwargs):
    """`n.name(*args)` of graph number `v`, as eager's int, float or bool has it."""
    kind = _number_type(interp, v)
    if not hasattr(kind, name):
        raise interp.error(f"`{kind.__name__}` has no method `{name}` (eager raises AttributeError on this number)",
                           construct="attribute", hint=f"call a method `{kind.__name__}` has")
    g = interp.g
    if name == "is_integer" and not args and not kwargs:
        if kind is not float:
            return True
        x = _double(interp, v)
        whole = g.op("Equal", g.op("Floor", x), x)  # NaN is never equal
        return g.op("And", whole, g.op("Not", g.op("IsInf", x)))
    if name == "conjugate" and not args and not kwargs:
        return v
    if name in ("__floor__", "__ceil__", "__trunc__") and not args and not kwargs:
        func = {"__floor__": math.floor, "__ceil__": math.ceil, "__trunc__": math.trunc}[name]
        return math_call(interp, func, [v], {})
    raise interp.error(f"`{kind.__name__}.{name}` of a number computed in the graph is not supported by untrace",
                       "compute it with torch operations, or from static values", construct="call")
