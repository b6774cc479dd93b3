"""The values the abstract interpreter holds besides constants and graph values, its
frames, and the structural helpers over nested containers of them (`_flatten` /
`_unflatten`: the leaves an If or a Loop passes through the graph)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from analyzer.frontend import ir
from lowering.graph import Value
from lowering.numpy_arrays import NDArray


@dataclasses.dataclass
class Stacked:
    """The scan output of a graph loop: `value[i]` is what iteration i appended (only
    where `valid[i]`, when the append was conditional)."""

    value: Value
    valid: Value | None = None


class TensorItems(Stacked):
    """`.tolist()` of a 1-d tensor whose length is only known at run time: item i is
    `value[i]`, a Python number in eager (a 0-d graph value in `python_numbers` here).
    Iterating over it is a Loop (`graph_rows`); `len()` is the tensor's length."""


@dataclasses.dataclass(eq=False)
class EarlierIterations:
    """Inside a graph loop's body, what the earlier iterations appended to a list: the
    body sees `prefix + [EarlierIterations] + what this iteration appended`. Their number
    (`count`, an int64 carried by the Loop) is known, their values are not."""

    count: Value
    name: str
    line: int
    body: Any = None  # the Loop body's builder
    before: Any = None  # the list's last item before the loop (MISSING when it was empty)
    last: Value | None = None  # `out[-1]` of the previous iteration: carried once the body reads it


@dataclasses.dataclass
class Maybe:
    """A list element appended under a data-dependent `if`: present where `valid`."""

    value: Any
    valid: Any


@dataclasses.dataclass
class GraphRange:
    """`range(start, stop, step)` with graph bounds: iterated by an ONNX Loop."""

    start: Any
    stop: Any
    step: Any


@dataclasses.dataclass(frozen=True)
class EnumerateIndex:
    """enumerate's counter: the iteration number plus `start`."""

    start: int


@dataclasses.dataclass
class GraphRows:
    """What `zip` / `enumerate` make of the rows of tensors with a dynamic first axis:
    item i is the tuple of each part's item i (a row of a tensor, enumerate's counter,
    or a nested GraphRows' item)."""

    parts: tuple

    def __iter__(self):
        # The interpreter's consumers refuse it with a location (`graph_rows`); this stops
        # any other Python iteration, which would see no rows.
        from lowering.errors import LoweringError

        raise LoweringError("iterating in Python over the rows that `zip` / `enumerate` pair along a dynamic axis")


@dataclasses.dataclass
class GraphChoice:
    """`options[index]` with a graph index (a ModuleList indexed by data)."""

    options: list
    index: Value


@dataclasses.dataclass
class BoundUserMethod:
    obj: Any
    function: Any  # a Python function object


@dataclasses.dataclass
class TensorMethod:
    value: Value
    name: str
    receiver: str | None = None  # the source of the tensor it is bound to (`self.buf`), for messages


@dataclasses.dataclass
class Closure:
    fn: ir.FunctionDef
    frame: "Frame"
    defaults: dict | None = None  # evaluated once, where the `def` runs (as Python does)


class _Missing:
    def __repr__(self) -> str:
        return "<unbound>"


MISSING = _Missing()


class _ShapeChanges(Exception):
    """A loop-carried value's shape differs between iterations: redo with free dims."""


class ReturnSignal(Exception):
    def __init__(self, value):
        self.value = value


@dataclasses.dataclass
class Frame:
    env: dict
    globals: dict
    path: str
    qualname: str
    self_obj: Any = None
    cls: Any = None
    graph: int = 0  # id of the builder this frame's code emits into (alias updates stay inside it)
    # A data-dependent If branch or Loop body runs in a copy of its function's frame:
    # `origin` is that function's frame, `region` says which ("loop", "if"), `outputs`
    # the names the region hands back (If results, Loop carried values).
    origin: "Frame | None" = None
    region: str | None = None
    region_line: int = 0
    outputs: frozenset = frozenset()
    token: Any = None  # one per emission of a region: who retries when the region needs more outputs
    # Names a nested function declared `nonlocal` / `global`, and the frame it was defined in.
    nonlocals: set = dataclasses.field(default_factory=set)
    global_names: set = dataclasses.field(default_factory=set)
    enclosing: "Frame | None" = None
    first_param: str | None = None  # the function's first parameter: zero-argument `super()` binds to it
    function: Any = None  # the Python function this frame runs, when it is one (nested defs' code is in it)

    def root(self) -> "Frame":
        """The function's own frame (this one, unless it is a region's copy)."""
        return self.origin or self

    def region_copy(self, env: dict, graph: int, region: str, line: int, outputs, token=None) -> "Frame":
        return Frame(env, self.globals, self.path, self.qualname, self.self_obj, self.cls, graph=graph,
                     origin=self.root(), region=region, region_line=line, outputs=frozenset(outputs), token=token,
                     nonlocals=self.nonlocals, global_names=self.global_names, enclosing=self.enclosing)


