"""Value ranges: closed intervals of Python numbers and of the values of tensors, so that a
comparison with a constant that every reachable value answers the same way is static.

torchvision's AutoAugment draws a magnitude from a table of bins and hands it on:

    op_meta = {"Color": (torch.linspace(0.0, 0.9, num_bins), True), "Rotate": ..., ...}
    magnitudes, signed = op_meta[op_name]          # op_name is picked at random
    magnitude = float(magnitudes[i].item())        # the escape (UT201) is the finding
    if signed and torch.randint(2, (1,)):
        magnitude *= -1.0
    _apply_op(img, op_name, magnitude)             # `if op_name == "Color":` ...
        F.adjust_saturation(img, 1.0 + magnitude)  #   ... `if saturation_factor < 0:`

The factor is in [0.1, 1.9] whichever bin and sign were drawn, so the validity check
takes the same side for every input: no UT101.

`Value.interval` holds what is known, and nothing is the default (unbounded):

- `(lo, hi)`: every value is in [lo, hi] (either end may be infinite);
- `Keyed(on, cases, other)`: the range depends on a string key: `cases` maps each key to
  its range and `other` is the range for any other key (`EMPTY`: no other key exists).
  ``on`` is ``("dict", path, line, column)`` for the items of a dict display with constant
  string keys, and ``("name", path, function, name)`` once a dict was subscripted with the
  variable ``name``: the value's range is the case of whatever that variable holds (how
  such ranges flow is `keyed_ranges`);
- on a container from a dict display, `KeysOf(on)`: its items are keyed on ``on``.

Sources: int and float literals (given a range only where they meet a value that has one),
`torch.linspace(a, b, n)`, `torch.arange` of constants (of a constant start and any end:
from the start up), `torch.tensor(c)`, each widened by a relative 1e-5 (float32 values
round past the float ends; small integers are exact) and none with a `dtype` (an integer
dtype truncates `linspace(0.5, 0.9)` to 0). Kept through indexing a tensor, `.item()`,
`float()`, `int()`; computed by unary minus, `+ - *` of two ranges (rounding is monotone,
so the float ends bound the float results), `abs`, `min`, `max`; joined by hull. At a loop
head the names the loop writes lose their ranges (the widening that makes loops stop), a
static value loses its range across a call (its tests are static anyway, and its range
would only split the callee's summaries), and so does anything stored as an attribute."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from analyzer.frontend import ir

EMPTY = ()  # the range of no value: the hull's unit


@dataclass(frozen=True, slots=True)
class Keyed:
    on: tuple
    cases: tuple  # ((key, range), ...), sorted by key
    other: object = EMPTY


@dataclass(frozen=True, slots=True)
class KeysOf:
    """The range of a dict display's container: its items are keyed on ``on``."""

    on: tuple


def _is_range(r) -> bool:
    return type(r) is tuple and len(r) == 2


# ---------------------------------------------------------------- interval arithmetic


def hull(a, b):
    """The smallest range holding both (None, unbounded, absorbs; so does anything that is
    not a range)."""
    if a == EMPTY and (b == EMPTY or _is_range(b)):
        return b
    if b == EMPTY and _is_range(a):
        return a
    if not (_is_range(a) and _is_range(b)):
        return None
    return (min(a[0], b[0]), max(a[1], b[1]))


def plain(r):
    """The range whatever the key: the hull of every case."""
    if not isinstance(r, Keyed):
        return r if _is_range(r) else None
    out = r.other
    for _, case in r.cases:
        out = hull(out, case)
    return None if out == EMPTY else out


def join_ranges(a, b):
    """The range of a value that is either: casewise for one key, else the hull."""
    if a == b:
        return a
    if isinstance(a, Keyed) and isinstance(b, Keyed) and a.on == b.on:
        keys = sorted({k for k, _ in a.cases} | {k for k, _ in b.cases})
        ca, cb = dict(a.cases), dict(b.cases)
        return Keyed(a.on, tuple((k, hull(ca.get(k, a.other), cb.get(k, b.other))) for k in keys), hull(a.other, b.other))
    if isinstance(b, Keyed) and not isinstance(a, Keyed):
        a, b = b, a
    if isinstance(a, Keyed) and not isinstance(b, Keyed) and b is not None:
        return Keyed(a.on, tuple((k, hull(c, b)) for k, c in a.cases), hull(a.other, b))
    return hull(plain(a), plain(b)) if a is not None and b is not None else None


