"""Slices that a loop over a tensor's length makes never empty, so that a test of their
emptiness is decided by the iteration, not by values or shapes.

    for s in range(0, x.shape[0], k):        # the loop: its own finding, if any
        chunk = x[s:s + k]
        if chunk.shape[0] == 0:              # never true: s < x.shape[0] and k >= 1
            continue

Equations. A loop `for s in range(start, L, k)` (or `range(L)`, step 1), with ``start`` a
nonnegative integer constant, walks `start <= s < L`; a step the loop runs with at all is
positive, since `start < L` on every pass. When ``L`` is the size of axis ``a`` of ``x``
(`x.shape[a]`, `x.size(a)`, `len(x)` for axis 0; inline, or a name bound once in the
function from one of them while ``x`` is never rebound there), the slice of ``x`` along
``a`` from ``s`` to `s + k` (the loop's own step), to `s + c` (``c`` a positive integer
constant) or to the end has size `min(s + k, L) - s >= 1`. So, for ``c`` bound once in
the function, to such a slice inside the loop's body:

    len(c) / c.shape[a] / c.size(a)   == 0, <= 0, < 1   is False on every pass
                                      != 0, > 0,  >= 1  is True on every pass

as long as the loop's body rebinds none of ``s``, ``x``, ``L``, ``k`` nor changes ``x`` in
place. `c.numel() == 0` stays a test: another axis may be empty."""

from __future__ import annotations

from analyzer.analyses.engine.memo import per_function_cache
from analyzer.analyses.kinds.region_writes import mutated_names
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names, target_names

_FALSE_AGAINST = {("==", 0), ("<=", 0), ("<", 1)}
_TRUE_AGAINST = {("!=", 0), (">", 0), (">=", 1)}
_MIRROR = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


@per_function_cache
def never_empty_tests(fn: ir.FunctionDef) -> frozenset[int]:
    """Ids of the comparisons in ``fn`` that test the emptiness of a slice the loop it is
    in makes never empty."""
    found: set[int] = set()
    writes = _write_counts(fn.body)
    for loop in ir.walk_statements(fn.body):
        walk = _walk(loop, fn, writes)
        if walk is None:
            continue
        counter, base, axis, step = walk
        changed = assigned_names(loop.body) | mutated_names(loop)
        if {counter, base} & changed or (isinstance(step, ir.Name) and step.id in changed):
            continue
        slices = {}
        for s in ir.walk_statements(loop.body):
            if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ir.Name)
                    and writes.get(s.targets[0].id) == 1 and _nonempty_slice(s.value, base, axis, counter, step)):
                slices[s.targets[0].id] = axis
        if not slices:
            continue
        for s in ir.walk_statements(loop.body):
            for e in ir.child_expressions(s):
                for sub in ir.walk_expression(e):
                    if _emptiness_test(sub, slices):
                        found.add(id(sub))
    return frozenset(found)


def _walk(loop, fn, writes) -> tuple | None:
    """(counter, tensor, axis, step) for a loop over the positions of an axis of a tensor."""
    if not isinstance(loop, ir.Loop) or loop.kind != "for" or not isinstance(loop.target, ir.Name):
        return None
    it = loop.iter
    if not (isinstance(it, ir.Call) and isinstance(it.func, ir.Name) and it.func.id == "range") \
            or any(a.keyword or a.star for a in it.args) or not 1 <= len(it.args) <= 3:
        return None
    args = [a.value for a in it.args]
    if len(args) == 1:
        start, stop, step = 0, args[0], ir.Const(1)
    else:
        start, stop = _int(args[0]), args[1]
        step = args[2] if len(args) == 3 else ir.Const(1)
    if start is None or start < 0:
        return None
    sized = _axis_size(stop)
    if sized is None and isinstance(stop, ir.Name) and writes.get(stop.id) == 1:
        sized = _length_bound_before(fn, loop, stop.id, writes)
    if sized is None:
        return None
    if not (isinstance(step, ir.Name) or _int(step) is not None and _int(step) > 0):
        return None
    return loop.target.id, sized[0], sized[1], step


def _length_bound_before(fn, loop, name: str, writes) -> tuple | None:
    """(tensor, axis) when ``name`` is bound once, at the top level of ``fn``, to the size
    of an axis of a tensor never rebound after it (a parameter, or bound once at the top
    level before it), and ``loop`` comes after that binding."""
    def position(target: str) -> int | None:
        return next((i for i, s in enumerate(fn.body) if isinstance(s, ir.Assign) and len(s.targets) == 1
                     and isinstance(s.targets[0], ir.Name) and s.targets[0].id == target), None)
    at = position(name)
    if at is None:
        return None
    sized = _axis_size(fn.body[at].value)
    if sized is None:
        return None
    later = fn.body[at + 1:]
    if not any(s is loop or any(inner is loop for inner in ir.walk_statements([s])) for s in later):
        return None
    base_writes = writes.get(sized[0], 0)
    if base_writes == 0:
        return sized
    where = position(sized[0])
    return sized if base_writes == 1 and where is not None and where < at else None