class MoreOutputs(Exception):
    """A region's frame got a name it does not hand on (a nested function's `nonlocal`
    write): the region is emitted again with the name among its outputs."""

    def __init__(self, frame: Frame, name: str):
        super().__init__(name)
        self.frame = frame
        self.name = name


def _common_shape(a: Value, b: Value):
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        return _rank_only(a)
    return tuple(x if x == y and x is not None else None for x, y in zip(a.shape, b.shape))


def _rank_only(v: Value):
    """Declared shape of a region output: its rank, every dim free (shapes may differ
    between branches and iterations)."""
    return None if v.rank is None else (None,) * v.rank


def _graph_leaves(v, depth: int = 0):
    """The graph values inside a (nested) container."""
    if isinstance(v, Value):
        yield v
    elif isinstance(v, (list, tuple)) and depth < 8:
        for x in v:
            yield from _graph_leaves(x, depth + 1)
    elif isinstance(v, dict) and depth < 8:
        for x in v.values():
            yield from _graph_leaves(x, depth + 1)
    elif isinstance(v, (Maybe, Stacked, NDArray)):
        yield from _graph_leaves(v.value, depth + 1)
    elif dataclasses.is_dataclass(v) and not isinstance(v, type) and depth < 8:
        for field in dataclasses.fields(v):
            yield from _graph_leaves(getattr(v, field.name, None), depth + 1)


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


@dataclasses.dataclass(eq=False)
class ComplexPair:
    """A complex tensor of eager code (`lowering.interp.complex_values`): `value` is a real
    graph value whose last axis is (real, imaginary)."""

    value: Value

    @property
    def rank(self) -> int:
        return self.value.rank - 1


def _contains_graph(v) -> bool:
    if isinstance(v, (Value, Stacked, GraphRange, GraphRows, NDArray, ComplexPair)):
        return True
    if isinstance(v, (list, tuple)):
        return any(_contains_graph(x) for x in v)
    if isinstance(v, dict):
        return any(_contains_graph(x) for x in v.values())
    return False


def _same(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float, bool, str, type(None), torch.dtype)):
        return a == b
    return False


def _flatten(v):
    """(leaves, structure) of nested tuples/lists/dicts; leaves are graph values or scalars."""
    if isinstance(v, Maybe):
        return [v.value, v.valid], ("maybe", ("leaf", "leaf"))
    if isinstance(v, NDArray):
        return [v.value], ("ndarray", ("leaf",) if not v.scalar else ("scalar",))
    if isinstance(v, (tuple, list)):
        leaves, specs = [], []
        for x in v:
            lv, sp = _flatten(x)
            leaves += lv
            specs.append(sp)
        # A tuple subclass (a namedtuple) keeps its class: `out.logits` must still work
        # on what an If or a Loop hands back.
        kind = type(v) if isinstance(v, tuple) and type(v) is not tuple else type(v).__name__
        return leaves, (kind, tuple(specs))
    if isinstance(v, dict):
        leaves, specs = [], []
        for k in v:
            lv, sp = _flatten(v[k])
            leaves += lv
            specs.append((k, sp))
        return leaves, ("dict", tuple(specs))
    state = record_state(v)
    if state is not None:
        leaves, specs = [], []
        for k, x in state.items():
            lv, sp = _flatten(x)
            leaves += lv
            specs.append((k, sp))
        return leaves, (("record", type(v)), tuple(specs))
    return [v], "leaf"


def record_state(v) -> dict | None:
    """The attributes of a dataclass instance, which is a record of them: two instances of
    one class with the same attributes merge attribute by attribute, and one is rebuilt
    from the merged values (never calling `__init__` / `__post_init__` again: the values
    are what they computed). None for anything else: a dict-based dataclass (transformers'
    ModelOutput) is a dict, and the interpreter's own dataclasses are values, not records."""
    if isinstance(v, (type, dict)) or not dataclasses.is_dataclass(v):
        return None
    if type(v).__module__.split(".")[0] == "lowering":
        return None
    own = getattr(v, "__dict__", None)
    if own is not None:
        return dict(own)
    return {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}  # slots=True