def _casewise(r, fn):
    if isinstance(r, Keyed):
        return Keyed(r.on, tuple((k, fn(c) if _is_range(c) else c) for k, c in r.cases),
                     fn(r.other) if _is_range(r.other) else r.other)
    return fn(r) if _is_range(r) else None


def _neg(r):
    return (-r[1], -r[0])


def _add(a, b):
    return _finite_or_none(a[0] + b[0], a[1] + b[1])


def _mul(a, b):
    products = [x * y for x in a for y in b if not (x == 0 or y == 0) or not (math.isinf(x) or math.isinf(y))]
    if len(products) < 4:
        products.append(0.0)  # 0 * inf: the finite end is 0
    return _finite_or_none(min(products), max(products))


def _finite_or_none(lo, hi):
    return None if math.isnan(lo) or math.isnan(hi) else (lo, hi)


def arithmetic(op: str, a, b):
    """The range of ``a op b`` (ranges of the operands), or None."""
    fn = {"+": _add, "-": lambda x, y: _add(x, _neg(y)), "*": _mul}.get(op)
    if fn is None or a is None or b is None:
        return None
    if isinstance(a, Keyed) and isinstance(b, Keyed):
        a, b = plain(a), plain(b)
    if isinstance(a, Keyed) and _is_range(b):
        return _casewise(a, lambda r: fn(r, b))
    if isinstance(b, Keyed) and _is_range(a):
        return _casewise(b, lambda r: fn(a, r))
    return fn(a, b) if _is_range(a) and _is_range(b) else None


def negated(r):
    return _casewise(r, _neg)


def absolute(r):
    def _abs(x):
        lo, hi = x
        return (lo, hi) if lo >= 0 else (-hi, -lo) if hi <= 0 else (0.0, max(-lo, hi))
    return _casewise(r, _abs)


def truncated(r):
    """`int(x)` rounds toward zero: the ends do too."""
    return _casewise(r, lambda x: (float(math.trunc(x[0])) if math.isfinite(x[0]) else x[0],
                                   float(math.trunc(x[1])) if math.isfinite(x[1]) else x[1]))


# ---------------------------------------------------------------- constants and sources

def _number(e):
    """The value of a numeric literal, `-literal` included, else None."""
    if isinstance(e, ir.UnaryOp) and e.op == "-":
        inner = _number(e.operand)
        return -inner if inner is not None else None
    if isinstance(e, ir.Const) and type(e.value) in (int, float):
        return float(e.value)
    return None


def with_literal(value, node, other):
    """``value`` of the expression ``node`` with its point range when it is a numeric literal
    and the value it meets (``other``) has a range: literals get one only where it counts."""
    if other.interval is None or value.interval is not None:
        return value
    number = _number(node)
    return replace(value, interval=(number, number)) if number is not None else value


_KEPT_BY_METHODS = frozenset({"item", "float", "double", "clone", "detach", "cpu", "contiguous"})


def after_call(func, args: list, node, result):
    """``result`` of a call with the range of its values: a torch factory's (`source`),
    what `float()`, `int()`, `abs()`, `min()`, `max()` and `.item()` keep or compute."""
    if result.type not in ("python", "tensor") or func.type not in ("ext", "method"):
        return result
    r = None
    if func.type == "ext" and isinstance(func.ref, str):
        name = func.ref
        if name.startswith("torch."):
            r = source(name, node)
        elif name in ("builtins.float", "builtins.int", "builtins.abs") and len(args) == 1 and not _has_keywords(node):
            inner = args[0].interval
            r = inner if name == "builtins.float" else truncated(inner) if name == "builtins.int" else absolute(inner)
        elif name in ("builtins.min", "builtins.max") and len(args) >= 2 and not _has_keywords(node):
            ranges = [plain(a.interval) if a.interval is not None else _literal(e) for a, e in zip(args, _positional(node))]
            if all(x is not None and x != EMPTY for x in ranges):
                pick = min if name == "builtins.min" else max
                r = (pick(x[0] for x in ranges), pick(x[1] for x in ranges))
    elif func.type == "method" and func.ref in _KEPT_BY_METHODS and not args and func.elem is not None \
            and func.elem.type == "tensor":
        r = func.elem.interval
    if r is None and result.interval is None:
        return result
    return replace(result, interval=r)


