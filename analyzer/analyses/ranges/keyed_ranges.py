"""Ranges that depend on a string key (`value_ranges`), and where they cross statements,
calls and returns: the one-function flow of `Keyed` ranges.

A dict display with constant string keys keeps one range per key (`dict_display`); its
subscript by a constant key is that key's range, by a variable ``name`` the range of
whatever that variable holds (`subscripted`; not inside a comprehension, whose names are
not the function's). Inside `if name == "key":` (a body that does not bind ``name``
again) it is that case (`KeyedCases.narrow`); where ``name`` is bound again, the hull of
every case (`KeyedCases.rebound`); at a loop head, what the loop writes has no range
(`KeyedCases.loop_head`: ranges of loop-carried values would otherwise grow pass after
pass); into a call, keyed on the parameter ``name`` is passed to, or the hull when it is
not passed (`into_callee`); out of a return, the hull (`leaving`)."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.region_writes import written_names
from analyzer.analyses.kinds.values import UNKNOWN, Value, join_all
from analyzer.analyses.ranges.value_ranges import EMPTY, Keyed, KeysOf, plain
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names


def leaves(value):
    """Every abstract value inside ``value`` (itself, its items, theirs)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if v is None:
            continue
        yield v
        if v.elems is not None:
            stack.extend(v.elems)
        if v.elem is not None:
            stack.append(v.elem)


def has_range(value) -> bool:
    return value is not None and any(v.interval is not None for v in leaves(value))


def remapped(value, fn):
    """``value`` with every range inside it replaced by ``fn(range)``."""
    if value is None:
        return None
    elems = tuple(remapped(e, fn) for e in value.elems) if value.elems is not None else None
    elem = remapped(value.elem, fn) if value.elem is not None else None
    interval = fn(value.interval) if value.interval is not None else None
    if interval == value.interval and elem is value.elem and (elems is None or all(
            x is y for x, y in zip(elems, value.elems))):
        return value
    return replace(value, interval=interval, elems=elems if value.elems is not None else None, elem=elem)


def _rekeyed(on, to):
    """A remapping that moves ranges keyed on ``on`` to the key ``to`` (None: forget the key)."""
    def fn(r):
        if isinstance(r, Keyed) and r.on == on:
            return Keyed(to, r.cases, r.other) if to is not None else plain(r)
        return r
    return fn


def _case(on, key):
    def fn(r):
        if isinstance(r, Keyed) and r.on == on:
            found = dict(r.cases).get(key, r.other)
            return None if found == EMPTY else found
        return r
    return fn


def _forget_names(r):
    if isinstance(r, Keyed) and r.on[0] == "name":
        return plain(r)
    return r


def leaving(value):
    """``value`` as a return hands it to the caller: no range keyed on this function's names."""
    return remapped(value, _forget_names) if has_range(value) else value


def dict_display(e, path: str, values: list, keys: list):
    """(the common item, the dict's own range) of the dict display ``e`` of items
    ``values``, keyed on its constant string keys; None when some key is not one, or no
    item has a range."""
    if not values or not all(isinstance(k, ir.Const) and isinstance(k.value, str) for k in keys) \
            or not any(has_range(v) for v in values):
        return None
    on = ("dict", path, e.span.line, e.span.column)
    by_key = dict(zip((k.value for k in keys), values))
    joined = join_all(by_key.values())
    return _keyed_like(joined, on, sorted(by_key.items())), KeysOf(on)


def _keyed_like(joined, on, items):
    """``joined`` (the join of the items' values) with each range keyed per item."""
    if joined is None:
        return None
    if joined.elems is not None and all(v.elems is not None and len(v.elems) == len(joined.elems) for _, v in items):
        elems = tuple(_keyed_like(j, on, [(k, v.elems[i]) for k, v in items]) for i, j in enumerate(joined.elems))
        joined = replace(joined, elems=elems)
    ranges = [(k, v.interval if not isinstance(v.interval, Keyed) else plain(v.interval)) for k, v in items]
    if any(r is not None for _, r in ranges):
        return replace(joined, interval=Keyed(on, tuple(ranges), EMPTY))
    return joined


def subscripted(base, index_node, item, function):
    """The item of the dict ``base`` at ``index_node`` (``item``: what the subscript gives
    without ranges): a constant key picks its case, a name keys the item on that name (in
    ``function``, the `FunctionAnalysis` evaluating it)."""
    marker = base.interval
    if not _is_keys(marker):
        return item
    on = marker.on
    if isinstance(index_node, ir.Const) and isinstance(index_node.value, str):
        return remapped(item, _case(on, index_node.value))
    if isinstance(index_node, ir.Name) and function is not None and not function.evaluator.in_comprehension:
        return remapped(item, _rekeyed(on, function.key_cases.key(index_node.id)))
    return remapped(item, _rekeyed(on, None))


def update_items(owner, added):
    """The items `owner.update(added)` adds to the dict ``owner``, keyed as ``owner``'s
    when both are dict displays keyed on their keys (`s.update({"Color": ...})`); else None."""
    mine, theirs = owner.interval, added.interval
    if not (_is_keys(mine) and _is_keys(theirs)) or added.elem is None:
        return None
    return remapped(added.elem, _rekeyed(theirs.on, mine.on))


