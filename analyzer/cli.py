"""The ``untrace`` command.

Every subcommand is a small function registered in :data:`COMMANDS`, with the function
that declares its arguments. Either may be given as ``"module:attribute"``, imported only
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

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from analyzer import __version__

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

Arguments = Callable[[argparse.ArgumentParser], None]
Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    arguments: Arguments | str  # or "module:attribute", imported when this command runs
    run: Handler | str
    description: str | None = None


COMMANDS: dict[str, Command] = {}


def register(cmd: Command) -> Command:
    COMMANDS[cmd.name] = cmd
    return cmd


def command(name: str, help: str, arguments: Arguments | str, description: str | None = None):
    """Register ``run(args) -> int`` as the subcommand ``name``."""

    def decorate(run: Handler) -> Handler:
        register(Command(name, help, arguments, run, description))
        return run

    return decorate


def _resolve(target):
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit code 2."""


def _stdout_write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# ======================================================================================
# untrace check


def _check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to check, `-` for standard input (default: .)")
    rules = p.add_argument_group("rule selection")
    rules.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to enable, or ALL (replaces the configured selection)")
    rules.add_argument("--extend-select", metavar="CODES", help="codes or prefixes to enable in addition to the selection")
    rules.add_argument("--ignore", metavar="CODES", help="codes or prefixes to disable")
    out = p.add_argument_group("output")
    out.add_argument("--output-format", choices=("text", "concise", "json", "sarif", "github"), default="text", help="how findings are printed (default: text)")
    out.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE (atomically) instead of standard output")
    out.add_argument("--statistics", action="store_true", help="print the number of findings per code instead of the findings")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    fixes = p.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply the available fixes to the files")
    fixes.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of applying them")
    fixes.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (they may change behaviour)")
    run = p.add_argument_group("files and running")
    run.add_argument("--config", metavar="PATH", help="read [tool.untrace] from this pyproject.toml instead of the nearest one")
    run.add_argument("--force-exclude", action="store_true", help="apply exclude and .gitignore to files named on the command line too (for pre-commit)")
    run.add_argument("--stdin-filename", metavar="NAME", help="the path to report for standard input (and to match per-file-ignores)")
    run.add_argument("-j", "--jobs", type=_jobs, metavar="N", help="worker processes (default: all cores; 1 checks in this process)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the .untrace_cache")
    run.add_argument("--cache-dir", metavar="DIR", help="where the cache lives (default: .untrace_cache next to the configuration)")


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of jobs, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the number of jobs must be 0 (all cores) or more")
    return value


@command(
    "check",
    "find trace hazards in Python source (never imports or runs it)",
    _check_arguments,
    description="Report every branch, loop and value escape in nn.Module code that makes "
    "torch.onnx tracing silently wrong. Exit codes: 0 clean, 1 findings, 2 usage or internal error.",
)
def run_check(args: argparse.Namespace) -> int:
    # A batch job whose objects (every parsed file's IR, the findings) nearly all live to
    # the end: the cyclic collector would only rescan them (see file_analysis.GC_THRESHOLDS), so
    # it is off for the command. The `untrace` executable then ends without freeing them
    # (`console`); a caller of `main` in its own process gets the collector back.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _check(args)
    finally:
        if enabled:
            gc.enable()


