"""`lowering.exporter`: an `nn.Module`'s forward source -> `onnx.ModelProto`, never calling it.

`args` give the graph inputs' shapes and dtypes only (their values are never read);
`dynamic_shapes` names the axes that stay symbolic, as in torch.export:
`{"x": {0: "batch"}}`, and for the tensors inside a list, tuple or dict argument one spec
per item (`{"images": [{1: "h0", 2: "w0"}, {1: "h1", 2: "w1"}]}`). Python values among the arguments (None, flags, ints) are
constants of the export, as they are for tracing.
"""

from __future__ import annotations

import inspect
from typing import Any

import onnx
import torch

from lowering import dynamic_axes, forks
from lowering.errors import LoweringError
from lowering.graph import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET, GraphBuilder, Value
from lowering.interp.functions import ReadSources
from lowering.interp.values import ComplexPair
from lowering.interpreter import Interpreter, Stacked
from lowering.outputs import named_leaves, output_name


def export(
    module: torch.nn.Module,
    args: tuple | list = (),
    *,
    kwargs: dict | None = None,
    opset: int = DEFAULT_OPSET,
    dynamic_shapes: dict | None = None,
    input_names: list[str] | None = None,
    output_names: list[str] | None = None,
    probes: bool = False,
) -> onnx.ModelProto:
    """Lower `module.forward` from its source. With `probes=True` the model gets extra
    outputs after the real ones, `probe|<path>|<line>|<construct>|<kind>`: 1-d int64
    vectors, for `branch` kinds 1 (then taken) / 0 (else) / -1 (not reached), for
    `trips` kinds the loop's iteration count; one entry per time the construct ran."""
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"export expects an nn.Module, got {type(module).__name__}")
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise LoweringError(f"opset {opset} is not supported (supported: {MIN_OPSET}-{MAX_OPSET})")
    if not isinstance(args, (tuple, list)):
        args = (args,)
    kwargs = dict(kwargs or {})
    sources = ReadSources()  # every lowering below reads the same files: each is parsed once
    lower = lambda: forks.lower_once_per_side(  # noqa: E731
        lambda decisions: _lower(module, args, kwargs, opset, dynamic_shapes, input_names, output_names, probes,
                                 decisions, sources), opset)
    model, interp = lower()
    left = interp.changed_state()
    if left is None:
        interp.undo_object_changes()  # what forward set and restored: the export leaves it as it was
        return model
    # forward leaves state changed (lazy set-up: hooks installed, a flag set on the first
    # call). The graph holds for every call when a second lowering, from the changed
    # state, changes nothing more and gives the same graph; the module then keeps the
    # change, as after eager's first call.
    try:
        again, second = lower()
    except BaseException:
        interp.undo_object_changes()
        raise
    if second.changed_state() is None and again.graph.SerializeToString() == model.graph.SerializeToString():
        second.undo_object_changes()
        return again
    second.undo_object_changes()
    interp.undo_object_changes()
    raise LoweringError(
        f"{type(module).__name__}.forward changes {left.describe} and leaves it changed, and the next call lowers "
        "differently: eager PyTorch's next call sees the change, which an exported graph cannot",
        path=left.where[0], line=left.where[1],
        hint="restore it before forward returns (try / finally), or keep per-call state in local variables")


