"""``untrace verify TARGET``: prove the untrace ONNX against eager PyTorch (and the traced
and torch.export-based exports) on inputs that take every side of every branch.

    untrace verify TARGET [--onnx FILE] [--inputs DATA.npz] [--search N] [--json FILE]
                          [--html FILE] [--input NAME:SHAPE:DTYPE ...] [--weights CKPT]
                          [--opset N] [--compare trace,dynamo] [--rtol R] [--atol A]

Without ``--inputs``, random inputs are made from the ``--input`` specs (several scales).
Exit codes: 0 the untrace ONNX matches eager on every input, 1 it does not (or cannot
be exported), 2 usage or internal error. The traced export diverging is reported, not a
failure: it is the expected finding.
"""

from __future__ import annotations

import argparse
import sys

EXIT_MATCH, EXIT_MISMATCH, EXIT_ERROR = 0, 1, 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help="package.module:callable or path/to/file.py:callable returning the module")
    p.add_argument("--weights", metavar="CKPT", help="state dict to load (torch.load(weights_only=True))")
    src = p.add_argument_group("inputs")
    src.add_argument("--inputs", metavar="DATA.npz", help="inputs: keys NAME (one input) or I/NAME (input I)")
    src.add_argument("--input", action="append", default=[], metavar="NAME:SHAPE:DTYPE",
                     help="shape and dtype of an argument, for random inputs when --inputs is not given (repeatable)")
    src.add_argument("--search", type=int, default=0, metavar="N",
                     help="spend up to N candidate evaluations searching for inputs that cover untaken branch sides")
    src.add_argument("--search-seconds", type=float, default=None, metavar="S", help="time limit of the search")
    sysg = p.add_argument_group("systems")
    sysg.add_argument("--onnx", metavar="FILE", help="check this ONNX file instead of exporting with untrace")
    sysg.add_argument("--opset", type=int, metavar="N", help="ONNX opset (default: [tool.untrace] opset, else 18)")
    sysg.add_argument("--compare", default="trace,dynamo", metavar="SYSTEMS",
                      help="peer exporters to run too: trace, dynamo, both (default) or none")
    sysg.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default: 1e-4)")
    sysg.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default: 1e-5)")
    out = p.add_argument_group("reports")
    out.add_argument("--json", metavar="FILE", help="write the JSON report (- for standard output)")
    out.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")


def _fail(message: str) -> int:
    print(f"untrace verify: {message}", file=sys.stderr)
    return EXIT_ERROR


def _configured_opset(target: str) -> int:
    import os

    from analyzer.config import resolve_config
    from lowering.graph import DEFAULT_OPSET

    location = target.rpartition(":")[0]
    configured = resolve_config([location] if os.path.exists(location) else []).opset
    return configured if configured is not None else DEFAULT_OPSET


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # never a traceback
        return _fail(f"internal error: {type(exc).__name__}: {exc}")


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lowering.cli import TargetError, load_target, parse_input
    from lowering.verification import inputs as inp
    from lowering.verification import report_html, report_json, report_text
    from lowering.verification.api import PEERS, verify

    compare = [] if args.compare.strip().lower() in ("", "none") else [c.strip() for c in args.compare.split(",") if c.strip()]
    unknown = [c for c in compare if c not in PEERS]
    if unknown:
        return _fail(f"--compare: unknown system {', '.join(unknown)} (one of: {', '.join(PEERS)}, none)")
    if args.search < 0:
        return _fail("--search must be >= 0")
    if args.rtol < 0 or args.atol < 0:
        return _fail("--rtol and --atol must be >= 0")
    if args.opset is None:
        from analyzer.config import ConfigError

        try:
            args.opset = _configured_opset(args.target)
        except ConfigError as exc:
            return _fail(str(exc))
    try:
        model = load_target(args.target, args.weights).eval()
        names = inp.parameter_names(model)
        if args.inputs:
            try:
                examples = inp.load_npz(args.inputs, names)
            except (OSError, ValueError) as exc:
                return _fail(f"--inputs: {exc}")
            origin = "given"
        elif args.input:
            specs = [parse_input(s) for s in args.input]
            try:
                examples = inp.random_inputs(specs, model, names)
            except ValueError as exc:
                return _fail(str(exc))
            origin = "random"
        else:
            return _fail("give the inputs: --inputs DATA.npz, or --input NAME:SHAPE:DTYPE for random ones")
        onnx_model = None
        if args.onnx:
            import onnx

            try:
                onnx_model = onnx.load(args.onnx)
            except Exception as exc:
                return _fail(f"--onnx {args.onnx}: cannot load: {exc}")
    except TargetError as exc:
        return _fail(str(exc))

    report = verify(model, examples, onnx_model=onnx_model, compare=tuple(compare), rtol=args.rtol,
                    atol=args.atol, search=args.search, search_seconds=args.search_seconds, opset=args.opset,
                    origins=[origin] * len(examples))
    report.record["target"] = args.target
    report.record["weights"] = args.weights
    report.record["inputs_from"] = args.inputs or "random (--input " + " ".join(args.input) + ")"

    to_stdout = args.json == "-"
    report_text.render(report, Console(stderr=to_stdout))
    try:
        if args.json:
            if to_stdout:
                sys.stdout.write(report_json.dumps(report))
            else:
                report_json.write(report, args.json)
        if args.html:
            report_html.write(report, args.html)
    except OSError as exc:
        return _fail(f"cannot write the report: {exc}")
    return EXIT_MATCH if report.ok else EXIT_MISMATCH