def _check(args: argparse.Namespace) -> int:
    from analyzer.config import ConfigError, Selection, parse_codes, resolve_config
    from analyzer.discovery import discover
    from analyzer.report import ReportContext, render, render_statistics
    from analyzer.outputs import output_problem
    from analyzer.runner import fix_files, report_path
    from analyzer.runner import run_check as run

    if args.fix and args.diff:
        raise UsageError("--fix and --diff cannot be combined (--diff shows what --fix would do)")
    _require_cwd()
    if args.select is not None and not parse_codes(args.select):
        # an empty selection would check nothing and report the tree clean
        raise UsageError("--select: no rule codes given (ALL selects every rule; --ignore turns rules off)")
    paths = args.paths or ["."]
    try:
        config = resolve_config(paths, args.config)
        selection = Selection(
            select=parse_codes(args.select) if args.select is not None else None,
            extend_select=parse_codes(args.extend_select or ""),
            ignore=parse_codes(args.ignore or ""),
        )
        found = discover(paths, config, force_exclude=args.force_exclude)
    except ConfigError as error:
        raise UsageError(str(error)) from None

    if args.output_file is not None:
        problem = output_problem("-o", args.output_file, {"a checked file": found.files})
        if problem is not None:
            raise UsageError(problem)

    stdin = None
    if found.stdin:
        data = sys.stdin.buffer.read() if sys.stdin is not None else b""
        # spelled as the findings will be (see runner.report_path), so that --fix finds it
        stdin = (report_path(args.stdin_filename) if args.stdin_filename else "-", data)
    for directory, reason in found.unreadable:
        print(f"untrace: warning: cannot read directory {directory}: {reason}", file=sys.stderr)
    if not found.files and stdin is None:
        print("untrace: warning: no Python files found under the given paths", file=sys.stderr)

    progress = len(found.files) > 50 and _isatty(sys.stderr)

    def check_files(stdin):
        try:
            return run(
                found.files,
                config=config,
                cli=selection,
                stdin=stdin,
                jobs=args.jobs,
                use_cache=not args.no_cache,
                cache_dir=args.cache_dir,
                progress=progress,
            )
        except ConfigError as error:
            raise UsageError(str(error)) from None

    result = check_files(stdin)
    for path, why in result.skipped:
        print(f"untrace: warning: {path}: {why}", file=sys.stderr)
    if args.fix or args.diff:
        for path, count in sorted(result.notebook_fixes.items()):
            fixes = f"1 fix in {path} was" if count == 1 else f"{count} fixes in {path} were"
            print(f"untrace: warning: fixes are not applied to notebooks: {fixes} not applied", file=sys.stderr)
    context = ReportContext(
        files_checked=result.files_checked,
        sources=result.sources,
        unsafe_fixes=args.unsafe_fixes,
        unreadable=len(found.unreadable),
        notebooks=result.notebooks,
    )
    # Exit 2 when not everything was checked: a file whose analysis failed, or a
    # directory that could not be listed (its files were never seen).
    unreadable = bool(found.unreadable)

    if args.diff:
        outcomes = fix_files(result.diagnostics, unsafe=args.unsafe_fixes, write=False, sources=result.sources,
                             planned=result.hashes)
        shown = [o for o in outcomes if o.status is None]
        _stdout_write("".join(o.diff() for o in shown))
        _warn_not_fixed((o.path, o.status) for o in outcomes if o.status is not None)
        count = sum(len(o.applied) for o in shown)
        print(f"Would fix {count} hazard{'s' if count != 1 else ''}." if count else "No fixes available.", file=sys.stderr)
        if result.internal_errors or unreadable:
            return EXIT_ERROR
        return EXIT_FINDINGS if count and not args.exit_zero else EXIT_CLEAN

    report_stream_is_stdout = True
    not_fixed = False
    if args.fix:
        result, context.fixed, not_fixed = _fix_until_stable(result, check_files, stdin, args.unsafe_fixes)
        context.files_checked = result.files_checked
        if stdin is not None:
            # as ruff: the fixed source goes to stdout, the report to stderr
            _stdout_write(result.sources.get(stdin[0], ""))
            report_stream_is_stdout = False
    diagnostics = result.diagnostics
    internal = bool(result.internal_errors) or unreadable

    if args.statistics:
        text = render_statistics("json" if args.output_format == "json" else "text", diagnostics, context)
    else:
        color = (
            args.output_format == "text"
            and args.output_file is None
            and report_stream_is_stdout
            and _isatty(sys.stdout)
            and "NO_COLOR" not in os.environ
        )
        context.color = color
        text = render(args.output_format, diagnostics, context)

    if args.output_file:
        from analyzer.cache import atomic_write_bytes

        try:
            atomic_write_bytes(args.output_file, text.encode("utf-8"))
        except OSError as error:
            raise UsageError(f"cannot write {args.output_file}: {error.strerror or error}") from None
    elif not report_stream_is_stdout:
        sys.stderr.write(text)
    elif context.color:
        from rich.console import Console

        Console(highlight=False, soft_wrap=True).print(text, end="", markup=True)
    else:
        _stdout_write(text)

    if internal:
        return EXIT_ERROR
    if not_fixed or (diagnostics and not args.exit_zero):
        return EXIT_FINDINGS
    return EXIT_CLEAN