def _rebuild_record(cls: type, state: dict):
    obj = object.__new__(cls)
    for k, x in state.items():
        object.__setattr__(obj, k, x)  # frozen dataclasses too: this is the merged value, not a change
    return obj


_NEVER_GRAPH = (type(None), str, torch.dtype, type(Ellipsis))


def keep_known_leaves(spec, flat_a: list, flat_b: list):
    """The leaves both sides of a merge hold as the same None, string or dtype (a
    dataclass's or namedtuple's None field, a tuple's None slot): no graph value can hold
    them, and they need none. (spec, the other leaves of each side): `_unflatten(spec,
    merged)` puts the known leaves back in their places."""
    known = tuple((i, a) for i, (a, b) in enumerate(zip(flat_a, flat_b))
                  if isinstance(a, _NEVER_GRAPH) and _same(a, b))
    if not known:
        return spec, flat_a, flat_b
    skip = {i for i, _ in known}
    return (("known", (spec, known)), [v for i, v in enumerate(flat_a) if i not in skip],
            [v for i, v in enumerate(flat_b) if i not in skip])


def _unflatten(spec, leaves: list):
    if isinstance(spec, tuple) and spec[0] == "known":
        spec, known = spec[1]
        leaves = list(leaves)
        for i, value in known:  # in increasing positions
            leaves.insert(i, value)
    it = iter(leaves)

    def build(sp):
        if sp == "leaf":
            return next(it)
        kind, children = sp
        if kind == "dict":
            return {k: build(c) for k, c in children}
        if isinstance(kind, tuple) and kind[0] == "record":
            return _rebuild_record(kind[1], {k: build(c) for k, c in children})
        if isinstance(kind, type):  # a tuple subclass
            items = [build(c) for c in children]
            return kind._make(items) if hasattr(kind, "_make") else kind(items)
        if kind == "maybe":
            return Maybe(build(children[0]), build(children[1]))
        if kind == "ndarray":
            return NDArray(next(it), scalar=children == ("scalar",))
        items = [build(c) for c in children]
        return tuple(items) if kind == "tuple" else items

    return build(spec)


def _starts_with(items: list, prefix: list) -> bool:
    return len(items) >= len(prefix) and all(x is y for x, y in zip(items, prefix))


def _spec_without_maybe(spec):
    if spec == "leaf":
        return "leaf"
    kind, children = spec
    if kind == "maybe":
        return "leaf"
    if kind == "ndarray":
        return spec
    if kind == "dict" or isinstance(kind, tuple):
        return kind, tuple((k, _spec_without_maybe(c)) for k, c in children)
    return kind, tuple(_spec_without_maybe(c) for c in children)


def _align_maybe(a, b):
    """Make list elements that are Maybe on one side Maybe on both (valid=True)."""
    def walk(x, y):
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and len(x) == len(y):
            pairs = [walk(p, q) for p, q in zip(x, y)]
            return _same_kind(x, [p for p, _ in pairs]), _same_kind(y, [q for _, q in pairs])
        if isinstance(x, Maybe) and not isinstance(y, Maybe):
            return x, Maybe(y, True)
        if isinstance(y, Maybe) and not isinstance(x, Maybe):
            return Maybe(x, True), y
        return x, y

    a2, b2 = walk(a, b)
    fa, sa = _flatten(a2)
    fb, sb = _flatten(b2)
    return fa, sa, fb, sb


def _same_kind(like, items: list):
    """`items` as a list, tuple or namedtuple, like `like`."""
    return type(like)._make(items) if hasattr(like, "_make") else type(like)(items)


def _chunks(values, sizes):
    out, pos = [], 0
    for n in sizes:
        out.append(values[pos:pos + n])
        pos += n
    return out


def _describe(v) -> str:
    if isinstance(v, Value):
        return "a tensor"
    if v is MISSING:
        return "unbound"
    return repr(v) if isinstance(v, (int, float, bool, type(None), str)) else type(v).__name__


def _zero_tensor(dtype: torch.dtype):
    import onnx.numpy_helper

    return onnx.numpy_helper.from_array(np.zeros((1,), dtype=torch.empty((), dtype=dtype).numpy().dtype))


def _is_int_like(a, b) -> bool:
    return not a.is_floating_point and not b.is_floating_point