def _is_keys(r) -> bool:
    return isinstance(r, KeysOf)


def name_key(path: str, function: str, name: str) -> tuple:
    return ("name", path, function, name)


def keyed_names(values, path: str, function: str) -> set[str]:
    """The names of this function that some range inside ``values`` is keyed on."""
    out = set()
    for value in values:
        for v in leaves(value):
            r = v.interval
            if isinstance(r, Keyed) and r.on[0] == "name" and r.on[1] == path and r.on[2] == function:
                out.add(r.on[3])
    return out


def into_callee(bound: dict, fn: ir.FunctionDef, path: str, node, self_value, caller, bind) -> dict:
    """The arguments ``bound`` to the parameters of ``fn`` as its run sees them: a static
    value without its range, a range keyed on a name of the ``caller`` frame keyed on the
    parameter that name is passed to (forgotten when it is not passed)."""
    if not any(has_range(v) for v in bound.values()):
        return bound
    passed = {}
    if isinstance(node, ir.Call) and caller is not None and not any(a.star for a in node.args):
        markers = bind(fn, [_passed(a.value) for a in node.args if a.keyword is None],
                       {a.keyword: _passed(a.value) for a in node.args if a.keyword is not None}, self_value)
        passed = {m.ref[1]: p for p, m in markers.items() if isinstance(m.ref, tuple) and m.ref[:1] == ("passed",)}
    out = {}
    for p, v in bound.items():
        if v.interval is not None and max(v.level, v.ctl) == 0 and not isinstance(v.interval, Keyed):
            v = replace(v, interval=None)  # static: its tests are static without it
        if has_range(v):
            v = remapped(v, lambda r: _into(r, caller, name_key(path, fn.qualname, ""), passed))
        out[p] = v
    return out


def _passed(e) -> Value:
    """A marker for the argument expression ``e``: which caller name it passes, if any."""
    return Value("python", ref=("passed", e.id)) if isinstance(e, ir.Name) else UNKNOWN


def _into(r, caller, callee, passed):
    if not isinstance(r, Keyed) or r.on[0] != "name":
        return r
    if caller is not None and r.on[1:3] == (caller.path, caller.qualname) and r.on[3] in passed:
        return Keyed(callee[:3] + (passed[r.on[3]],), r.cases, r.other)
    return plain(r)


# ---------------------------------------------------------------- one function's flow


class KeyedCases:
    """The ranges of one function body that depend on the value of a string variable:
    narrowed inside `if name == "key":`, forgotten where the name is bound again, and
    dropped at a loop head for what the loop writes."""

    def __init__(self, path: str, function: str, args: dict):
        self.path, self.function = path, function
        self.names: set[str] = keyed_names(args.values(), path, function)
        self._tests: dict[int, tuple | None] = {}
        self._bound: dict[int, set[str]] = {}

    def key(self, name: str) -> tuple:
        self.names.add(name)
        return name_key(self.path, self.function, name)

    def narrow(self, node, state: dict) -> None:
        """Every range keyed on ``name`` inside `if name == "key":`, as that case."""
        for region in node.regions:
            if not isinstance(region, ir.If):
                continue
            test = self._tests.get(id(region), False)
            if test is False:
                test = self._tests[id(region)] = _key_test(region) if self.names else False
                if test is False:
                    self._tests.pop(id(region))
                    continue
            if test is None or test[0] not in self.names or id(node.stmt) not in test[2]:
                continue
            narrowing = _case(name_key(self.path, self.function, test[0]), test[1])
            for name, value in list(state.items()):
                if has_range(value):
                    state[name] = remapped(value, narrowing)

    def rebound(self, node, state: dict, defs) -> None:
        """Forget the key of every range keyed on a name ``node`` binds again."""
        names = defs & self.names
        for name in names:
            forget = _rekeyed(name_key(self.path, self.function, name), None)
            for k, value in list(state.items()):
                if has_range(value):
                    state[k] = remapped(value, forget)

    def loop_head(self, loop, state: dict) -> None:
        """What a loop writes has no range at its head: ranges of loop-carried values would
        otherwise grow pass after pass."""
        names = self._bound.get(id(loop))
        if names is None:
            names = self._bound[id(loop)] = written_names(loop)
        for name in names:
            value = state.get(name)
            if value is not None and has_range(value):
                state[name] = remapped(value, lambda r: None)


def _key_test(s: ir.If):
    """(name, key, ids of the body's statements) of `if name == "key":`, else None."""
    t = s.test
    if not (isinstance(t, ir.Compare) and len(t.ops) == 1 and t.ops[0] == "=="):
        return None
    left, right = t.left, t.comparators[0]
    if isinstance(right, ir.Name) and isinstance(left, ir.Const):
        left, right = right, left
    if not (isinstance(left, ir.Name) and isinstance(right, ir.Const) and isinstance(right.value, str)):
        return None
    if left.id in assigned_names(s.body):
        return None  # the body binds the name again: below that, it need not hold the key
    return left.id, right.value, {id(x) for x in ir.walk_statements(s.body)}