# `--fix` applies fixes, lints the fixed text again and repeats (a fix can make room for
# another), as ruff does, up to this many passes.
FIX_PASSES = 10


def _fix_until_stable(result, check_files, stdin, unsafe: bool):
    """Fix, re-check, repeat. Returns the last check (what is left, at the positions of
    the fixed text), how many findings were fixed, and whether a file that had fixes
    was left alone (changed since analysis, read-only, ...)."""
    from analyzer.fixes.apply import NOT_NAMED
    from analyzer.runner import fix_files

    fixed = 0
    skipped: dict[str, str] = {}
    for _ in range(FIX_PASSES):
        outcomes = fix_files(result.diagnostics, unsafe=unsafe, write=True, sources=result.sources,
                             planned=result.hashes)
        progressed = False
        for outcome in outcomes:
            if outcome.written or (outcome.status is None and stdin is not None and outcome.path == stdin[0]):
                fixed += len(outcome.applied)
                progressed = True
                skipped.pop(outcome.path, None)
                if outcome.status is None:
                    stdin = (stdin[0], outcome.fixed.encode("utf-8"))
            elif outcome.status is not None:
                skipped[outcome.path] = outcome.status
        if not progressed:
            break
        result = check_files(stdin)
    else:
        print(f"untrace: warning: fixes did not settle after {FIX_PASSES} passes; "
              "run `untrace check --fix` again", file=sys.stderr)
    _warn_not_fixed(sorted(skipped.items()))
    return result, fixed, any(status != NOT_NAMED for status in skipped.values())


def _warn_not_fixed(skipped) -> None:
    """One line per file whose fixes were not applied, and why (path, status)."""
    for path, status in skipped:
        print(f"untrace: warning: {path}: {status}", file=sys.stderr)


def _require_cwd() -> None:
    """Paths are reported relative to the working directory, and the configuration is
    looked up from it: a deleted one is the user's to fix, not an internal error."""
    try:
        os.getcwd()
    except FileNotFoundError:
        raise UsageError("the working directory does not exist any more; cd to one that does") from None


def _isatty(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


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
            _stdout_write(json.dumps(as_json(rule), indent=2) + "\n")
        else:
            _stdout_write(rule_markdown(rule, level=1, title=f"{rule.name} ({rule.code})"))
        return EXIT_CLEAN

    rules = all_rules()
    if args.output_format == "json":
        _stdout_write(json.dumps([as_json(r) for r in rules], indent=2) + "\n")
        return EXIT_CLEAN
    if args.all:
        _stdout_write("\n".join(rule_markdown(r, level=1, title=f"{r.name} ({r.code})") for r in rules))
        return EXIT_CLEAN
    if not rules:
        _stdout_write("No rules are registered.\n")
        return EXIT_CLEAN
    name_width = max(len(r.name) for r in rules)
    lines = [f"{'code':<6}  {'name':<{name_width}}  {'default':<7}  summary"]
    for r in rules:
        lines.append(f"{r.code:<6}  {r.name:<{name_width}}  {default_label(r):<7}  {' '.join(r.summary.split())}")
    _stdout_write("\n".join(lines) + "\n")
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
        from analyzer.cache import atomic_write_bytes

        try:
            atomic_write_bytes(args.output, text.encode("utf-8"))
        except OSError as error:
            raise UsageError(f"cannot write {args.output}: {error.strerror or error}") from None
    else:
        _stdout_write(text)
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv)
        try:
            args = parser.parse_args(argv)
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
    the report; the operating system reclaims the memory at once."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass  # a closed pipe or stream: what could be written was
    os._exit(code)


if __name__ == "__main__":
    console()