def _axis_size(e) -> tuple | None:
    """(tensor, axis) for `len(x)`, `x.shape[a]`, `x.size(a)` (``a`` an integer constant)."""
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Name) and e.func.id == "len" and len(e.args) == 1 \
            and not e.args[0].keyword and not e.args[0].star and isinstance(e.args[0].value, ir.Name):
        return e.args[0].value.id, 0
    if isinstance(e, ir.Subscript) and isinstance(e.value, ir.Attribute) and e.value.attr == "shape" \
            and isinstance(e.value.value, ir.Name) and _int(e.index) is not None:
        return e.value.value.id, _int(e.index)
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and e.func.attr == "size" \
            and isinstance(e.func.value, ir.Name) and len(e.args) == 1 and not e.args[0].keyword \
            and not e.args[0].star and _int(e.args[0].value) is not None:
        return e.func.value.id, _int(e.args[0].value)
    return None


def _nonempty_slice(e, base: str, axis: int, counter: str, step) -> bool:
    """Whether ``e`` is `base[..., counter:end, ...]` along ``axis``, its end the counter
    plus the loop's step or a positive constant, or omitted, and without a step."""
    if not (isinstance(e, ir.Subscript) and isinstance(e.value, ir.Name) and e.value.id == base):
        return False
    items = list(e.index.elts) if isinstance(e.index, ir.Tuple) else [e.index]
    if any(isinstance(i, ir.Const) and i.value is None for i in items) or any(isinstance(i, ir.Starred) for i in items):
        return False  # `None` adds an axis: positions no longer count from the tensor's
    ellipsis = [n for n, i in enumerate(items) if isinstance(i, ir.Const) and i.value is Ellipsis]
    if axis >= 0:
        if ellipsis and ellipsis[0] <= axis or axis >= len(items):
            return False
        before, piece = items[:axis], items[axis]
    else:
        if len(ellipsis) != 1 or ellipsis[0] != 0 or -axis > len(items) - 1:
            return False
        before, piece = items[len(items) + axis + 1:], items[len(items) + axis]
    if not all(isinstance(i, ir.Slice) and i.lower is None and i.upper is None and i.step is None for i in before):
        return False  # every axis before it kept whole: the piece is that axis
    if not (isinstance(piece, ir.Slice) and piece.step is None and isinstance(piece.lower, ir.Name)
            and piece.lower.id == counter):
        return False
    upper = piece.upper
    if upper is None:
        return True
    if not (isinstance(upper, ir.BinOp) and upper.op == "+" and isinstance(upper.left, ir.Name) and upper.left.id == counter):
        return False
    width = upper.right
    if _int(width) is not None:
        return _int(width) > 0
    return isinstance(width, ir.Name) and isinstance(step, ir.Name) and width.id == step.id


def _emptiness_test(e, slices: dict) -> bool:
    if not isinstance(e, ir.Compare) or len(e.ops) != 1:
        return False
    op, left, right = e.ops[0], e.left, e.comparators[0]
    if _int(left) is not None:
        op, left, right = _MIRROR.get(op), right, left
    number = _int(right)
    if number is None or ((op, number) not in _FALSE_AGAINST and (op, number) not in _TRUE_AGAINST):
        return False
    sized = _axis_size(left)
    return sized is not None and sized[0] in slices and sized[1] == slices[sized[0]]


def _write_counts(body) -> dict[str, int]:
    """name -> how many bindings of it the function holds (targets of its statements,
    loops, `with`, `except`, walrus), not counting nested functions' own."""
    counts: dict[str, int] = {}
    for s in ir.walk_statements(body):
        names = []
        if isinstance(s, ir.Assign):
            names = [n for t in s.targets for n in target_names(t)]
        elif isinstance(s, ir.AugAssign):
            names = list(target_names(s.target))
        elif isinstance(s, ir.Loop) and s.target is not None:
            names = list(target_names(s.target))
        elif isinstance(s, ir.With):
            names = [n for _, t in s.items if t is not None for n in target_names(t)]
        elif isinstance(s, (ir.FunctionDef, ir.ClassDef)):
            names = [s.name]
        elif isinstance(s, (ir.Import, ir.Try, ir.Match, ir.Global, ir.Nonlocal, ir.Delete)):
            names = sorted(assigned_names([s]) | _declared(s))
        names += [sub.target.id for e in ir.child_expressions(s) for sub in ir.walk_expression(e)
                  if isinstance(sub, ir.NamedExpr)]
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _declared(s) -> set[str]:
    """`global` / `nonlocal` names and `del` targets: bound elsewhere or unbound here."""
    if isinstance(s, (ir.Global, ir.Nonlocal)):
        return set(s.names)
    if isinstance(s, ir.Delete):
        return {n for t in s.targets for n in target_names(t)}
    return set()


def _int(e) -> int | None:
    if isinstance(e, int) and not isinstance(e, bool):
        return e
    if isinstance(e, ir.Const) and type(e.value) is int:
        return e.value
    if isinstance(e, ir.UnaryOp) and e.op == "-" and isinstance(e.operand, ir.Const) and type(e.operand.value) is int:
        return -e.operand.value
    return None
