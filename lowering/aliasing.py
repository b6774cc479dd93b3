"""Which graph values share memory in eager PyTorch, and which an in-place update left stale.

The interpreter gives every tensor an immutable graph value, and an in-place update
(`x += 1`, `x.add_(1)`, `x[m] = 0`, `F.relu(x, inplace=True)`) rebinds the names bound to
the *same* value to the updated one. That is exact for full aliases (`y = x`,
`y = x.detach()`), but a *view* (`y = x[0]`, `x.view(...)`, `x.t()`, `np.asarray(x)`)
is another value: in eager PyTorch it sees an update of its base, and its base sees an
update made through it. untrace does not re-derive views after an update; it records
which values share memory (one *family* per storage: the first value and every view
made from it, transitively) and, when a member is updated in place, marks every other
member *stale*. Reading a stale value is refused with the update's and the view's
lines; a view that is never read again is harmless, so dead views still export.

Staleness is scoped to the graph (If branch, Loop body) where the update ran: the other
branch of the same `if` still sees the old value (`Aliases.alternatives`), code after the
`if` or loop sees it stale, in the enclosing graph or in a later region of it. A graph loop's body runs many times but is interpreted once, so a value read in
the body *before* an update made later in the same body would be read stale by the next
iteration: that is refused at the update.

A view made by basic indexing (`y = x[i, :n]`) is the one kind of view whose update can
be written back exactly: an in-place update of `y` is also `x[i, :n] = y_new` on its base,
an out-of-place ScatterElements, after which every name for `x` holds the updated base and
every name for `y` the updated view (`Aliases.written_back`). Other views of the family
are still marked stale, so reading one of them after the update is refused as before.
A view made by any other op (`view`, `t()`, `permute`, ...) has no exact inverse here,
and an update through it leaves its base stale.

A value merged from the sides of a data-dependent region (a ternary, an If result, a
Loop-carried value) is in eager PyTorch the very tensor one side produced, chosen by the
data: it may share memory with whatever any side shares memory with. It is recorded as a
*merge* over the storages (family roots) of all its sides (`Aliases.merge`): an update of
any of those storages leaves it stale, an update of it leaves all of them stale (the
message says the view was chosen by a data-dependent branch or loop). Where every side of
an If is a view of one base by basic indexing, the merge is an indexed view too, its index
a `ChosenIndex`: an update of it is written back by an If that assigns into the base the
region each side chose. A Loop-carried value is a view of whatever the previous iteration
left under its name: the body is interpreted again until the carried input's storages hold
everything the body hands on (`lowering.interp.data_loops`).

A lowering that hands back a value it already handed out (`clone()` returning its input,
two `torch.zeros(3)` deduplicated into one constant) would make two tensors look like
one; such results get a fresh `Identity`, except where eager PyTorch really returns the
same tensor (`SELF_ALIAS_OPS`, in-place ops).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lowering.graph import GraphBuilder, Value

# Eager returns a view of (or may share memory with) the first argument.
VIEW_OPS = frozenset(
    f"{prefix}.{op}"
    for op in ("view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "ravel", "squeeze", "unsqueeze",
               "transpose", "swapaxes", "swapdims", "t", "mT", "T", "H", "mH", "adjoint", "permute", "movedim",
               "moveaxis", "narrow", "select", "expand", "expand_as", "broadcast_to", "unbind", "split",
               "split_with_sizes", "tensor_split", "hsplit", "vsplit", "dsplit", "chunk", "diagonal", "unfold",
               "as_strided", "contiguous", "real", "imag", "view_as_real", "view_as_complex", "atleast_1d",
               "atleast_2d", "atleast_3d", "alias", "align_to", "numpy")
    for prefix in ("torch", "Tensor")
) | {"operator.getitem", "torch.broadcast_tensors", "torch.meshgrid", "torch.nn.Flatten", "torch.nn.Unflatten"}

# Eager returns the argument itself when nothing changes (same dtype/device), or a
# tensor with the same storage, shape and strides: a full alias, exact under rebinding.
SELF_ALIAS_OPS = frozenset(
    f"{prefix}.{op}"
    for op in ("detach", "detach_", "to", "type", "type_as", "float", "double", "half", "bfloat16", "int", "long",
               "short", "char", "byte", "bool", "cpu", "cuda", "requires_grad_", "positive", "conj", "resolve_conj",
               "resolve_neg", "as_tensor", "asarray")
    for prefix in ("torch", "Tensor")
) | {f"torch.nn.functional.{op}" for op in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                            "feature_alpha_dropout")} | {"torch.nn.Identity", "torch.nn.Dropout",
                                                                        "torch.nn.Dropout1d", "torch.nn.Dropout2d",
                                                                        "torch.nn.Dropout3d", "torch.nn.AlphaDropout"}


def is_in_place(name: str) -> bool:
    """`Tensor.add_`, `torch.relu_`, `F.relu_`: the trailing-underscore in-place forms."""
    last = name.rsplit(".", 1)[-1]
    return last.endswith("_") and not last.startswith("_") and name.startswith(("Tensor.", "torch."))


def is_basic_index(index: Any) -> bool:
    """Whether `x[index]` is a view (basic indexing) rather than a copy (advanced
    indexing with a list or a tensor of rank >= 1). An index of unknown kind counts as
    a view: over-reporting only refuses, under-reporting would be silently wrong."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, (list,)) or type(part).__name__ in ("ndarray", "NDArray"):
            return False
        if isinstance(part, Value) and part.rank not in (0, None):
            return False
    return True