def _lower(module, args, kwargs, opset, dynamic_shapes, input_names, output_names, probes, decisions, sources):
    """One lowering of forward, taking the sides `decisions` gives of the `if`s whose code
    after them is lowered once per side (`lowering.forks`): the graph with its outputs,
    and the interpreter whose journal holds the changes forward left (already undone when
    it raised)."""
    g = GraphBuilder(opset)
    signature = inspect.signature(type(module).forward)
    try:
        bound = signature.bind(module, *args, **kwargs)
    except TypeError as exc:
        raise LoweringError(f"the arguments do not match {type(module).__name__}.forward: {exc}") from None
    arguments = dict(list(bound.arguments.items())[1:])
    dynamic = dynamic_axes.by_parameter(dynamic_shapes, arguments, f"{type(module).__name__}.forward")
    names = iter(input_names or [])
    graph_args: dict[str, Any] = {}
    for name, value in arguments.items():
        graph_args[name] = _inputs(g, name, value, dynamic.get(name), names)
    interp = Interpreter(module, g, decisions, sources)
    interp.probes_enabled = probes
    params = list(signature.parameters.values())[1:]
    call_args, call_kwargs = [], {}
    skipped = False  # after a parameter left to its default, the others go by keyword
    for p in params:
        if p.name not in graph_args:
            skipped = True
            continue
        if p.kind is p.POSITIONAL_OR_KEYWORD and skipped:
            call_kwargs[p.name] = graph_args[p.name]
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            call_args.append(graph_args[p.name])
        elif p.kind is p.VAR_POSITIONAL:
            call_args.extend(graph_args[p.name])
        elif p.kind is p.VAR_KEYWORD:
            call_kwargs.update(graph_args[p.name])
        else:
            call_kwargs[p.name] = graph_args[p.name]
    try:
        with torch.no_grad():
            result = interp.call_forward(module, call_args, call_kwargs)
        _add_outputs(module, g, interp, result, output_names)
        return g, interp
    except BaseException:
        interp.undo_object_changes()  # a refused export leaves every object as it found it
        raise


def _add_outputs(module, g, interp, result, output_names) -> None:
    leaves = named_leaves(result)
    out_names = list(output_names or [])
    for i, (path, leaf) in enumerate(leaves):
        if isinstance(leaf, Stacked):
            raise LoweringError(
                f"{type(module).__name__}.forward returns a list whose length depends on the input "
                "(filled by a loop that runs a data- or shape-dependent number of times); an ONNX graph "
                "has a fixed number of outputs",
                hint="return torch.stack(...) / torch.cat(...) of the list, or export with static shapes")
        if not isinstance(leaf, Value):
            if isinstance(leaf, (int, float, bool)):
                leaf = g.const(leaf)
            else:
                where = ".".join(map(str, path))
                if isinstance(leaf, ComplexPair):
                    raise LoweringError(f"forward returns a complex tensor{f' (at `{where}`)' if where else ''}: ONNX "
                                        "has no complex tensors", hint="return its .real and .imag, or torch.stack "
                                        "them (torch.view_as_real's layout)")
                raise LoweringError(f"forward returns a {type(leaf).__name__}{f' (at `{where}`)' if where else ''}, "
                                    "which is not a tensor",
                                    hint="return tensors, numbers, None, or tuples, lists, dicts, namedtuples and "
                                         "dataclasses of them")
        name = out_names[i] if i < len(out_names) else output_name(path, i, len(leaves))
        g.add_output(leaf, name if i < len(out_names) else g.unused_name(name))
    for key, value in interp.take_probes(g):
        g.add_output(value, key, shape=(None,))


def _inputs(g: GraphBuilder, name: str, value, dynamic, names) -> Any:
    """Graph inputs for an argument; `dynamic` is its spec, already checked against it
    (`lowering.dynamic_axes`): {axis: symbol} for a tensor, one spec per item of a list
    or tuple, one per key of a dict."""
    if isinstance(value, torch.Tensor):
        shape = list(value.shape)
        for axis, symbol in (dynamic or {}).items():
            shape[axis] = symbol
        return g.add_input(next(names, name), value.dtype, tuple(shape))
    if isinstance(value, (tuple, list)):
        specs = dynamic or [None] * len(value)
        return type(value)(_inputs(g, f"{name}_{i}", v, d, names) for i, (v, d) in enumerate(zip(value, specs)))
    if isinstance(value, dict):
        specs = dynamic or {}
        return {k: _inputs(g, f"{name}_{k}", v, specs.get(k), names) for k, v in value.items()}
    return value


def save(model: onnx.ModelProto, path: str) -> None:
    """Write where a shell redirection would (`analyzer.outputs.write_output`): a regular
    file atomically (a reader never sees a half-written one), with the mode a plain
    ``open()`` gives, or the one of the file replaced."""
    from analyzer.outputs import write_output

    write_output(path, model.SerializeToString())
