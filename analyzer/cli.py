"""The ``untrace`` command.

Every subcommand is a small function registered in :data:`COMMANDS` (``analyzer.commands``,
with the exit codes and `UsageError` every subcommand shares), with the function that
declares its arguments; ``check`` is ``analyzer.check_command``. Either may be given as ``"module:attribute"``, imported only
when that subcommand is the one being run::

    @command("graph", "print the IR of one function ...", _graph_arguments)
    def run_graph(args) -> int: ...

    register(Command("verify", "...", "lowering.verification.cli:add_arguments", "lowering.verification.cli:run"))

``check`` must start fast (it runs in pre-commit), so nothing at module level here imports
libcst, rich, torch or onnx, and the parser only builds the arguments of the subcommand
that runs: ``export``/``verify`` import ``lowering`` (and torch) only when they run.

Exit codes: 0 clean, 1 findings (or a mismatch for ``verify``), 2 usage or internal error,
130 interrupted.
"""

from __future__ import annotations

import os
import sys

from analyzer import interrupts

if __name__ == "__main__" or os.path.basename(getattr(sys, "argv", [""])[0]) in ("untrace", "untrace.exe"):
    # The command is starting: until `console` runs, Ctrl-C ends it at once and quietly
    # (Python's handler would print a traceback from whichever import it was in).
    interrupts.exit_at_once()

import argparse  # noqa: E402
import importlib  # noqa: E402
from collections.abc import Sequence  # noqa: E402

import analyzer.check_command  # noqa: F401, E402 - registers `check`, the first subcommand
from analyzer import __version__  # noqa: E402
from analyzer.commands import (  # noqa: E402, F401 - the command line's API: exit codes, UsageError, COMMANDS
    COMMANDS,
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    Arguments,
    Command,
    Handler,
    UsageError,
    command,
    register,
    stdout_write,
)


def _resolve(target):
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


# ======================================================================================
# untrace rule


def _rule_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("code", nargs="?", metavar="CODE", help="a rule code (UT101) or name (data-dependent-branch); none lists every rule")
    p.add_argument("--all", action="store_true", help="print the documentation of every rule")
    p.add_argument("--output-format", choices=("text", "json"), default="text")


@command("rule", "explain a rule, or list them all", _rule_arguments)
def run_rule(args: argparse.Namespace) -> int:
    import json

    from analyzer.rules import all_rules, rule_by_code
    from analyzer.rules.docgen import default_label, rule_markdown

    def as_json(rule) -> dict:
        return {
            "code": rule.code,
            "name": rule.name,
            "summary": " ".join(rule.summary.split()),
            "default": rule.default_enabled,
            "severity": rule.severity,
            "explanation": rule_markdown(rule, level=1, title=f"{rule.name} ({rule.code})"),
        }

    if args.code:
        rule = rule_by_code(args.code)
        if rule is None:
            raise UsageError(f"unknown rule {args.code!r}; `untrace rule` lists them")
        if args.output_format == "json":
            stdout_write(json.dumps(as_json(rule), indent=2) + "\n")
        else:
            stdout_write(rule_markdown(rule, level=1, title=f"{rule.name} ({rule.code})"))
        return EXIT_CLEAN

    rules = all_rules()
    if args.output_format == "json":
        stdout_write(json.dumps([as_json(r) for r in rules], indent=2) + "\n")
        return EXIT_CLEAN
    if args.all:
        stdout_write("\n".join(rule_markdown(r, level=1, title=f"{r.name} ({r.code})") for r in rules))
        return EXIT_CLEAN
    if not rules:
        stdout_write("No rules are registered.\n")
        return EXIT_CLEAN
    name_width = max(len(r.name) for r in rules)
    lines = [f"{'code':<6}  {'name':<{name_width}}  {'default':<7}  summary"]
    for r in rules:
        lines.append(f"{r.code:<6}  {r.name:<{name_width}}  {default_label(r):<7}  {' '.join(r.summary.split())}")
    stdout_write("\n".join(lines) + "\n")
    return EXIT_CLEAN


# ======================================================================================
# untrace graph


def _graph_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="FILE[::Class[.method]]", help="the function to show (default: the first forward in FILE)")
    p.add_argument("--format", choices=("text", "mermaid", "dot", "json"), default="text", help="text IR, Mermaid, DOT, or networkx node-link JSON (default: text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")


@command("graph", "print the IR of one function with every branch and loop marked by kind", _graph_arguments)
def run_graph(args: argparse.Namespace) -> int:
    from analyzer.frontend import ParseError
    from analyzer.graph import GraphError, parse_target, render
    from analyzer.outputs import output_problem

    path, name = parse_target(args.target)
    if args.output is not None:
        problem = output_problem("-o", args.output, {"the file shown": [path]})
        if problem is not None:
            raise UsageError(problem)
    try:
        text = render(path, name, args.format)
    except GraphError as error:
        raise UsageError(str(error)) from None
    except ParseError as error:
        raise UsageError(f"{path}:{error.line}:{error.column}: cannot parse: {error.message}") from None
    if args.output:
        from analyzer.outputs import write_output

        try:
            write_output(args.output, text.encode("utf-8"))
        except OSError as error:
            raise UsageError(f"cannot write {args.output}: {error.strerror or error}") from None
    else:
        stdout_write(text)
    return EXIT_CLEAN


# ======================================================================================
# untrace export / verify (lowering, torch and onnx are imported only when they run)


