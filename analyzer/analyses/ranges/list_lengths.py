"""Emptiness tests of a local Python list decided by where they stand, not by values.

`len(lst) > 0` (also `!= 0`, `>= 1`, `== 0`, `lst`, `not lst`) on a list the function
builds itself is data only when the appends before it are. Where every path to the
test appends (`lst.append(bos)` just above), or none does, the outcome is the same for
every input: the trace takes the branch every input takes. At the head of a loop whose
every pass appends, the list is empty exactly on the first pass: the outcome is fixed
by the iteration (`_ > 0`), the loop's own trip count being its own finding (UT102).
After that loop it is empty exactly when the loop never ran: fixed by the trip count too.

A must-analysis over the structured IR, one state per path: each tracked list is
`EMPTY`, `FULL` or an `Iteration` (empty or not by the passes of the loops it names
alone); anything else (an append under a data-dependent `if`, a `pop`) makes it
`UNKNOWN` until the next append; an alias or a call it is handed to stops the tracking.
Two paths joining after an `if` agree or lose the list. A loop head, and the loop's
exit (reached from its head), join the list on entry (empty) with the list after a pass
(non-empty) into an `Iteration` naming that loop: two of them agree only when they name
the same loops (after `if c: <loop A appends>` `else: <loop B appends>` the list is
empty by `c` too).

An `if`/`elif` chain without `else` whose tests are `m == a`, `m == b`, ... for
`m = min(a, b, ...)` (or `max`) has no fall-through path: one of them is `m`."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.analyses.engine.memo import per_function_cache
from analyzer.frontend import ir
from analyzer.frontend.printer import dotted_head
from analyzer.frontend.verify import target_names

EMPTY, FULL, UNKNOWN = "empty", "full", "unknown"
_GROWERS = frozenset({"append", "insert"})
_READERS = frozenset({"index", "count", "copy"})


@dataclass(frozen=True)
class Iteration:
    """Empty or not by how many passes the loops `loops` (ids of `ir.Loop`) made alone."""

    loops: frozenset


@dataclass(frozen=True)
class LengthTests:
    decided: dict  # id(test) -> the truth it has for every input
    by_iteration: frozenset  # ids of tests whose outcome only the loop iteration decides


@per_function_cache
def length_tests(fn: ir.FunctionDef) -> LengthTests:
    walker = _Walker()
    walker.block(fn.body, _Path())
    decided = {k: v for k, v in walker.found.items() if isinstance(v, bool)}
    return LengthTests(decided, frozenset(k for k, v in walker.found.items() if isinstance(v, Iteration)))


@dataclass
class _Path:
    lists: dict = field(default_factory=dict)  # name -> EMPTY | FULL | UNKNOWN | Iteration
    extrema: dict = field(default_factory=dict)  # `m = min(a, b)`: m -> frozenset({a, b})

    def copy(self) -> _Path:
        return _Path(dict(self.lists), dict(self.extrema))


def _join(paths: list) -> _Path | None:
    """Paths meeting after a branch: what every one agrees on."""
    paths = [p for p in paths if p is not None]
    if not paths:
        return None
    first = paths[0]
    lists = {k: v if all(p.lists[k] == v for p in paths[1:]) else UNKNOWN
             for k, v in first.lists.items() if all(k in p.lists for p in paths[1:])}
    extrema = {k: v for k, v in first.extrema.items() if all(p.extrema.get(k) == v for p in paths[1:])}
    return _Path(lists, extrema)


def _loop_head(entry: _Path, back: _Path | None, loop: ir.Loop) -> _Path:
    """The state at a loop head: on entry on the first pass, after a pass on the others."""
    if back is None:
        return entry
    lists = {}
    for name, state in entry.lists.items():
        later = back.lists.get(name)
        if later is None:
            continue  # no longer followed
        if later == state or UNKNOWN in (later, state):
            lists[name] = later if later == state else UNKNOWN
        else:  # one on first passes, the other on later ones
            lists[name] = Iteration(_loops_of(state) | _loops_of(later) | {id(loop)})
    return _Path(lists, {k: v for k, v in entry.extrema.items() if back.extrema.get(k) == v})


@dataclass
class _Flow:
    """Where the paths through a block go: on, out of the loop, to its next pass."""

    out: _Path | None
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


class _Walker:
    def __init__(self):
        self.found: dict = {}  # id(test) -> bool | Iteration | None (re-walks overwrite)

    def block(self, stmts, path: _Path | None) -> _Flow:
        flow = _Flow(path)
        for s in stmts:
            if flow.out is None:
                break
            inner = self.statement(s, flow.out)
            flow.out = inner.out
            flow.breaks += inner.breaks
            flow.continues += inner.continues
        return flow

    def statement(self, s, path: _Path) -> _Flow:
        if isinstance(s, ir.If):
            return self.branches(s, path)
        if isinstance(s, ir.Loop):
            return self.loop(s, path)
        if isinstance(s, ir.Break):
            return _Flow(None, breaks=[path])
        if isinstance(s, ir.Continue):
            return _Flow(None, continues=[path])
        if isinstance(s, (ir.Return, ir.Raise)):
            self.expressions(s, path)
            return _Flow(None)
        if isinstance(s, ir.With):
            self.expressions(s, path)
            return self.block(s.body, path)
        if isinstance(s, (ir.Try, ir.Match, ir.FunctionDef, ir.ClassDef, ir.Opaque)):
            # Not followed path by path: what they mention is no longer known.
            for name in _names_in(s):
                path.lists.pop(name, None)
                path.extrema.pop(name, None)
            return _Flow(path)
        grown = _grown_list(s, path)
        if grown is not None:  # `lst.append(v)`: its arguments, then the append
            for a in s.value.args:
                self.expressions_of(a.value, path)
        else:
            self.expressions(s, path)
        self.effect(s, path, grown)
        return _Flow(path)

    # ------------------------------------------------------------------ control flow

    def branches(self, s: ir.If, path: _Path) -> _Flow:
        arms, rest = [], s
        while True:  # the `if`/`elif` chain, flattened
            arms.append(rest)
            if len(rest.orelse) == 1 and isinstance(rest.orelse[0], ir.If) and rest.orelse[0].is_elif:
                rest = rest.orelse[0]
            else:
                break
        flows = []
        falls_through = True
        for arm in arms:
            self.test(arm.test, path)
            truth = self.truth(arm.test, path)
            if truth is not False:
                flows.append(self.block(arm.body, path.copy()))
            if truth is True:
                falls_through = False
                break
        if falls_through:
            if rest.orelse:
                flows.append(self.block(rest.orelse, path.copy()))
            elif not _exhaustive([a.test for a in arms], path):
                flows.append(_Flow(path.copy()))
        return _Flow(_join([f.out for f in flows]), [b for f in flows for b in f.breaks],
                     [c for f in flows for c in f.continues])

    def loop(self, s: ir.Loop, path: _Path) -> _Flow:
        self.expressions_of(s.iter, path)
        entry = path.copy()
        for name in target_names(s.target):
            entry.lists.pop(name, None)
            entry.extrema.pop(name, None)
        head = entry
        for _ in range(4):
            if s.test is not None:
                self.test(s.test, head)
            flow = self.block(s.body, head.copy())
            back = _join([flow.out, *flow.continues])
            new_head = _loop_head(entry, back, s)
            if new_head == head:
                break
            head = new_head
        else:  # not settled: nothing known inside
            head = _Path({k: UNKNOWN for k in entry.lists})
            flow = self.block(s.body, head.copy())
        # The loop is left at its head, after no pass or after some: a list every pass
        # grows is empty there exactly when the loop never ran (an Iteration), decided by the
        # trip count, which is the loop's own finding.
        exhausted = head
        after = self.block(s.orelse, exhausted) if s.orelse else _Flow(exhausted)
        return _Flow(_join([after.out, *flow.breaks]), after.breaks, after.continues)

    # ------------------------------------------------------------------ tests

    def test(self, expr, path: _Path) -> None:
        """Record what the tests in a branch predicate (through `and`/`or`/`not`) are."""
        if isinstance(expr, ir.BoolOp):
            for v in expr.values:
                self.test(v, path)
            return
        if isinstance(expr, ir.UnaryOp) and expr.op == "not":
            self.test(expr.operand, path)
        self.expressions_of(expr, path, test=expr)
        tested = _emptiness_test(expr)
        if tested is not None:
            name, when_full = tested
            state = path.lists.get(name)
            self.found[id(expr)] = (when_full if state == FULL else (not when_full) if state == EMPTY
                                    else state if isinstance(state, Iteration) else None)

    def truth(self, expr, path: _Path) -> bool | None:
        tested = _emptiness_test(expr)
        if tested is None:
            return None
        state = path.lists.get(tested[0])
        return tested[1] if state == FULL else (not tested[1]) if state == EMPTY else None

    def expressions(self, s, path: _Path) -> None:
        for e in ir.child_expressions(s):
            self.expressions_of(e, path)

    def expressions_of(self, expr, path: _Path, test=None) -> None:
        """Conditional expressions' tests, and the uses that make a list unknown."""
        if expr is None:
            return
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, ir.Lambda):
                for name in _names_in(node):
                    path.lists.pop(name, None)
                continue
            if isinstance(node, ir.IfExp):
                self.test(node.test, path)
                stack += [node.body, node.orelse]
                continue
            if isinstance(node, ir.Call):
                if _is_len(node):
                    continue
                method = node.func
                if isinstance(method, ir.Attribute) and isinstance(method.value, ir.Name) \
                        and method.value.id in path.lists:
                    if method.attr not in _READERS:
                        path.lists[method.value.id] = UNKNOWN  # grown or shrunk where not followed
                    stack += [a.value for a in node.args]
                    continue
                # A list handed to a call may be changed by it; torch's functions only read it.
                reads_only = dotted_head(method) == "torch"  # `torch.cat(...)`: its text starts "torch."
                stack += [a.value for a in node.args if not (reads_only and isinstance(a.value, ir.Name))]
                stack.append(method)
                continue
            if isinstance(node, ir.Subscript) and isinstance(node.value, ir.Name):
                stack.append(node.index)  # `lst[-1]` reads it
                continue
            if isinstance(node, ir.Name):
                if node.id in path.lists and not _is_test_position(node, test):
                    path.lists.pop(node.id, None)  # aliased or passed on
                continue
            stack += ir.child_expressions(node)

    # ------------------------------------------------------------------ effects

    def effect(self, s, path: _Path, grown: str | None = None) -> None:
        if isinstance(s, ir.Assign):
            for t in s.targets:
                if isinstance(t, ir.Subscript) and isinstance(t.value, ir.Name) and isinstance(t.index, ir.Slice) \
                        and t.value.id in path.lists:
                    path.lists[t.value.id] = UNKNOWN  # `lst[:] = ...` may change its length
                for name in target_names(t):
                    path.lists.pop(name, None)
                    path.extrema.pop(name, None)
                    for m, args in list(path.extrema.items()):
                        if name in args:
                            del path.extrema[m]
            if len(s.targets) == 1 and isinstance(s.targets[0], ir.Name):
                name = s.targets[0].id
                value = s.value
                if isinstance(value, ir.List) and not any(isinstance(e, ir.Starred) for e in value.elts):
                    path.lists[name] = FULL if value.elts else EMPTY
                elif isinstance(value, ir.Call) and isinstance(value.func, ir.Name) and value.func.id == "list" \
                        and not value.args:
                    path.lists[name] = EMPTY
                elif isinstance(value, ir.Call) and isinstance(value.func, ir.Name) and value.func.id in ("min", "max") \
                        and len(value.args) > 1 and all(isinstance(a.value, ir.Name) and not a.star and not a.keyword
                                                         for a in value.args):
                    path.extrema[name] = frozenset(a.value.id for a in value.args)
        elif isinstance(s, ir.AugAssign):
            for name in target_names(s.target):
                grows = name in path.lists and isinstance(s.value, ir.List) and s.value.elts and s.op == "+"
                path.lists.pop(name, None)
                path.extrema.pop(name, None)
                if grows:
                    path.lists[name] = FULL
        elif grown is not None:
            name, method = grown, s.value.func.attr
            literal = s.value.args and isinstance(s.value.args[-1].value, (ir.List, ir.Tuple)) \
                and s.value.args[-1].value.elts
            if method in _GROWERS or literal:
                path.lists[name] = FULL
            elif path.lists.get(name) != FULL:
                path.lists[name] = UNKNOWN  # extended by what may be empty
        elif isinstance(s, ir.Delete):
            for t in s.targets:
                for name in _names_in_expr(t) & set(path.lists):
                    path.lists[name] = UNKNOWN


