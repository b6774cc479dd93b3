"""Tail duplication: a data-dependent `if` whose sides cannot be merged into one value per
name is lowered with the code after it once per side (`lowering.interp.fork_points`).

The driver lowers forward again for each side of each such `if` (a decision tree, at most
`MAX_LEAVES` lowerings deep in all), then assembles: the nodes both sides' lowerings share
(everything before the `if`'s condition was computed, checked to be the same), then one
`If(cond)` whose then-branch holds what the True lowering made after that point and
whose outputs are that lowering's outputs, the else-branch the same from the False one.

- Outputs: the same number, names, ranks and dtypes on both sides (refused otherwise: a
  model output has one rank, which ONNX declares); a dim the sides disagree on is free.
- Probes (`export(probes=True)`): the fork's own is 1 in the then-branch and 0 in the
  else-branch; a probe one side never reaches is -1 on the other, as in any If.
- Names: the else side's names that the then side also uses are renamed (each run names
  values from the same counter); initializers are one set (a name both sides made for
  the same tensor is kept once, for another tensor renamed on the else side).
- State: each lowering starts from the objects as forward found them. Changes forward
  leaves behind (lazy set-up, which `lowering.exporter` keeps after a second lowering
  confirms it) are refused here: which side's change eager keeps depends on tensor data.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from lowering.errors import GraphConstructionError, LoweringError
from lowering.graph import GraphBuilder, Value, _join_dims, _subgraphs, _value_info, model_of
from lowering.interp.fork_points import Fork, ForkSite

MAX_LEAVES = 8  # lowerings of forward one export may assemble (2 ** 3: three forks in a row)
PROBE_PREFIX = "probe|"  # the outputs `export(probes=True)` adds after the real ones


@dataclasses.dataclass
class Lowered:
    """One lowering's top-level graph, before dead nodes are pruned (the node indexes of
    its fork points hold), or the assembly of several."""

    nodes: list[onnx.NodeProto]
    inputs: list[Value]
    outputs: list[Value]
    initializers: dict[str, TensorProto]
    domains: dict[str, int]
    points: dict[int, ForkSite]  # the fork sites this lowering decided, by ordinal

    @classmethod
    def of(cls, g: GraphBuilder, points: dict[int, ForkSite]) -> Lowered:
        return cls(list(g.nodes), list(g.inputs), list(g.outputs), dict(g.root._initializers),
                   dict(g.root._domains), dict(points))

    def model(self, opset: int) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, "untrace", [_value_info(i.name, i.dtype, i.shape) for i in self.inputs],
                                  [_value_info(o.name, o.dtype, o.shape) for o in self.outputs])
        return model_of(graph, opset, self.domains, self.initializers.values())


class StateLeftAsFound:
    """The journal of an export that forked: every lowering's changes are undone already."""

    def changed_state(self):
        return None

    def undo_object_changes(self) -> None:
        pass


def lower_once_per_side(run: Callable[[dict[int, bool]], tuple[GraphBuilder, object]], opset: int):
    """`run(decisions)` lowers forward once (the graph with its outputs, and the interpreter).
    Returns the model and the interpreter whose journal holds what forward left changed."""
    try:
        g, interp = run({})
    except Fork as fork:
        return _Tree(run).split({}, fork).model(opset), StateLeftAsFound()
    try:
        return g.to_model(opset), interp
    except BaseException:
        interp.undo_object_changes()
        raise


class _Tree:
    """The lowerings of one export, one per combination of the decisions on its forks."""

    def __init__(self, run):
        self.run = run
        self.leaves = 1
        self.sites: list[Fork] = []

    def lower(self, decisions: dict[int, bool], taken: tuple[str, ...] = ()) -> Lowered:
        try:
            g, interp = self.run(decisions)
        except Fork as fork:
            if fork.site.ordinal in decisions:
                raise GraphConstructionError(f"fork {fork} met twice in one lowering") from None
            return self.split(decisions, fork, taken)
        except LoweringError as exc:
            # Refused on one side only: say for which inputs the code was being lowered.
            located = copy.copy(exc)
            located.message = f"{exc.message} (lowered for the inputs where {' and '.join(dict.fromkeys(taken))})"
            located.args = (located.message,)
            raise located from None
        left = interp.changed_state()
        interp.undo_object_changes()  # the next lowering starts from the objects as forward found them
        if left is not None:
            path, line = self.sites[0].site.where  # the first fork: every lowering follows one side of it
            raise LoweringError(
                f"forward changes {left.describe} and leaves it changed, and the code after the data-dependent `if` "
                f"at {path}:{line} is lowered once per side: which side's change eager PyTorch keeps depends on "
                "tensor data", path=left.where[0], line=left.where[1],
                hint="restore it before forward returns (try / finally), or give that `if`'s sides one rank, dtype "
                     "and None-ness")
        return Lowered.of(g, interp.fork_points)

    def split(self, decisions: dict[int, bool], fork: Fork, taken: tuple[str, ...] = ()) -> Lowered:
        self.sites.append(fork)
        self.leaves += 1
        if self.leaves > MAX_LEAVES:
            ifs = ", ".join(dict.fromkeys(f"{f.site.where[0]}:{f.site.where[1]}" for f in self.sites))
            raise LoweringError(
                f"too many data-dependent `if`s whose sides cannot be merged, each lowered with the code after it "
                f"once per side: more than {MAX_LEAVES} lowerings of forward, for the `if`s at {ifs} (at the first: "
                f"{self.sites[0].reason.message})",
                path=fork.site.where[0], line=fork.site.where[1], construct="if",
                hint="give the sides of some of them one rank, dtype and None-ness, so that they merge into one value")
        where = f"the data-dependent `if` at {fork.site.where[0]}:{fork.site.where[1]}"
        then = self.lower({**decisions, fork.site.ordinal: True}, (*taken, f"{where} is true"))
        orelse = self.lower({**decisions, fork.site.ordinal: False}, (*taken, f"{where} is false"))
        return assemble(fork.site, then, orelse)