def _export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help="package.module:callable or path/to/file.py:callable returning the module")
    p.add_argument("--input", action="append", default=[], metavar="NAME:SHAPE:DTYPE", help="an argument of forward, e.g. x:2x3x224x224:float32 (repeatable)")
    p.add_argument("-o", "--output", metavar="OUT.onnx", help="where to write the model (default: CALLABLE.onnx)")
    p.add_argument("--opset", type=int, metavar="N", help="ONNX opset (default: [tool.untrace] opset, else 18)")
    p.add_argument("--dynamic", action="append", default=[], metavar="NAME:AXIS=SYMBOL", help="a dynamic axis, e.g. x:0=batch (repeatable)")
    p.add_argument("--weights", metavar="CKPT", help="state dict to load (torch.load(weights_only=True))")


@command(
    "export",
    "lower forward() to ONNX from its source, with real If and Loop nodes (never runs forward)",
    _export_arguments,
)
def run_export(args: argparse.Namespace) -> int:
    # the default output and opset, and every check of the arguments, are lowering.cli's:
    # `verify` shares them
    from lowering.cli import run_export as export

    return export(args)


register(
    Command(
        "verify",
        "check the untrace ONNX against eager PyTorch (and the traced export) on inputs that take every branch",
        "lowering.verification.cli:add_arguments",
        "lowering.verification.cli:run",
    )
)


# ======================================================================================
# entry point


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is one)."""
    for word in argv:
        if word in COMMANDS:
            return word
        if not word.startswith("-"):
            return None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the subcommand named in ``argv`` gets its arguments (all of them
    when ``argv`` is None), so that no other command's imports are paid for."""
    parser = argparse.ArgumentParser(
        prog="untrace",
        description="Find the branches, loops and value escapes that make torch.onnx tracing silently wrong, "
        "and lower forward() to ONNX with real If and Loop nodes.",
    )
    parser.add_argument("--version", action="version", version=f"untrace {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _chosen(argv) if argv is not None else None
    for cmd in COMMANDS.values():
        sub = subparsers.add_parser(cmd.name, help=cmd.help, description=cmd.description or cmd.help)
        if argv is None or cmd.name == chosen:
            _resolve(cmd.arguments)(sub)
        sub.set_defaults(handler=cmd.run)
    return parser


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(name)
    return None


def _reject_unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str],
                         extras: list[str]) -> None:
    """A usage error for arguments no parser took, from the subcommand's own parser when
    they follow its name: argparse leaves them to the top-level parser, whose usage
    (`untrace [-h] [--version] COMMAND ...`) says nothing of the options the subcommand
    has. An option of another subcommand is named as such."""
    command = getattr(args, "command", None)
    owner = parser
    if command is not None and command in argv and argv.index(command) < _position(argv, extras[0]):
        owner = _subparser(parser, command) or parser
    message = f"unrecognized arguments: {' '.join(extras)}"
    for extra in extras:
        option = extra.split("=", 1)[0]
        if not option.startswith("--"):
            continue
        others = [name for name in COMMANDS if name != command and option in _options_of(name)]
        if others:
            message += f" ({option} is an option of {' and '.join(f'`untrace {o}`' for o in others)})"
            break
    owner.error(message)


def _position(argv: list[str], word: str) -> int:
    return argv.index(word) if word in argv else len(argv)


def _options_of(name: str) -> set[str]:
    """The option strings of subcommand ``name`` (its arguments are declared only here:
    a usage error is the one place another command's are asked for)."""
    sub = argparse.ArgumentParser(add_help=False)
    _resolve(COMMANDS[name].arguments)(sub)
    return {option for option, action in sub._option_string_actions.items() if action.help != argparse.SUPPRESS}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv)
        try:
            args, extras = parser.parse_known_args(argv)
            if extras:
                _reject_unrecognized(parser, args, argv, extras)
        except SystemExit as exit_:  # --help, --version, or a usage error already printed
            return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
        if getattr(args, "handler", None) is None:
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        return _resolve(args.handler)(args)
    except UsageError as error:
        print(f"untrace: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`untrace check | head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_FINDINGS
    except Exception as error:  # noqa: BLE001 - the last line of defence: no traceback
        print(f"untrace: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("UNTRACE_DEBUG"):
            import traceback

            traceback.print_exc()
        else:
            print("untrace: this is a bug; set UNTRACE_DEBUG=1 for the traceback and please report it", file=sys.stderr)
        return EXIT_ERROR


def console() -> None:
    """The `untrace` executable: `main`, then an exit that skips the interpreter's
    teardown. After checking a large tree, freeing its millions of objects (a full
    collection, as the project's caches refer to each other) took longer than writing
    the report; the operating system reclaims the memory at once.

    Ctrl-C and SIGTERM stop the run wherever it is (`analyzer.interrupts`): exit 130
    and nothing more printed, or, after SIGTERM, the process ends by that signal."""
    interrupts.install()
    code = EXIT_INTERRUPTED
    try:
        code = main()
    except KeyboardInterrupt:  # raised outside `main`'s own handler, in its last lines
        pass
    finally:
        interrupts.hold()  # the run is over: a signal from now on is only recorded
    code = interrupts.exit_code(code)
    if interrupts.received() is None:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass  # a closed pipe or stream: what could be written was
    interrupts.end_by_signal()
    os._exit(code)


if __name__ == "__main__":
    console()
