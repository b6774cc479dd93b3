"""`untrace export`: load the TARGET (`lowering.targets`), check the other arguments
(`lowering.arguments`), lower, write the ONNX file.

A mistake in the command line, or in the user's code that untrace runs (the target's
import and factory, the checkpoint, inputs that forward cannot take), is a `TargetError`:
one line naming what is wrong, with the file:line of the user's code where there is one,
exit code 2. What else escapes is an untrace bug, and `analyzer.cli.main` says so. A
construct the lowering refuses (`LoweringError`) is neither: exit code 1, as before.
"""

from __future__ import annotations

import sys

import torch

from lowering.arguments import (
    check_dynamic,
    check_forward_takes,
    check_outputs,
    misfit_message,
    parse_dynamic,
    parse_inputs,
    pytorch_refusal,
    resolve_opset,
    with_random_values,
    writing,
)
from lowering.errors import LoweringError
from lowering.targets import TargetError, load_target, target_file

EXIT_CANNOT_LOWER = 1
EXIT_USAGE = 2


# ======================================================================================
# untrace export


def run_export(args) -> int:
    try:
        return _export(args)
    except TargetError as exc:
        print(f"untrace export: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _export(args) -> int:
    from lowering.exporter import export, save

    output = args.output if args.output is not None else (args.target.rpartition(":")[2] or "model") + ".onnx"
    inputs = parse_inputs(args.input)
    dynamic = parse_dynamic(args.dynamic or [])
    opset = resolve_opset(args.target, args.opset)
    check_outputs({"-o": output}, {"TARGET": target_file(args.target), "--weights": args.weights})

    model = load_target(args.target, args.weights).eval()
    check_forward_takes(model, [n for n, _ in inputs])
    dynamic = check_dynamic(dynamic, dict(inputs))
    try:
        proto = export(model, (), kwargs=dict(inputs), opset=opset, dynamic_shapes=dynamic)
    except Exception as exc:
        _blame_the_inputs(exc, model, inputs)
        if isinstance(exc, LoweringError):
            print(f"untrace export: cannot lower {args.target}:\n{exc}", file=sys.stderr)
            return EXIT_CANNOT_LOWER
        raise
    with writing("-o", output):
        save(proto, output)
    n_if = sum(1 for n in _walk(proto.graph) if n.op_type == "If")
    n_loop = sum(1 for n in _walk(proto.graph) if n.op_type == "Loop")
    print(f"wrote {output}: {sum(1 for _ in _walk(proto.graph))} nodes ({n_if} If, {n_loop} Loop), opset {opset}")
    return 0


def _blame_the_inputs(exc: Exception, model: torch.nn.Module, inputs: list[tuple[str, torch.Tensor]]) -> None:
    """A TargetError when the export failed because the inputs do not fit the model: when
    PyTorch itself cannot run the model on them. Asked after a failure of the lowering (a
    bug, or a shape an ONNX node rejects) and after a LoweringError that mirrors a torch
    error ("... (torch raises)", the lowerings' convention); any other LoweringError is a
    construct that cannot be lowered, reported as it always was, without running forward."""
    if isinstance(exc, LoweringError) and "(torch raises)" not in exc.message:
        return
    refusal = pytorch_refusal(model, kwargs=with_random_values(inputs, model))
    if refusal is not None:
        raise TargetError(misfit_message(model, inputs, refusal)) from None


def _walk(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.g.node:
                yield from _walk(attr.g)
            for sub in attr.graphs:
                yield from _walk(sub)
