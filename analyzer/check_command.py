"""``untrace check``: its arguments, the run (discover, check, fix, report) and the
``--fix`` passes. Registered in `commands.COMMANDS` when `analyzer.cli` imports it;
what it needs beyond the standard library is imported when it runs, so that the
command starts fast."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from analyzer.commands import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UsageError, command, stdout_write


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
    from analyzer.config import ConfigError, Selection, check_selection, config_candidates, parse_codes, resolve_config
    from analyzer.discovery import discover
    from analyzer.outputs import output_problem
    from analyzer.report import ReportContext, render, render_statistics
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
        # what would make the run report nothing, or lose its cache, is refused before
        # any file is looked at
        check_selection(config, selection)
        if not args.no_cache and args.cache_dir is not None:
            from analyzer.cache import check_cache_root

            check_cache_root(args.cache_dir, "--cache-dir")
        found = discover(paths, config, force_exclude=args.force_exclude)
    except ConfigError as error:
        raise UsageError(str(error)) from None

    if args.output_file is not None:
        read = {
            "a checked file": found.files,
            "a configuration file this run read": config_candidates(paths, args.config),
            "an ignore file of the checked files": found.ignore_files,
        }
        problem = output_problem("-o", args.output_file, read)
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
    # --fix writes only inside the folders named, or a file named itself
    from analyzer.fixes.apply import link_out_of_tree

    refused = {report_path(link): link_out_of_tree(target) for link, target in found.links_out.items()}

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
        analysed=result.hashes,
        fix_requested=args.fix,
    )
    # Exit 2 when not everything was checked: a file whose analysis failed, or a
    # directory that could not be listed (its files were never seen).
    unreadable = bool(found.unreadable)

    if args.diff:
        outcomes = fix_files(result.diagnostics, unsafe=args.unsafe_fixes, write=False, sources=result.sources,
                             planned=result.hashes, refused=refused)
        shown = [o for o in outcomes if o.status is None]
        stdout_write("".join(o.diff() for o in shown))
        _warn_not_fixed((o.path, o.status) for o in outcomes if o.status is not None)
        count = sum(len(o.applied) for o in shown)
        print(f"Would fix {count} hazard{'s' if count != 1 else ''}." if count else "No fixes available.", file=sys.stderr)
        if result.internal_errors or unreadable:
            return EXIT_ERROR
        return EXIT_FINDINGS if count and not args.exit_zero else EXIT_CLEAN

    report_stream_is_stdout = True
    not_fixed = False
    if args.fix:
        result, context.fixed, not_fixed = _fix_until_stable(result, check_files, stdin, args.unsafe_fixes, refused)
        context.files_checked = result.files_checked
        context.analysed = result.hashes
        context.sources = result.sources
        if stdin is not None:
            # as ruff: the fixed source goes to stdout, the report to stderr
            stdout_write(result.sources.get(stdin[0], ""))
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
        from analyzer.outputs import write_output

        try:
            write_output(args.output_file, text.encode("utf-8"))
        except OSError as error:
            raise UsageError(f"cannot write {args.output_file}: {error.strerror or error}") from None
    elif not report_stream_is_stdout:
        sys.stderr.write(text)
    elif context.color:
        from rich.console import Console

        Console(highlight=False, soft_wrap=True).print(text, end="", markup=True)
    else:
        stdout_write(text)

    if internal:
        return EXIT_ERROR
    if not_fixed or (diagnostics and not args.exit_zero):
        return EXIT_FINDINGS
    return EXIT_CLEAN


# `--fix` applies fixes, lints the fixed text again and repeats (a fix can make room for
# another), as ruff does, up to this many passes.
FIX_PASSES = 10


def _fix_until_stable(result, check_files, stdin, unsafe: bool, refused: dict[str, str]):
    """Fix, re-check, repeat. Returns the last check (what is left, at the positions of
    the fixed text), how many findings were fixed, and whether a file that had fixes
    was left alone (changed since analysis, read-only, ...)."""
    from analyzer.fixes.apply import NOT_NAMED
    from analyzer.runner import fix_files

    fixed = 0
    skipped: dict[str, str] = {}
    for _ in range(FIX_PASSES):
        outcomes = fix_files(result.diagnostics, unsafe=unsafe, write=True, sources=result.sources,
                             planned=result.hashes, refused=refused)
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