def _loops_of(state) -> frozenset:
    return state.loops if isinstance(state, Iteration) else frozenset()


def _grown_list(s, path: _Path) -> str | None:
    """The tracked list an `lst.append(v)` / `insert` / `extend` statement grows."""
    if isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call) and isinstance(s.value.func, ir.Attribute):
        method = s.value.func
        if isinstance(method.value, ir.Name) and method.value.id in path.lists \
                and (method.attr in _GROWERS or method.attr == "extend"):
            return method.value.id
    return None


def _exhaustive(tests: list, path: _Path) -> bool:
    """`if m == a: ... elif m == b [and f]: ... elif m == b and not f:` for `m = min(a, b)`:
    every value of `m` is one of the arms."""
    covered: dict = {}  # the name `m` is compared to -> the extra conditions of its arms
    extremum = None
    for t in tests:
        parts = t.values if isinstance(t, ir.BoolOp) and t.op == "and" else [t]
        equal = [p for p in parts if isinstance(p, ir.Compare) and p.ops == ["=="]
                 and isinstance(p.left, ir.Name) and isinstance(p.comparators[0], ir.Name)]
        if len(equal) != 1 or extremum not in (None, equal[0].left.id):
            return False
        extremum = equal[0].left.id
        extra = [p for p in parts if p is not equal[0]]
        if len(extra) > 1:
            return False
        covered.setdefault(equal[0].comparators[0].id, []).append(_literal(extra[0]) if extra else None)
    candidates = path.extrema.get(extremum)
    if not candidates:
        return False
    for name in candidates:
        extras = covered.get(name)
        if extras is None:
            return False
        if None in extras:
            continue
        if not any((atom, not polarity) in extras for atom, polarity in extras if atom is not None):
            return False
    return True


