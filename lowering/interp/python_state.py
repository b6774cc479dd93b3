"""Python state inside graph regions: what a data-dependent `If` branch or `Loop` body may
change, and what it may read.

The interpreter runs a graph region once, symbolically; ONNX then runs it once per
iteration (Loop) or on one side only (If). Any Python state the region changes is
therefore either handed through the graph or refused:

- local *names* are the region's outputs (If results, Loop carried values, from the
  region analysis, plus names a `while` condition's walrus binds), and the region runs
  in a copy of the frame;
- a *list* the region appends to is copied too. In a Loop body it reads as
  `prefix + [EarlierIterations] + this iteration's items`: the number of items earlier
  iterations appended is an int64 the Loop carries, and so is their last item once the
  body reads `out[-1]` before appending. After a Loop it reads as `prefix + [Stacked]`,
  after an If as `prefix + [Maybe]`. Its length is a graph value (`list_length`); its last
  item is one (`list_item`); an item whose position the graph decides, or the list as a
  whole, is refused (`refuse_varying_list`);
- a list or dict changed in place in a region is written back into the same object
  afterwards, so every name and frame that holds it sees the change, as in eager; a
  dict a Loop changes keeps its keys and has its values carried;
- any other Python container the region changes (a set, a list inside another
  container, one a helper changed for a caller) is found by comparing a snapshot taken
  before the region with the state after it (`state_snapshot`, `check_state_kept`);
- containers that outlive the call (module attributes, globals, closure cells, default
  arguments: `foreign`) may not be changed at all, inside a region or not; neither may
  attributes (`setattr`, `obj.x = v`) or globals;
- a nested function's `nonlocal` write lands in its defining frame's current view (a
  region's copy while the region runs); a region whose copy gets a name it does not hand
  on is emitted again with the name among its outputs (`MoreOutputs`), and the write is
  refused only inside the nested function's own graph region;
- the right side of a data-dependent `and` / `or` runs only where eager runs it: a walrus
  there is merged with `torch.where`, other changes are refused.
"""

from __future__ import annotations

import torch

from lowering.errors import LoweringError
from lowering.graph import Value
from lowering.interp.values import (MISSING, EarlierIterations, Frame, Maybe, MoreOutputs, Stacked, TensorItems,
                                    _contains_graph)

VARYING = (Stacked, Maybe, EarlierIterations)

# Methods that change a list / dict / set in place.
MUTATING_METHODS = {
    list: {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "__setitem__",
           "__delitem__", "__iadd__", "__imul__"},
    dict: {"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__", "__ior__"},
    set: {"add", "discard", "remove", "pop", "clear", "update", "difference_update", "intersection_update",
          "symmetric_difference_update", "__ior__", "__iand__", "__isub__", "__ixor__"},
}
_CONTAINERS = (list, dict, set)
_UNBOUND = object()
_SNAPSHOT_DEPTH = 6


def _leaves_unchanged(owner, method: str, args) -> bool:
    """A mutating method called where it changes nothing (a config's
    `params.setdefault("rope_type", ...)` when the key is set): no state for the graph to keep."""
    if isinstance(owner, dict) and method == "setdefault":
        return len(args) >= 1 and args[0] in owner
    if isinstance(owner, dict) and method == "pop":
        return len(args) == 2 and args[0] not in owner
    if isinstance(owner, set) and method == "discard":
        return len(args) == 1 and args[0] not in owner
    return False


def has_varying_items(v) -> bool:
    """A list or tuple whose length or items the graph decides."""
    return isinstance(v, (list, tuple)) and any(isinstance(x, VARYING) for x in v)


def _contents(obj):
    if isinstance(obj, list):
        return tuple(map(id, obj))
    if isinstance(obj, dict):
        return tuple((k if isinstance(k, (str, int, float, bool, type(None))) else id(k), id(v))
                     for k, v in obj.items())
    return frozenset(map(id, obj))


def _children(obj):
    if isinstance(obj, dict):
        return obj.values()
    if isinstance(obj, (list, tuple, set, frozenset)):
        return obj
    return ()


