"""Containers: tuples, lists, dicts and sets built in forward, unpacking and iteration,
comprehensions, and the lists a graph loop appends to (scan outputs, `Stacked`) and a
data-dependent `if` appends to (`Maybe`)."""

from __future__ import annotations

import torch

from analyzer.analyses.kinds.region_writes import mutated_names
from analyzer.frontend import ir
from lowering.graph import Value
from lowering import numpy_arrays
from lowering.numpy_arrays import NDArray
from lowering.interp.graph_rows import GraphRows, refuse_python_iteration, row_count, row_item
from lowering.interp.graph_rows import rows_of as _rows_of
from lowering.interp.python_state import has_varying_items
from lowering.interp.values import EarlierIterations, Frame, GraphRange, Maybe, Stacked, TensorItems, _rank_only


_SEQUENCE_OPS = {"torch.stack", "torch.cat", "torch.concat", "torch.concatenate", "torch.tensor", "torch.as_tensor"}


def _mutated_containers(stmt, frame: Frame) -> list[str]:
    """Lists, dicts and tensors that a region changes in place (`lst.append(v)`,
    `d[k] = v`, `t[i] = v`, `x.add_(1)`): they are region results (If outputs, Loop
    carried values) too, and each branch/body works on its own copy."""
    return sorted(n for n in mutated_names(stmt) if isinstance(frame.env.get(n), (list, dict, Value)))


def _copy_containers(env: dict) -> dict:
    return {k: (list(v) if type(v) is list else dict(v) if type(v) is dict else v) for k, v in env.items()}


class GeneratorItems(list):
    """A generator expression's items, computed when it is made: a list wherever a list
    is taken (`sum`, `torch.stack`, a `for`), and an iterator for `next()`, which hands
    out the items left, as the generator would."""

    def __next__(self):
        if not self:
            raise StopIteration
        return self.pop(0)