@dataclasses.dataclass(frozen=True)
class ChosenIndex:
    """The index of a view chosen by a data-dependent If: `then` where `cond` holds, else
    `orelse` (each an index of the same base, or a ChosenIndex of an inner If)."""

    cond: Value
    then: Any
    orelse: Any

    def values(self):
        """The graph values a write-back through this index reads (conditions, index tensors)."""
        yield self.cond
        for part in (self.then, self.orelse):
            if isinstance(part, ChosenIndex):
                yield from part.values()
                continue
            for p in part if isinstance(part, tuple) else (part,):
                for v in (p.start, p.stop, p.step) if isinstance(p, slice) else (p,):
                    if isinstance(v, Value):
                        yield v


@dataclasses.dataclass(frozen=True)
class Staleness:
    """Why a value is stale: what was updated in place, where, and in which graph."""

    updated: str  # the source name of the updated tensor
    line: int
    scope: GraphBuilder
    through_view: bool  # the update went through a view of this value
    chosen: str | None = None  # the updated tensor is a view chosen by this data-dependent region


class Aliases:
    """Memory families of graph values, stale marks, and reads inside graph loops."""

    def __init__(self) -> None:
        self._root: dict[Value, Value] = {}
        self._family: dict[Value, list[Value]] = {}
        self.view_line: dict[Value, int] = {}
        self.stale: dict[Value, Staleness] = {}
        self.handed_out: set[Value] = set()
        self._made_in: dict[Value, GraphBuilder] = {}
        self._loop_bodies: set[int] = set()
        self.active_loops = 0  # graph loop bodies being interpreted now
        self._reads: dict[int, set[Value]] = {}
        self._indexed_from: dict[Value, tuple[Value, Any]] = {}
        self._alternative: dict[int, tuple[GraphBuilder, GraphBuilder]] = {}  # If side -> (it, the other side)
        self.chosen: dict[Value, str] = {}  # merged value -> the region that chose it ("the data-dependent `if` at line 3")
        # Ordered (dicts, tuples), so that messages naming the first of several do not vary between runs.
        self._storages: dict[Value, tuple[Value, ...]] = {}  # merged root -> the family roots it may share
        self._merged_into: dict[Value, dict[Value, None]] = {}  # family root -> the merged roots that may share it

    def snapshot(self) -> dict:
        """The state, to put back when a region is emitted again (`restore`): what a
        discarded attempt at a Loop body marked stale must not stay stale."""
        return _copied(vars(self))

    def restore(self, state: dict) -> None:
        vars(self).update(_copied(state))

    # ------------------------------------------------------------------ write-back

    def add_indexed_view(self, view: Value, base: Value, index: Any, line: int | None) -> None:
        """`view` is `base[index]` with a basic index: an update of it can be written back."""
        self.add_view(view, base, line)
        self._indexed_from[view] = (base, index)

    def indexed_source(self, view: Value) -> tuple[Value, Any] | None:
        """(base, index) when `view` is `base[index]` with a basic (or chosen) index."""
        return self._indexed_from.get(view)

    def written_back(self, view: Value, builder: GraphBuilder) -> tuple[Value, Any] | None:
        """(base, index) when an update of `view` is written back into its base: the view
        was made by basic indexing and its base is not stale as seen from `builder`."""
        source = self._indexed_from.get(view)
        if source is None or self.staleness(source[0], builder) is not None:
            return None
        return source

    # ------------------------------------------------------------------ families

    def root(self, v: Value) -> Value:
        return self._root.get(v, v)

    def family(self, v: Value) -> list[Value]:
        root = self.root(v)
        return [root, *self._family.get(root, [])]

    def storages(self, v: Value) -> tuple[Value, ...]:
        """The family roots `v` may share memory with: its own, or for a merged value (or a
        view of one) those of every side."""
        root = self.root(v)
        return self._storages.get(root, (root,))

    def sharing(self, v: Value) -> list[Value]:
        """Every value that may share memory with `v` (`v` included)."""
        out: dict[Value, None] = {}
        for storage in self.storages(v):
            for root in (storage, *self._merged_into.get(storage, ())):
                out.update(dict.fromkeys(self.family(root)))
        return list(out)

    def may_share(self, a: Value, b: Value) -> bool:
        return not set(self.storages(a)).isdisjoint(self.storages(b))

    def merge(self, out: Value, sides, chosen: str) -> None:
        """`out` is, in eager, the tensor one of `sides` is, chosen by the data (`chosen`
        names the region): it may share memory with whatever any side may share."""
        storages = tuple(dict.fromkeys(r for s in sides if isinstance(s, Value) and s is not out
                                       for r in self.storages(s)))
        if not storages:
            return
        self._storages[out] = storages
        for storage in storages:
            self._merged_into.setdefault(storage, {})[out] = None
        self.chosen[out] = chosen

    def chosen_by(self, v: Value) -> str | None:
        """The data-dependent region that chose `v` (or the value `v` is a view of)."""
        return self.chosen.get(v) or self.chosen.get(self.root(v))

    def add_view(self, view: Value, base: Value, line: int | None) -> None:
        """`view` shares memory with `base` (made at `line`; None for a loop's carried value)."""
        if view is base:
            return
        root = self.root(base)
        self._storages.pop(view, None)  # an If result that now is the updated base: it shares the base's storage
        self._root[view] = root
        self._family.setdefault(root, []).append(view)
        if line is not None:
            self.view_line[view] = line

    def made(self, v: Value, builder: GraphBuilder) -> None:
        self.handed_out.add(v)
        self._made_in.setdefault(v, builder)

    # ------------------------------------------------------------------ staleness

    def mark_updated(self, old: Value, new: Value, updated: str, line: int, builder: GraphBuilder) -> list[Value]:
        """`old` was updated in place into `new`: every other member of its family is
        stale in `builder`'s scope; `new` joins the family. Returns the values read
        earlier in an enclosing graph loop body that this makes stale there."""
        members = self.sharing(old)
        storages = self.storages(old)
        chosen = self.chosen_by(old)
        read_then_stale = []
        for v in members:
            if v is new:
                continue
            through_view = v is not old and v in storages
            self.stale[v] = Staleness(updated, line, builder, through_view, chosen)
            for body in self._enclosing_loops(builder):
                if v in self._reads.get(body, ()) and not self._made_inside(v, body):
                    read_then_stale.append(v)
        self.add_view(new, old, None)
        return read_then_stale

    def alternatives(self, then: GraphBuilder, orelse: GraphBuilder | None = None) -> None:
        """`then` and `orelse` are the two sides of one If: neither sees the other's updates
        (called with the then side alone before the else side exists)."""
        if orelse is not None:
            self._alternative[id(then)] = (then, orelse)
            self._alternative[id(orelse)] = (orelse, then)

    def staleness(self, v: Value, builder: GraphBuilder) -> Staleness | None:
        """Why `v` is stale as seen from `builder` (None when it is not): the update ran
        in this graph, an enclosing one, or one that has finished before `builder` began
        (nested in it, or in an enclosing graph), but not on the other side of an If
        whose one side holds `builder`."""
        mark = self.stale.get(v)
        if mark is None:
            return None
        ancestors = list(_chain(builder))
        below = None  # the graph on the update's side just below the first graph enclosing both
        for b in _chain(mark.scope):
            if any(b is a for a in ancestors):
                if below is None or b is builder:
                    return mark  # one encloses the other
                other = ancestors[next(i for i, a in enumerate(ancestors) if a is b) - 1]
                pair = self._alternative.get(id(below))
                return None if pair is not None and pair[0] is below and pair[1] is other else mark
            below = b
        return mark

    # ------------------------------------------------------------------ graph loops

    def enter_loop_body(self, body: GraphBuilder) -> None:
        self._loop_bodies.add(id(body))

    def note_read(self, v: Value, builder: GraphBuilder) -> None:
        if not self.active_loops:
            return
        for body in self._enclosing_loops(builder):
            self._reads.setdefault(body, set()).add(v)

    def _enclosing_loops(self, builder: GraphBuilder):
        b = builder
        while b is not None:
            if id(b) in self._loop_bodies:
                yield id(b)
            b = b.parent

    def _made_inside(self, v: Value, body_id: int) -> bool:
        b = self._made_in.get(v)
        while b is not None:
            if id(b) == body_id:
                return True
            b = b.parent
        return False


def _copied(state: dict) -> dict:
    """`Aliases` fields copied down to their lists and sets (the values themselves are shared)."""
    def copy(v):
        if isinstance(v, dict):
            return {k: copy(x) for k, x in v.items()}
        return list(v) if isinstance(v, list) else set(v) if isinstance(v, set) else v

    return {k: copy(v) for k, v in state.items()}


def _chain(builder: GraphBuilder):
    """`builder` and the graphs enclosing it, innermost first."""
    while builder is not None:
        yield builder
        builder = builder.parent