# ---------------------------------------------------------------------------- assembly

def assemble(site: ForkSite, then: Lowered, orelse: Lowered) -> Lowered:
    """The shared prefix, then `If(site.cond)` over what each side made after it."""
    _check_same_prefix(site, then, orelse)
    real_t, real_f = ([o for o in side.outputs if not o.name.startswith(PROBE_PREFIX)] for side in (then, orelse))
    _check_same_outputs(site, real_t, real_f)
    used = _all_names(then) | _all_names(orelse)
    fresh = _Fresh(used)
    renames_f: dict[str, str] = {}
    initializers = dict(then.initializers)
    names_t = _all_names(then)
    post_fork_f = _defined(orelse.nodes[site.nodes:]) | set(list(orelse.initializers)[site.initializers:])
    for name in sorted(post_fork_f & names_t):
        tensor = orelse.initializers.get(name)
        if tensor is not None and name in then.initializers and _same_tensor(tensor, then.initializers[name]):
            continue  # the same constant on both sides: one initializer
        renames_f[name] = fresh(name)
    for name, tensor in orelse.initializers.items():
        if name in renames_f:
            tensor = _copy(tensor)
            tensor.name = renames_f[name]
        initializers.setdefault(tensor.name, tensor)
    probe_keys = list(dict.fromkeys(o.name for side in (then, orelse) for o in side.outputs
                                    if o.name.startswith(PROBE_PREFIX)))
    outputs = [*(_merged(t, f) for t, f in zip(real_t, real_f)), *(_probe_output(key, then, orelse) for key in probe_keys)]
    branches = [_branch(side, site, renames, outputs, fresh, label)
                for side, renames, label in ((then, {}, "then"), (orelse, renames_f, "else"))]
    fork = helper.make_node("If", [site.cond], [o.name for o in outputs], name=fresh("If_fork"),
                            then_branch=branches[0], else_branch=branches[1])
    domains = {**orelse.domains, **then.domains}
    points = {o: p for o, p in then.points.items() if o < site.ordinal}
    return Lowered(then.nodes[:site.nodes] + [fork], then.inputs, outputs, initializers, domains, points)


def _check_same_prefix(site: ForkSite, then: Lowered, orelse: Lowered) -> None:
    """Lowering is deterministic: both sides' lowerings made the same graph up to the fork."""
    k, m = site.nodes, site.initializers
    same = (then.points.get(site.ordinal) == site == orelse.points.get(site.ordinal)
            and then.inputs == orelse.inputs
            and [n.SerializeToString() for n in then.nodes[:k]] == [n.SerializeToString() for n in orelse.nodes[:k]]
            and [(n, t.SerializeToString()) for n, t in list(then.initializers.items())[:m]]
            == [(n, t.SerializeToString()) for n, t in list(orelse.initializers.items())[:m]])
    if not same:
        raise GraphConstructionError(f"the lowerings of the two sides of the data-dependent `if` at "
                                     f"{site.where[0]}:{site.where[1]} differ before it")


def _check_same_outputs(site: ForkSite, real_t: list[Value], real_f: list[Value]) -> None:
    path, line = site.where
    if [o.name for o in real_t] != [o.name for o in real_f]:
        raise LoweringError(
            f"forward returns {len(real_t)} tensors when the data-dependent `if` here is true and {len(real_f)} when "
            "it is false (the code after it is lowered once per side, and the model has one set of outputs)",
            path=path, line=line, construct="if", hint="return the same structure, with tensors, on both paths")
    for t, f in zip(real_t, real_f):
        if None not in (t.rank, f.rank) and t.rank != f.rank:
            raise LoweringError(
                f"output `{t.name}` has rank {t.rank} when the data-dependent `if` here is true and rank {f.rank} "
                "when it is false (the code after it is lowered once per side, and an ONNX output has one rank)",
                path=path, line=line, construct="if", hint="reshape the output to one rank on both paths")
        if t.dtype != f.dtype:
            raise LoweringError(
                f"output `{t.name}` is {t.dtype} when the data-dependent `if` here is true and {f.dtype} when it is "
                "false (the code after it is lowered once per side, and an ONNX output has one dtype)",
                path=path, line=line, construct="if", hint="cast the output to one dtype on both paths")


