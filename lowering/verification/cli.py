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
    p.add_argument("--dynamic", action=_ExportOnly, help=argparse.SUPPRESS,
                   why="verify makes an axis dynamic when its size differs between its inputs: give inputs of "
                       "several sizes with --inputs DATA.npz (keys I/NAME), or check the file "
                       "`untrace export --dynamic` wrote with --onnx FILE")


class _ExportOnly(argparse.Action):
    """An option of `untrace export` given to verify (the two take the same TARGET and
    --input): the usage error says what verify does instead, rather than only that the
    option is unknown."""

    def __init__(self, option_strings, dest, why: str, **kwargs):
        super().__init__(option_strings, dest, nargs="?", **kwargs)
        self.why = why

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is an option of `untrace export`; {self.why}")


def _fail(message: str) -> int:
    print(f"untrace verify: {message}", file=sys.stderr)
    return EXIT_ERROR


def run(args: argparse.Namespace) -> int:
    from lowering.targets import TargetError

    try:
        return _run(args)
    except KeyboardInterrupt:
        raise
    except TargetError as exc:  # the user's mistake: one line, no "internal error"
        return _fail(str(exc))
    except Exception as exc:  # never a traceback
        return _fail(f"internal error: {type(exc).__name__}: {exc}")


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lowering.arguments import check_forward_takes, check_outputs, parse_inputs, resolve_opset
    from lowering.targets import load_target, target_file
    from lowering.verification import inputs as inp
    from lowering.verification import report_text
    from lowering.verification.api import PEERS, verify

    compare = [] if args.compare.strip().lower() in ("", "none") else [c.strip() for c in args.compare.split(",") if c.strip()]
    unknown = [c for c in compare if c not in PEERS]
    if unknown:
        return _fail(f"--compare: unknown system {', '.join(unknown)} (one of: {', '.join(PEERS)}, none)")
    if args.search < 0:
        return _fail("--search must be >= 0")
    if not (args.rtol >= 0 and args.atol >= 0):  # written so that nan fails too
        return _fail("--rtol and --atol must be numbers >= 0")
    if args.search_seconds is not None and not args.search_seconds > 0:
        return _fail("--search-seconds must be > 0")
    specs = parse_inputs(args.input)
    opset = resolve_opset(args.target, args.opset)
    to_stdout = args.json == "-"
    check_outputs({"--json": None if to_stdout else args.json, "--html": args.html},
                  {"TARGET": target_file(args.target), "--weights": args.weights, "--onnx": args.onnx,
                   "--inputs": args.inputs})

    model = load_target(args.target, args.weights).eval()
    names = inp.parameter_names(model)
    if args.inputs:
        examples = _load_inputs(args.inputs, model, names)
        origin = "given"
    elif specs:
        check_forward_takes(model, [n for n, _ in specs])
        try:
            examples = inp.random_inputs(specs, model, names)
        except ValueError as exc:
            return _fail(str(exc))
        origin = "random"
    else:
        return _fail("give the inputs: --inputs DATA.npz, or --input NAME:SHAPE:DTYPE for random ones")
    onnx_model = _load_onnx(args.onnx) if args.onnx else None

    report = verify(model, examples, onnx_model=onnx_model, compare=tuple(compare), rtol=args.rtol,
                    atol=args.atol, search=args.search, search_seconds=args.search_seconds, opset=opset,
                    origins=[origin] * len(examples))
    _check_some_input_fits(report, model, examples, names, specs, args.inputs)
    report.record["target"] = args.target
    report.record["weights"] = args.weights
    report.record["inputs_from"] = args.inputs or "random (--input " + " ".join(args.input) + ")"

    # Both reports are rendered before either is written: one that fails leaves no other.
    outputs = _render_reports(report, None if to_stdout else args.json, args.html)
    report_text.render(report, Console(stderr=to_stdout))
    if to_stdout:
        from lowering.verification import report_json

        sys.stdout.write(report_json.dumps(report))
    _write_reports(outputs)
    return EXIT_MATCH if report.ok else EXIT_MISMATCH


def _load_inputs(path: str, model, names: list[str]) -> list[tuple]:
    from lowering.arguments import check_forward_takes
    from lowering.targets import TargetError
    from lowering.verification import inputs as inp

    try:
        examples = inp.load_npz(path, names)
    except OSError as exc:
        raise TargetError(f"--inputs {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise TargetError(f"--inputs {exc}") from None
    for args in examples:  # each input names the leading parameters; the required ones at least
        check_forward_takes(model, names[: len(args)])
    return examples


def _load_onnx(path: str):
    import onnx

    from lowering.targets import TargetError, describe_exception

    try:
        return onnx.load(path)
    except Exception as exc:  # noqa: BLE001 - a file onnx cannot read is the user's
        raise TargetError(f"--onnx {path}: cannot load: {describe_exception(exc)}") from None


def _check_some_input_fits(report, model, examples: list[tuple], names: list[str], specs, npz: str | None) -> None:
    """When eager PyTorch raised on every input there is nothing to verify: the inputs do
    not fit the model, which is the user's mistake (exit 2), not a mismatch."""
    from lowering.arguments import input_text, misfit_message, pytorch_refusal
    from lowering.targets import TargetError

    if any(info.eager_error is None for info in report.inputs[: len(examples)]):
        return
    refusal = pytorch_refusal(model, examples[0]) or report.inputs[0].eager_error
    if not npz:
        raise TargetError(misfit_message(model, specs, refusal))
    first = " ".join(input_text(n, t) for n, t in zip(names, examples[0]) if hasattr(t, "shape"))
    raise TargetError(f"--inputs {npz}: no input fits {type(model).__name__}.forward; "
                      f"on input 0 ({first}) PyTorch raises {refusal}")


def _render_reports(report, json_path: str | None, html_path: str | None) -> list[tuple[str, str, bytes]]:
    from lowering.verification import report_html, report_json

    outputs = []
    if json_path:
        outputs.append(("--json", json_path, report_json.dumps(report).encode("utf-8")))
    if html_path:
        outputs.append(("--html", html_path, report_html.render(report).encode("utf-8")))
    return outputs


def _write_reports(outputs: list[tuple[str, str, bytes]]) -> None:
    from analyzer.outputs import write_output
    from lowering.arguments import writing

    for flag, path, data in outputs:
        with writing(flag, path):
            write_output(path, data)