class PythonState:
    # ------------------------------------------------------------ lists the graph sizes

    def list_length(self, items):
        """`len(items)`: a Python int, or a graph int64 when a loop or a data-dependent `if`
        appended to the list."""
        if not has_varying_items(items):
            return len(items)
        total = sum(1 for x in items if not isinstance(x, VARYING))
        for x in items:
            if isinstance(x, EarlierIterations):
                part = x.count
            elif isinstance(x, Stacked):
                part = self.g.size(x.value, 0) if x.valid is None else self.call_op(
                    "torch.sum", [self.g.cast(self.as_graph(x.valid), torch.int64)], {})
            elif isinstance(x, Maybe):
                if not isinstance(x.valid, Value):
                    total += int(bool(x.valid))
                    continue
                part = self.g.cast(self.to_bool(x.valid), torch.int64)
            else:
                continue
            total = self.binop("+", total, self.g.cast(self.as_graph(part), torch.int64))
        return self.python_number(total)

    def list_item(self, items, index: int):
        """`items[index]` for a constant index: the item when its position is known at
        export time (before the first item the graph decides, counting from the left, or
        after the last one, counting from the right); refused otherwise."""
        if index == -1 and items and isinstance(items[-1], (Maybe, Stacked)) and not isinstance(items[-1], TensorItems):
            return self._last_item(items)
        positions = range(len(items)) if index >= 0 else range(len(items) - 1, -1, -1)
        want = index if index >= 0 else -index - 1
        for pos in positions:
            x = items[pos]
            if isinstance(x, EarlierIterations) and index == -1 and want == 0:
                return self.previous_last(x)
            if isinstance(x, VARYING):
                break
            if want == 0:
                return x
            want -= 1
        raise self.refuse_varying_list(items, f"`[{index}]`")

    def _last_item(self, items):
        """`items[-1]` when the last items were appended under data-dependent `if`s or by
        graph loops: the last present one. Under an `if`, `torch.where(valid, item, <the
        one before>)`; after a loop, the last row of `[<the one before>, *rows]`."""
        pos = len(items) - 1
        while pos >= 0 and isinstance(items[pos], (Maybe, Stacked)):
            pos -= 1
        if pos < 0:
            raise self.refuse_varying_list(items, "`[-1]`")  # eager may raise IndexError
        below = self.previous_last(items[pos]) if isinstance(items[pos], EarlierIterations) else items[pos]
        for item in items[pos + 1:]:
            below = self.as_graph(below)
            if isinstance(item, Maybe):
                value = self.as_graph(item.value)
                if (value.dtype, value.rank) != (below.dtype, below.rank):
                    raise self.refuse_varying_list(items, "`[-1]`")
                below = self.call_op("torch.where", [self.to_bool(item.valid), value, below], {})
                continue
            rows = item.value if item.valid is None else self.g.op(
                "Compress", item.value, self.to_bool_vector(item.valid), axis=0)
            if rows.dtype != below.dtype or rows.rank != (below.rank or 0) + 1:
                raise self.refuse_varying_list(items, "`[-1]`")
            rows = self.call_op("torch.cat", [[self.g.unsqueeze(below, [0]), rows]], {"dim": 0})
            below = self.call_op("operator.getitem", [rows, -1], {})
        return below

    def previous_last(self, marker: EarlierIterations) -> Value:
        """`out[-1]` in a Loop body before this iteration's append: the previous iteration's
        item (the last one before the loop on the first iteration), carried by the Loop."""
        if marker.last is None:
            before = marker.before
            if isinstance(before, LoweringError):
                raise before
            if not (isinstance(before, Value) or _is_number(before)):
                what = "empty before the loop" if before is MISSING else f"{type(before).__name__} before the loop"
                raise self.error(
                    f"`{marker.name}[-1]` inside the data-dependent loop at line {marker.line}, before this "
                    f"iteration's append: the list is {what}, so eager PyTorch reads an item of the previous iteration "
                    "(or raises) there, which untrace cannot carry",
                    f"put the first item in `{marker.name}` before the loop, or keep the last value in a variable "
                    f"(`last = v` next to `{marker.name}.append(v)`)", construct="list")
            ref = self.as_graph(before)
            marker.last = marker.body.add_input(marker.body.fresh(f"last_{marker.name}"), ref.dtype,
                                                None if ref.rank is None else (None,) * ref.rank)
            if not isinstance(before, Value) or before in self.python_numbers:
                self.python_number(marker.last)
            self.aliases.made(marker.last, marker.body)
        return marker.last

    def refuse_varying_list(self, items, use: str) -> LoweringError:
        """The error for a use of a list whose items a graph region decides."""
        marker = next(x for x in items if isinstance(x, VARYING))
        if isinstance(marker, TensorItems):
            return self.error(
                f"{use}: `.tolist()` of a tensor whose number of items is not known at export time (e.g. "
                "`torch.split(h, lengths.tolist())` over a dynamic batch): ONNX has no list of Python numbers "
                "whose length is decided at run time",
                "iterate over it (`for n in t.tolist()`, `enumerate`, `zip`, a comprehension: an ONNX Loop) or take "
                "its `len()`; else keep the value as a tensor. For per-segment results use a segment reduction: "
                "`seg = torch.repeat_interleave(torch.arange(len(lengths)), lengths)`, then "
                "`torch.zeros(n, d).index_add(0, seg, h) / lengths[:, None]` or `scatter_reduce`", construct="tolist")
        name = self.name_of_object(items)
        if isinstance(marker, EarlierIterations):
            where = (f"inside the data-dependent loop at line {marker.line}, which appends to it: eager PyTorch sees "
                     "the items of the earlier iterations there, which the graph does not keep")
            hint = (f"read only `len({name})` and this iteration's items (`{name}[-1]` after the append) in the loop; "
                    f"keep what the next iteration needs in a variable (`last = v` next to `{name}.append(v)`), or "
                    f"use `torch.stack({name})` after the loop")
        elif isinstance(marker, Stacked):
            where = "after the data-dependent loop that appended to it: which items it holds is decided at run time"
            hint = f"use `torch.stack({name})` / `torch.cat({name})` and index the tensor (`torch.stack({name})[-1]`)"
        else:
            where = "after a data-dependent `if` that appended to it on one side only"
            hint = f"append on both sides of the `if`, or use `torch.stack({name})` and index the tensor"
        return self.error(f"{use} of the list `{name}` {where}", hint, construct="list")

    # ------------------------------------------------------------ state that outlives the call

    def mark_foreign(self, value, description: str, depth: int = 0) -> None:
        """Note that `value` (and the containers inside it) outlives this call of forward:
        a module's attribute, a global, a closure cell, a default argument."""
        if isinstance(value, _CONTAINERS) and id(value) not in self.foreign and depth < _SNAPSHOT_DEPTH:
            self.foreign[id(value)] = (value, description)
            for child in _children(value):
                self.mark_foreign(child, description, depth + 1)

    def check_mutation(self, container, method: str) -> None:
        """Refuse to change a container that outlives the call (eager keeps the change for
        the next call; the graph cannot)."""
        known = self.foreign.get(id(container))
        if known is None or known[0] is not container:
            return
        description = known[1]
        raise self.error(
            f"`{method}` changes `{description}` (a {type(container).__name__} that outlives the call): eager PyTorch "
            "keeps the change for the next call, which an exported graph cannot",
            f"keep per-call state in a local variable (`items = list({description})` first, then change `items`)",
            construct="mutation")

    def refuse_graph_key(self, container) -> LoweringError:
        kind = "dict key" if isinstance(container, dict) else "set element"
        return self.error(f"a value computed in the graph (a tensor, or a number such as `len()` of a list a graph "
                          f"loop built) used as a {kind}: the key is only known at run time",
                          "use Python constants as keys, or keep the values in a tensor and index it",
                          construct="key")

    def check_key(self, container, key) -> None:
        if isinstance(container, (dict, set)) and _contains_graph(key):
            raise self.refuse_graph_key(container)

    def check_mutating_call(self, func, owner, args=()) -> None:
        if isinstance(owner, (dict, set)) and args and getattr(func, "__name__", "") != "update":
            self.check_key(owner, args[0])
        methods = next((m for kind, m in MUTATING_METHODS.items() if isinstance(owner, kind)), ())
        name = getattr(func, "__name__", "")
        if name in methods and not _leaves_unchanged(owner, name, args):
            self.check_mutation(owner, f".{name}()")
        if isinstance(owner, list) and has_varying_items(owner) and name not in ("append", "copy"):
            raise self.refuse_varying_list(owner, f"`.{name}()`")

    # ------------------------------------------------------------ region snapshots

    def state_snapshot(self, frame: Frame | None = None) -> dict:
        """The containers reachable from the active frames, with their contents (ids)."""
        snapshot: dict[int, tuple] = {}

        def walk(v, depth):
            if isinstance(v, (list, dict, set, tuple)) and depth < _SNAPSHOT_DEPTH:
                if isinstance(v, _CONTAINERS):
                    if id(v) in snapshot:
                        return
                    snapshot[id(v)] = (v, _contents(v))
                for child in _children(v):
                    walk(child, depth + 1)

        for f in [*self.frames, *([frame] if frame is not None else [])]:
            for v in f.env.values():
                walk(v, 0)
        return snapshot

    def check_state_kept(self, snapshot: dict, region: str, line: int) -> None:
        """Refuse when a graph region changed a Python container it does not hand back."""
        for obj, contents in snapshot.values():
            if _contents(obj) != contents:
                name = self.name_of_object(obj)
                raise self.error(
                    f"`{name}` (a {type(obj).__name__}) is changed inside the data-dependent {region} at line {line}, "
                    "where untrace cannot carry the change (it carries lists and dicts that the region itself "
                    "changes by name, not sets, nested containers or a helper's changes)",
                    f"change it under a Python condition, or keep the values in tensors: local tensor variables, "
                    f"or a list built with `append` and `torch.stack` after the {region}",
                    construct=region)

    def check_copies_kept(self, before: dict, inside: dict, carried, region: str, line: int) -> None:
        """A list or dict a region holds as its own copy, changed there but not carried out
        by name (a helper it calls changed it): refuse, as `check_state_kept` does."""
        for n, v in before.items():
            mine = inside.get(n)
            if n in carried or type(v) not in (list, dict) or mine is v or type(mine) is not type(v):
                continue
            if _contents(mine) != _contents(v):
                raise self.error(
                    f"`{n}` (a {type(v).__name__}) is changed inside the data-dependent {region} at line {line} by a "
                    "function it calls, where untrace cannot carry the change (it carries lists and dicts that the "
                    "region itself changes by name)",
                    f"change `{n}` in the {region} itself (`{n}.append(...)`), or return the new items from the "
                    "function and add them after it", construct=region)

    def check_unshared(self, names, frame: Frame, region: str, line: int) -> None:
        """A container a region changes in place is copied for the region and written back
        after it: refuse when the region could also reach it under another name."""
        for n in names:
            obj = frame.env.get(n)
            if not isinstance(obj, _CONTAINERS):
                continue
            for other, v in frame.env.items():
                if other != n and not other.startswith("$") and _reaches(v, obj, 0):
                    raise self.error(
                        f"`{n}` is changed inside the data-dependent {region} at line {line}, and the same "
                        f"{type(obj).__name__} is also reachable as `{other}`, which untrace does not follow",
                        f"use one name for it inside the {region}", construct=region)

    def write_back(self, frame: Frame, name: str, merged) -> None:
        """Bind `name` to a region's result; a list or dict changed in place keeps its identity
        (every other holder of it sees the change, as in eager)."""
        before = frame.env.get(name)
        if type(before) is list and type(merged) is list:
            before[:] = merged
            frame.env[name] = before
        elif type(before) is dict and type(merged) is dict:
            before.clear()
            before.update(merged)
            frame.env[name] = before
        else:
            frame.env[name] = merged

    def name_of_object(self, obj) -> str:
        for frame in reversed(self.frames):
            for name, bound in frame.env.items():
                if bound is obj and not name.startswith("$"):
                    return name
        known = self.foreign.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        return "items"

    def merge_conditional_names(self, frame: Frame, before: dict, runs: Value, what: str) -> None:
        """Names that code run only where `runs` holds (the right side of a data-dependent
        `and` / `or`) rebound (`:=`): `torch.where(runs, new, old)`."""
        for name, new in list(frame.env.items()):
            old = before.get(name, _UNBOUND)
            if new is old:
                continue
            ok = old is not _UNBOUND and all(isinstance(v, Value) or _is_number(v) for v in (new, old))
            if ok:
                a, b = self.as_graph(new), self.as_graph(old)
                ok = a.dtype == b.dtype
            if not ok:
                raise self.error(f"`{name}` is assigned in {what}, which eager PyTorch runs only for some values "
                                 "of the data on its left, and untrace cannot merge the two values",
                                 f"assign `{name}` before the condition, or nest the `if`s", construct="boolop")
            merged = self.call_op("torch.where", [runs, a, b], {})
            if all(isinstance(v, (int, float)) or v in self.python_numbers for v in (new, old)):
                self.python_number(merged)
            self.merge_aliases(merged, (new, old), f"{what} at line {self.location[1]}")  # eager binds one of them
            frame.env[name] = merged

    # ------------------------------------------------------------ nonlocal

    def hand_on(self, frame: Frame, names) -> None:
        """Names a region bound in `frame` that came from nonlocal writes: when `frame` is
        itself a region's copy, that region must hand them on too."""
        for name in names:
            if frame.region is not None and name not in frame.outputs and frame.token is not None:
                raise MoreOutputs(frame, name)

    def current_view(self, frame: Frame) -> Frame:
        """The innermost active copy of `frame`'s function frame (a region's copy while the
        region runs), where reads and writes of its names go."""
        root = frame.root()
        for f in reversed(self.frames):
            if f.root() is root:
                return f
        return root

    def assign_outer(self, frame: Frame, name: str, value) -> None:
        """`name = value` where `name` is declared `nonlocal` / `global` in `frame`."""
        if name in frame.global_names:
            raise self.error(f"assigning the global `{name}` (declared `global`) in forward changes module state "
                             "that outlives the call", "keep per-call state in local variables, and return it",
                             construct="global")
        target = self.current_view(frame.enclosing) if frame.enclosing is not None else None
        while target is not None and name not in target.env and name in target.nonlocals and target.enclosing:
            target = self.current_view(target.enclosing)
        if target is None:
            raise self.error(f"cannot find the variable `{name}` declared `nonlocal`", construct="nonlocal",
                             hint="define the variable in the enclosing function first")
        region_of = target if target.region is not None else None
        if target.graph == frame.graph and region_of is not None and name not in region_of.outputs \
                and region_of.token is not None:
            raise MoreOutputs(region_of, name)  # the region is emitted again, handing `name` on
        if target.graph != frame.graph or (region_of is not None and name not in region_of.outputs):
            region = region_of.region if region_of is not None else "loop or if"
            line = f" at line {region_of.region_line}" if region_of is not None else ""
            raise self.error(
                f"`{name}` (declared `nonlocal` in {frame.qualname}) is changed inside the data-dependent "
                f"{region}{line}, which does not hand `{name}` on to the graph",
                f"return the new value instead (`{name} = {frame.qualname.rsplit('.', 1)[-1]}({name}, ...)`)",
                construct="nonlocal")
        target.env[name] = value
        frame.env[name] = value


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _reaches(v, obj, depth: int) -> bool:
    if v is obj:
        return True
    if depth >= _SNAPSHOT_DEPTH or isinstance(v, (str, bytes, Value, torch.Tensor)):
        return False
    return any(_reaches(c, obj, depth + 1) for c in _children(v))