def _probe_output(key: str, then: Lowered, orelse: Lowered) -> Value:
    shapes = [o.shape for side in (then, orelse) for o in side.outputs if o.name == key]
    lengths = {s[0] if s and isinstance(s[0], int) else None for s in shapes}
    return Value(key, torch.int64, (lengths.pop() if len(lengths) == 1 else None,))


def _branch(side: Lowered, site: ForkSite, renames: dict[str, str], outputs: list[Value], fresh, label: str):
    """What `side` made after the fork point, as an If branch yielding `outputs`: its own
    outputs renamed (the If's outputs take their names), a probe it never reaches -1."""
    renames = {**renames, **{o.name: fresh(f"{o.name.split('|')[0]}_{label}") for o in side.outputs}}
    nodes = [_renamed(n, renames) for n in side.nodes[site.nodes:]]
    produced = _defined(nodes)
    own = {o.name: o for o in side.outputs}
    yields = []
    for out in outputs:
        mine = own.get(out.name)
        if mine is None:  # a probe this side never reaches: -1 per entry the other side records
            name = fresh(f"unreached_{label}")
            values = numpy_helper.from_array(np.full(out.shape[0] or 1, -1, dtype=np.int64), name)
            nodes.append(helper.make_node("Constant", [], [name], value=values))
            yields.append(_value_info(name, torch.int64, (out.shape[0] or 1,)))
            continue
        name = renames[mine.name]
        if name not in produced:  # the model's outputs are Identities after everything (`exporter`)
            raise GraphConstructionError(f"output `{mine.name}` is not made after the fork at "
                                         f"{site.where[0]}:{site.where[1]}")
        yields.append(_value_info(name, mine.dtype, mine.shape))
    return helper.make_graph(nodes, fresh(f"{label}_branch"), [], yields)


def _merged(out: Value, other: Value) -> Value:
    """The If output: the dims both sides agree on (no shape when one side has none)."""
    if out.shape is None or other.shape is None or len(out.shape) != len(other.shape):
        return dataclasses.replace(out, shape=None)
    return dataclasses.replace(out, shape=tuple(_join_dims(a, b) for a, b in zip(out.shape, other.shape)))


# ---------------------------------------------------------------------------- names

class _Fresh:
    def __init__(self, used: set[str]):
        self.used = used

    def __call__(self, hint: str) -> str:
        n = 0
        while True:
            n += 1
            name = f"{hint}__{n}"
            if name not in self.used:
                self.used.add(name)
                return name


def _all_names(side: Lowered) -> set[str]:
    names = {i.name for i in side.inputs} | set(side.initializers) | {o.name for o in side.outputs}
    for node in side.nodes:
        names.update(_node_names(node))
    return names


def _node_names(node: onnx.NodeProto) -> set[str]:
    names = {*node.input, *node.output}
    for graph in _subgraphs(node):
        names.update(v.name for v in (*graph.input, *graph.output, *graph.value_info))
        names.update(i.name for i in graph.initializer)
        for inner in graph.node:
            names.update(_node_names(inner))
    names.discard("")
    return names


def _defined(nodes) -> set[str]:
    """The names `nodes` define, in their subgraphs too."""
    names: set[str] = set()
    for node in nodes:
        names.update(o for o in node.output if o)
        for graph in _subgraphs(node):
            names.update(i.name for i in graph.input)
            names.update(i.name for i in graph.initializer)
            names.update(_defined(graph.node))
    return names


def _renamed(node: onnx.NodeProto, names: dict[str, str]) -> onnx.NodeProto:
    copy = _copy(node)
    if names:
        _rename_node(copy, names)
    return copy


def _rename_node(node: onnx.NodeProto, names: dict[str, str]) -> None:
    for field in (node.input, node.output):
        renamed = [names.get(n, n) for n in field]
        del field[:]
        field.extend(renamed)
    for graph in _subgraphs(node):
        for v in (*graph.input, *graph.output, *graph.value_info, *graph.initializer):
            v.name = names.get(v.name, v.name)
        for inner in graph.node:
            _rename_node(inner, names)


def _copy(proto):
    copy = type(proto)()
    copy.CopyFrom(proto)
    return copy


def _same_tensor(a: TensorProto, b: TensorProto) -> bool:
    return a.SerializeToString() == b.SerializeToString()