def _literal(e):
    number = _number(e)
    return (number, number) if number is not None else None


def _has_keywords(node) -> bool:
    return not isinstance(node, ir.Call) or any(a.keyword is not None or a.star for a in node.args)


def _positional(node: ir.Call) -> list:
    return [a.value for a in node.args if a.keyword is None and not a.star]


def _keyword(node: ir.Call, name: str):
    return next((a.value for a in node.args if a.keyword == name), None)


def source(name: str, node) -> tuple | None:
    """The range of the values of the tensor a torch factory ``name`` makes at ``node``."""
    if name not in _SOURCES or not isinstance(node, ir.Call) or any(a.star or a.keyword in ("dtype", "out")
                                                                     for a in node.args):
        return None
    args = _positional(node)
    if name == "torch.linspace":
        ends = [args[i] if i < len(args) else _keyword(node, k) for i, k in ((0, "start"), (1, "end"))]
        a, b = (_number(e) if e is not None else None for e in ends)
        return _widened(min(a, b), max(a, b)) if a is not None and b is not None else None
    if name == "torch.arange" and args and not any(a.keyword in ("start", "end", "step") for a in node.args):
        numbers = [_number(e) for e in args[:3]]
        if len(args) == 1:
            if numbers[0] is not None and numbers[0] < 1:
                return None  # empty
            return _widened(0.0, numbers[0] - 1 if numbers[0] is not None else math.inf)
        start, end = numbers[0], numbers[1]
        step = numbers[2] if len(args) > 2 else 1.0
        if start is None or step is None or step <= 0:
            return None
        return _widened(start, end if end is not None else math.inf)
    if name == "torch.tensor" and len(args) == 1:
        value = _number(args[0])
        return _widened(value, value) if value is not None else None
    return None


_SOURCES = frozenset({"torch.linspace", "torch.arange", "torch.tensor"})


def _widened(lo, hi):
    """[lo, hi] with room for float32 rounding, unless both ends are small integers."""
    def exact(x):
        return math.isinf(x) or (x == int(x) and abs(x) < 2 ** 24)
    if exact(lo) and exact(hi):
        return (lo, hi)
    slack = 1e-5 * max((abs(x) for x in (lo, hi) if math.isfinite(x)), default=0.0)
    return (lo - slack, hi + slack)


# ---------------------------------------------------------------- decisions


def decided(test, ev, state) -> bool:
    """Whether the comparison ``test`` with a numeric literal (a chain of `<`, `<=`, `>`,
    `>=`, `==`, `!=`, under any `not`) takes the same side for every value the ranges of
    its operands allow."""
    while isinstance(test, ir.UnaryOp) and test.op == "not":
        test = test.operand
    if not isinstance(test, ir.Compare) or not all(op in _ORDER for op in test.ops):
        return False
    operands = [test.left, *test.comparators]
    if not any(_number(o) is not None for o in operands):
        return False  # only a comparison with a constant is asked: the question stays cheap
    ranges = [_operand_range(o, ev, state) for o in operands]
    if any(r is None for r in ranges):
        return False
    outcomes = [_ORDER[op](ranges[i], ranges[i + 1]) for i, op in enumerate(test.ops)]
    return False in outcomes or all(o is True for o in outcomes)


def _operand_range(e, ev, state):
    value = _number(e)
    if value is not None:
        return (value, value)
    r = plain(ev.ev(e, dict(state)).interval)
    return r if r is not None and r != EMPTY else None


def _lt(a, b):
    return True if a[1] < b[0] else False if a[0] >= b[1] else None


def _le(a, b):
    return True if a[1] <= b[0] else False if a[0] > b[1] else None


def _eq(a, b):
    if a[1] < b[0] or b[1] < a[0]:
        return False
    return True if a[0] == a[1] == b[0] == b[1] else None


def _ne(a, b):
    same = _eq(a, b)
    return None if same is None else not same


_ORDER = {"<": _lt, "<=": _le, ">": lambda a, b: _lt(b, a), ">=": lambda a, b: _le(b, a), "==": _eq, "!=": _ne}


def described(r) -> str:
    """A range as text, for tests and debugging."""
    if isinstance(r, Keyed):
        return "{" + ", ".join(f"{k}: {described(c)}" for k, c in r.cases) + "}"
    return "unbounded" if r is None else "empty" if r == EMPTY else f"[{r[0]:g}, {r[1]:g}]"