class Containers:
    def iterate(self, iterable):
        if isinstance(iterable, NDArray):
            raise self.error("iterating over a NumPy array of tensor data is not supported by untrace",
                             "iterate over the tensor", construct="for")
        if isinstance(iterable, Value):
            return iter(self.unpack(iterable, 0, True))  # rows of a static first axis
        if isinstance(iterable, GraphRows):
            raise refuse_python_iteration(self, "iterating in Python over")
        if isinstance(iterable, torch.nn.ModuleDict):
            return iter(iterable.keys())
        if isinstance(iterable, dict):
            self.check_memo_read(iterable, "iterating over")
            return iter(iterable.keys())
        if has_varying_items(iterable):
            raise self.refuse_varying_list(iterable, "iterating over")
        return iter(iterable)

    def unpack(self, value, n: int, starred: bool) -> list:
        if isinstance(value, NDArray):
            # `q1, q3 = np.percentile(a, [25, 75])`: the rows of a static first axis, as NumPy
            # iterates (a 1-d array gives NumPy scalars).
            size = None if not value.value.rank or value.scalar else self.g.size(value.value, 0)
            if not isinstance(size, int):
                raise self.error("unpacking a NumPy array of tensor data is not supported by untrace unless its "
                                 "first axis is known at export time", "index the rows (a[0], a[1])",
                                 construct="unpack")
            return [numpy_arrays.getitem(self, value, i) for i in range(size)]
        if isinstance(value, Value):
            if value.rank is None or value.rank == 0:
                raise self.error("cannot unpack a tensor of unknown rank", construct="unpack",
                                 hint="give the input a fixed rank (reshape it), or index the items")
            size = self.g.size(value, 0)
            if isinstance(size, Value):
                if starred:
                    return [Stacked(value)]  # list(t) / t.unbind(0) over a dynamic axis: its rows
                raise self.error("unpacking a tensor along a dynamic dimension into names", construct="unpack",
                                 hint="index the items (`t[0]`, `t[1]`), or make that axis static")
            return list(self.call_op("Tensor.unbind", [value], {}))
        if isinstance(value, Stacked):
            raise self.error("unpacking the list built by a graph loop", "stack it with torch.stack", construct="unpack")
        if has_varying_items(value):
            raise self.refuse_varying_list(value, "unpacking")
        try:
            return list(value)
        except TypeError:
            raise self.error(f"cannot unpack {type(value).__name__}", construct="unpack",
                             hint="unpack a tuple, list or tensor") from None

    def _ev_Tuple(self, e, frame):
        return tuple(self._elements(e.elts, frame))

    def _ev_List(self, e, frame):
        return list(self._elements(e.elts, frame))

    def _ev_Set(self, e, frame):
        items = self._elements(e.elts, frame)
        for item in items:
            self.check_key(set(), item)
        return set(items)

    def _elements(self, elts, frame):
        out = []
        for x in elts:
            if isinstance(x, ir.Starred):
                out.extend(self.unpack(self.eval(x.value, frame), 0, True))
            else:
                out.append(self.eval(x, frame))
        return out

    def _ev_Dict(self, e, frame):
        out = {}
        for k, v in e.items:
            if k is None:
                out.update(self.eval(v, frame))
            else:
                key = self.eval(k, frame)
                self.check_key(out, key)
                out[key] = self.eval(v, frame)
        return out

    def _ev_Comprehension(self, e, frame):
        """A comprehension runs as Python does over a known iterable. A filter on tensor
        values (`[t for t in items if t.norm() > 0.5]`) keeps every item as a `Maybe`
        present where the filter holds, as a data-dependent `if` around an `append` does:
        `torch.stack` / `torch.cat` of the list Compress it, `len()` counts it, other uses
        are refused. Over the rows of a dynamic axis it is a Loop whose scan outputs are the
        items and the filter (`map_rows`). Under such a filter the element is computed for
        every item, so it may not update tensors in place or change Python state."""
        inner = Frame(dict(frame.env), frame.globals, frame.path, frame.qualname, frame.self_obj, frame.cls)
        results = []
        line = self.location[1]

        def element(valid):
            if valid is None:
                return self.eval(e.elt, inner)
            return self.unconditionally(lambda: self.eval(e.elt, inner), line)

        def keep(gen, valid):
            """The filters' conjunction: True/False when known, else a graph bool."""
            for c in gen.ifs:
                cond = (self.eval_test(c, inner) if valid is None else
                        self.unconditionally(lambda c=c: self.eval_test(c, inner), line))
                if isinstance(cond, Value):
                    cond = self.to_bool(cond)
                    valid = cond if valid is None else self.call_op("torch.logical_and", [valid, cond], {})
                elif not self.truth(cond):
                    return False
            return True if valid is None else valid

        def run(level, valid):
            if level == len(e.generators):
                if e.kind == "dict":
                    if valid is not None:
                        raise self.error("a dict comprehension filtered on tensor values (its keys would depend on "
                                         "the data)", "build the dict without the filter and mask the values with "
                                         "torch.where", construct="comprehension")
                    results.append((self.eval(e.key, inner), self.eval(e.elt, inner)))
                else:
                    value = element(valid)
                    results.append(value if valid is None else Maybe(value, valid))
                return
            gen = e.generators[level]
            iterable = self.eval(gen.iter, inner)
            rows = _rows_of(iterable, self)
            if rows is not None and e.kind in ("list", "generator") and len(e.generators) == 1 and valid is None:
                # [f(row) for row in t (if g(row))] over a dynamic axis: a Loop whose scan
                # outputs are the list (and where the filter holds).
                def body(row):
                    self.assign(gen.target, row, inner)
                    if not gen.ifs:
                        return self.eval(e.elt, inner)
                    present = keep(gen, None)
                    if present is False:
                        return None, self.g.const(False)
                    if present is True:
                        return self.eval(e.elt, inner), None
                    return self.unconditionally(lambda: self.eval(e.elt, inner), line), present

                results.append(self.map_rows(rows, body, filtered=bool(gen.ifs)))
                return
            if isinstance(iterable, GraphRange) or rows is not None or isinstance(iterable, Value) and not iterable.rank:
                raise self.error("a comprehension over a graph-sized range, or nested over the rows of a dynamic "
                                 "axis, is not supported by untrace", "compute it with tensor operations on the "
                                 "whole tensor, or write a for loop that appends", construct="comprehension")
            for item in list(self.iterate(iterable)):
                self.assign(gen.target, item, inner)
                present = keep(gen, valid)
                if present is False:
                    continue
                run(level + 1, None if present is True else present)

        run(0, None)
        walrus = {x.target.id for x in ir.walk_expression(e) if isinstance(x, ir.NamedExpr)}
        if walrus and any(isinstance(x, Stacked) for x in results):
            raise self.error("`:=` in a comprehension over the rows of a dynamic axis (a graph loop)",
                             "assign the name in a for loop", construct="comprehension")
        for name in walrus & inner.env.keys():
            frame.env[name] = inner.env[name]  # `:=` binds in the enclosing scope, as Python's does
        if e.kind == "list":
            return results
        if any(isinstance(x, (Maybe, Stacked)) and not (isinstance(x, Stacked) and x.valid is None) for x in results):
            raise self.error(f"a {e.kind} comprehension filtered on tensor values (which items it holds depends on "
                             "the data)", "use a list comprehension and torch.stack / torch.cat the result",
                             construct="comprehension")
        if e.kind == "set":
            return set(results)
        if e.kind == "dict":
            return dict(results)
        return GeneratorItems(results)

    def unconditionally(self, fn, line: int):
        """Run `fn` for an item that a filter on tensor values may drop: the graph computes
        it for every item, so it may not update a tensor in place nor change Python state."""
        snapshot = self.state_snapshot()
        outer, self.conditional_element = self.conditional_element, line
        try:
            result = fn()
        finally:
            self.conditional_element = outer
        self.check_state_kept(snapshot, "comprehension filter", line)
        return result

    def sequence_op(self, name: str, items: list, dim: int = 0, **kwargs):
        """torch.stack / torch.cat / torch.tensor over a list that a graph loop appended to:
        the loop's scan output (iterations on axis 0) moved into place."""
        if any(isinstance(x, (EarlierIterations, TensorItems)) for x in items):
            raise self.refuse_varying_list(items, f"`{name}`")
        dim = kwargs.pop("dim", dim)
        dtype = kwargs.pop("dtype", None)
        if name in ("torch.tensor", "torch.as_tensor"):
            name, dim = "torch.stack", 0
        parts, valids = [], []
        for item in items:
            valid = None
            if isinstance(item, Maybe):
                valid = self.call_op("Tensor.reshape", [self.to_bool(item.valid), [1]], {})
                item = item.value
            if isinstance(item, Stacked):
                v = item.value
                valid = item.valid
                if valid is not None and name != "torch.stack":
                    # Each iteration's piece spans `piece` positions along dim: repeat its flag.
                    piece = self.shape(v)[1 + dim % (v.rank - 1)]
                    steps = self.shape(v)[0]
                    grid = self.g.op("Expand", self.g.unsqueeze(self.to_bool_vector(valid), [1]),
                                     self.g.shape_tensor([steps, piece]))
                    valid = self.g.op("Reshape", grid, self.g.const([-1], dtype=torch.int64))
                if name == "torch.stack":
                    rank = v.rank
                    d = dim % rank
                    if d:
                        v = self.call_op("torch.movedim", [v, 0, d], {})
                else:
                    # cat of T pieces along d: move the iteration axis next to d and merge.
                    rank = v.rank - 1
                    d = dim % rank
                    v = self.call_op("torch.movedim", [v, 0, d], {})
                    shape = list(self.shape(v))
                    merged = self.binop("*", shape[d], shape[d + 1])
                    v = self.call_op("Tensor.reshape", [v, [*shape[:d], merged, *shape[d + 2:]]], {})
            else:
                v = self.as_graph(item)
                if name == "torch.stack":
                    v = self.call_op("torch.unsqueeze", [v, dim], {})
                elif valid is not None:
                    # A conditional piece of a cat spans its whole size along dim: repeat its flag.
                    valid = self.g.op("Expand", valid, self.g.shape_tensor([self.shape(v)[dim % v.rank]]))
            parts.append(v)
            valids.append(valid)
        out = parts[0] if len(parts) == 1 else self.call_op("torch.cat", [parts], {"dim": dim})
        if any(v is not None for v in valids):
            masks = []
            for part, valid in zip(parts, valids):
                if valid is None:
                    valid = self.call_op("torch.ones", [[self.shape(part)[dim]]], {"dtype": torch.bool})
                masks.append(valid)
            mask = masks[0] if len(masks) == 1 else self.call_op("torch.cat", [masks], {"dim": 0})
            out = self.g.op("Compress", out, mask, axis=dim % out.rank)
        return self.g.cast(out, dtype) if dtype is not None else out

    def row_count(self, rows: Value | GraphRows):
        return row_count(self, rows)

    def row_item(self, rows: Value | GraphRows, index: Value):
        return row_item(self, rows, index)

    def map_rows(self, rows: Value | GraphRows, fn, filtered: bool = False) -> "Stacked":
        """fn over the rows of `rows` (dynamic first axis) in an ONNX Loop; the results
        stacked as a scan output. With `filtered`, fn returns (item, valid) and `valid`
        (None: always) is a second scan output: the list holds the rows where it is true."""
        body = self.g.subgraph()
        i = body.add_input(body.fresh("iter"), torch.int64, ())
        cond = body.add_input(body.fresh("cond"), torch.bool, ())
        snapshot = self.state_snapshot()
        saved, self.g = self.g, body
        try:
            result = fn(self.row_item(rows, i))
            item, valid = result if filtered else (result, None)
            if item is None:
                raise self.error("a comprehension over the rows of a dynamic axis whose filter is always false",
                                 "drop the comprehension (its list is empty)", construct="comprehension")
            out = self.as_graph(item)
            body.add_output(cond)
            body.add_output(out, shape=_rank_only(out))
            if filtered:
                flag = self.g.const(True) if valid is None else self.to_bool(valid)
                body.add_output(flag, shape=())
        finally:
            self.g = saved
        self.check_state_kept(snapshot, "loop", self.location[1])
        count = self.row_count(rows)
        if not filtered:
            scan = self.g.op("Loop", count, self.g.const(True), outputs=1, body=body.build_graph())
            return Stacked(scan)
        scan, flags = self.g.op("Loop", count, self.g.const(True), outputs=2, body=body.build_graph())
        return Stacked(scan, flags)

    def functional_map(self, args, kwargs):
        """functorch's map(f, xs, *args): f over the first axis of xs, results stacked."""
        fn, xs, *rest = args
        rows = self.unpack(xs, 0, True)
        results = [self.call(fn, [row, *rest], {}) for row in rows]
        return self.call_op("torch.stack", [results], {"dim": 0})