def _literal(expr) -> tuple:
    """`f` -> ("f", True), `not f` -> ("f", False); (None, ...) for anything else."""
    if isinstance(expr, ir.UnaryOp) and expr.op == "not" and isinstance(expr.operand, ir.Name):
        return (expr.operand.id, False)
    if isinstance(expr, ir.Name):
        return (expr.id, True)
    return (None, True)


def _emptiness_test(expr) -> tuple[str, bool] | None:
    """(list name, the test's truth when the list is non-empty) for an emptiness test."""
    if isinstance(expr, ir.Name):
        return (expr.id, True)
    if isinstance(expr, ir.UnaryOp) and expr.op == "not" and isinstance(expr.operand, ir.Name):
        return (expr.operand.id, False)
    if not (isinstance(expr, ir.Compare) and len(expr.ops) == 1 and _is_len(expr.left)
            and isinstance(expr.comparators[0], ir.Const) and type(expr.comparators[0].value) is int):
        return None
    op, bound = expr.ops[0], expr.comparators[0].value
    when_full = {(">", 0): True, ("!=", 0): True, (">=", 1): True, ("==", 0): False, ("<", 1): False,
                 ("<=", 0): False}.get((op, bound))
    return None if when_full is None else (expr.left.args[0].value.id, when_full)


def _is_len(expr) -> bool:
    return (isinstance(expr, ir.Call) and isinstance(expr.func, ir.Name) and expr.func.id == "len"
            and len(expr.args) == 1 and isinstance(expr.args[0].value, ir.Name) and not expr.args[0].star)


def _is_test_position(name: ir.Name, test) -> bool:
    """A bare name that is the whole predicate (`if lst:`, `not lst`) only tests it."""
    return test is not None and (test is name or (isinstance(test, ir.UnaryOp) and test.operand is name))


def _names_in_expr(expr) -> set[str]:
    return {n.id for n in ir.walk_expression(expr) if isinstance(n, ir.Name)}


def _names_in(node) -> set[str]:
    names = set()
    for e in ir.child_expressions(node):
        names |= _names_in_expr(e)
    if isinstance(node, ir.Lambda):
        names |= _names_in_expr(node.body)
    for block in ir.child_blocks(node) if not isinstance(node, (ir.FunctionDef, ir.ClassDef)) else [node.body]:
        for st in ir.walk_statements(block, into_defs=True):
            for e in ir.child_expressions(st):
                names |= _names_in_expr(e)
    return names
