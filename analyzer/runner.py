"""Run the rules over files: the engine of ``untrace check`` and of the Python API.

    check_source(source, path="<stdin>", *, select=None, ignore=(), config=None)
    check_paths(paths, *, select=None, ignore=(), config=None, jobs=None, use_cache=True)
    # paths: one path or an iterable of them; [] checks nothing and returns []

Per file: read the bytes, look them up in the cache, else ``analyze_file`` (in a worker
process when there are several files and ``jobs != 1``; every worker builds its own
``Project`` from the whole file list) and every rule's ``detect``; drop what ``# noqa``
suppresses; cache that; then keep the codes that ``select``/``ignore`` and
``per-file-ignores`` leave on. Whatever goes wrong with one file (unreadable, a crash in
the analysis or a rule, a worker process dying) becomes a UT000 diagnostic for that
file, and the other files are still checked: never a traceback. A path that is not a
regular file (a named pipe, a device) is UT000 without being opened. A notebook
(``.ipynb``) is checked as its code cells (``analyzer.notebook``), its findings moved to
their cell, and without fixes (``--fix`` does not write notebooks).

What is reported (``findings.reported``): each path spelled one way (``report_path``:
relative to the working directory under it, else absolute), one finding per (path, line,
column, code) with every call path that reaches it in ``call_paths``, sorted on every field.

This module runs a check; analysing the files (in worker processes, with time limits)
is ``analyzer.workers`` and ``analyzer.file_analysis``, which findings are reported ``analyzer.findings``, the
UT000 of a file not checked ``analyzer.file_diagnostics``.

``apply_fixes`` / ``fix_files`` (from ``analyzer.fixes.apply``) apply the edits of the
diagnostics' fixes, to the bytes analysed only (``CheckResult.hashes``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from analyzer.cache import content_hash
from analyzer.config import Config, ConfigError, Selection, resolve_config
from analyzer.diagnostics import Diagnostic
from analyzer.file_analysis import DEFAULT_OPSET, analyze_source, engine
from analyzer.file_diagnostics import INTERNAL_ERROR, PARSE_ERROR, file_diagnostic, read_error
from analyzer.files import not_regular, not_regular_message
from analyzer.findings import NOT_PATHS, Filter, report_path, reported
from analyzer.fixes.apply import FixOutcome, apply_fixes, fix_files  # noqa: F401 - part of this module's API
from analyzer.source_text import decode_source
from analyzer.workers import analyze_all

__all__ = [
    "CheckResult",
    "Diagnostic",
    "INTERNAL_ERROR",
    "apply_fixes",
    "check_paths",
    "check_source",
    "run_check",
]


# --------------------------------------------------------------------------------------
# results


@dataclass
class CheckResult:
    diagnostics: list[Diagnostic]  # reported: filtered, deduplicated, sorted
    files_checked: int = 0
    cache_hits: int = 0
    analyzed: int = 0
    sources: dict[str, str] = field(default_factory=dict)  # in-memory sources (stdin)
    notebooks: dict = field(default_factory=dict)  # reported path -> notebook.Notebook checked
    notebook_fixes: dict[str, int] = field(default_factory=dict)  # fixes not offered, per notebook
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why): read, not checked
    # sha256 of the bytes analysed, per file given (by its reported path): fixes are
    # applied to those bytes only
    hashes: dict[str, str] = field(default_factory=dict)

    @property
    def internal_errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.name == INTERNAL_ERROR]


# --------------------------------------------------------------------------------------
# running


def run_check(
    files: Sequence[str],
    *,
    config: Config,
    cli: Selection | None = None,
    stdin: tuple[str, bytes] | None = None,
    jobs: int | None = None,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    progress: bool = False,
) -> CheckResult:
    """Check ``files`` (and an in-memory ``stdin`` = (path, bytes)); see the module doc."""
    keep = Filter(config, cli)
    if stdin is not None:
        stdin = (report_path(stdin[0]), stdin[1])  # the name its findings and source go by
    roots = [str(config.root)]
    opset = config.opset or DEFAULT_OPSET
    # What other files' analysis may open and import from: no notebook is importable, an
    # import resolves to the module, not to its stub (`blocks.pyi` beside `blocks.py`),
    # and what is not a regular file is never opened, by anyone.
    unopened = {path: kind for path in files if (kind := not_regular(path)) is not None}
    all_files = [f for f in files if f not in unopened and not f.endswith((".ipynb", ".pyi"))]
    all_files += [stdin[0]] if stdin else []
    cache = None
    if use_cache and files:
        from analyzer.cache import CACHE_DIR_NAME, Cache

        # the same files as the analysis' Project: cached import answers are checked against it
        cache = Cache(cache_dir if cache_dir is not None else config.root / CACHE_DIR_NAME, all_files)

    found: list[Diagnostic] = []
    pending: list[tuple[str, bytes | str, str | None]] = []  # path, source, cache key
    result = CheckResult(diagnostics=[], files_checked=len(files) + (1 if stdin else 0))
    notebooks: dict = {}  # path -> notebook.Notebook
    for path in files:
        if path in unopened:
            found.append(file_diagnostic(path, PARSE_ERROR, not_regular_message(unopened[path])))
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            found.append(read_error(path, error))
            continue
        result.hashes[report_path(path)] = content_hash(data)
        source: bytes | str = data
        if path.endswith(".ipynb"):
            source = _notebook_source(path, data, notebooks, found, result)
            if source is None:
                continue
        key = None
        if cache is not None:
            cache.remember(path, data)
            key = cache.key(path, data, opset)
            hit = cache.get(key)
            if hit is not None:
                found.extend(hit)
                result.cache_hits += 1
                continue
        pending.append((path, source, key))

    if pending:
        def finish(index: int, outcome) -> None:
            """One file's outcome, as soon as it is known: its dependencies go to the
            cache and are not kept (13 KB a file on transformers, for every file)."""
            path, _, key = pending[index]
            diagnostics, deps, cacheable = outcome
            if path in notebooks:
                diagnostics = _notebook().in_cells(diagnostics, path, notebooks[path])
            # A finding in another file is kept under its absolute path: the entry is
            # read again from other working directories (the file's own findings keep
            # the spelling its key was made with).
            diagnostics = [
                d if d.path == path or d.path in NOT_PATHS else replace(d, path=os.path.abspath(d.path))
                for d in diagnostics
            ]
            found.extend(diagnostics)
            if cache is not None and key is not None and cacheable:
                cache.put(key, diagnostics, deps)

        analyze_all(pending, all_files, roots, jobs, progress, opset, on_outcome=finish)
        result.analyzed = len(pending)
    if cache is not None:
        cache.save_answers()
    if stdin is not None:
        path, data = stdin
        result.sources[path] = decode_source(data)
        source = _notebook_source(path, data, notebooks, found, result) if path.endswith(".ipynb") else data
        if source is not None:
            diagnostics, _, _ = analyze_source(path, source, engine().Project(all_files, roots), opset)
            if path in notebooks:
                diagnostics = _notebook().in_cells(diagnostics, path, notebooks[path])
            found.extend(diagnostics)
            result.analyzed += 1

    result.files_checked -= len(result.skipped)
    result.diagnostics = reported(found, keep)
    if notebooks:
        result.notebooks = {report_path(path): notebook for path, notebook in notebooks.items()}
        result.diagnostics = _without_notebook_fixes(result.diagnostics, result)
    return result


def _notebook():
    from analyzer import notebook

    return notebook


def _notebook_source(path: str, data: bytes, notebooks: dict, found: list, result: CheckResult) -> str | None:
    """The Python source of a notebook's code cells, or None when it is not checked (a
    UT000 in ``found``, or in ``result.skipped`` for another language)."""
    nb = _notebook()
    try:
        notebook = nb.read_notebook(data)
    except nb.NotebookError as error:
        found.append(file_diagnostic(path, PARSE_ERROR, str(error)))
        return None
    if not notebook.is_python:
        result.skipped.append((report_path(path), f"not a Python notebook (language {notebook.language}); not checked"))
        return None
    notebooks[path] = notebook
    return notebook.source


def _without_notebook_fixes(reported: list[Diagnostic], result: CheckResult) -> list[Diagnostic]:
    """--fix does not write notebooks: their findings carry no fix (counted, so that the
    command can say what was left alone)."""
    out = []
    for diag in reported:
        if diag.fix is not None and diag.path in result.notebooks:
            result.notebook_fixes[diag.path] = result.notebook_fixes.get(diag.path, 0) + 1
            diag = replace(diag, fix=None)
        out.append(diag)
    return out


# --------------------------------------------------------------------------------------
# public API


def _cli_selection(select, ignore, extend_select) -> Selection | None:
    if isinstance(select, str):
        select = [select]
    if isinstance(ignore, str):
        ignore = [ignore]
    if isinstance(extend_select, str):
        extend_select = [extend_select]
    if select is None and not ignore and not extend_select:
        return None
    upper = lambda codes: tuple(c.strip().upper() for c in codes)  # noqa: E731
    return Selection(upper(select) if select is not None else None, upper(extend_select or ()), upper(ignore or ()))


def check_source(
    source: str | bytes,
    path: str | os.PathLike = "<stdin>",
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    extend_select: Iterable[str] = (),
    config: Config | None = None,
) -> list[Diagnostic]:
    """The diagnostics for one source text: ``str``, or the file's ``bytes`` (decoded as
    Python decodes a file: a BOM or an encoding declaration, else UTF-8). ``path`` (a
    ``str`` or ``os.PathLike``) is the name its findings are reported under and
    per-file-ignores match; the file is not read. Never raises for bad input text: a
    source that cannot be parsed gets UT000. A source that is not text (a path given
    where the text belongs, say) is a ``TypeError``. ``config`` defaults to the
    built-in defaults."""
    if not isinstance(source, (str, bytes)):
        hint = "; to check files, call check_paths" if isinstance(source, os.PathLike) else ""
        raise TypeError(f"check_source takes the source text (str or bytes), not {type(source).__name__}{hint}")
    path = _path_argument(path, "check_source: path")
    config = config if config is not None else Config(root=Path.cwd())
    keep = Filter(config, _cli_selection(select, ignore, extend_select))
    diagnostics, _, _ = analyze_source(path, source, engine().Project([path], [str(config.root)]),
                                       config.opset or DEFAULT_OPSET)
    return reported(diagnostics, keep)


def check_paths(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    extend_select: Iterable[str] = (),
    config: Config | None = None,
    jobs: int | None = None,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    progress: bool = False,
) -> list[Diagnostic]:
    """The diagnostics for files and directories (walked as ``untrace check`` does),
    sorted by path, line, column and code.

    ``paths`` is one path (``str``, ``bytes`` or ``os.PathLike``) or an iterable of
    them. An empty iterable checks no file and returns ``[]``: unlike the command line,
    which checks ``.`` when given no path, so that ``check_paths(changed_files)`` with
    nothing changed checks nothing rather than the whole working directory. (The
    selection and the configuration are still checked: a mistake there raises whatever
    the files.) A path that does not exist is a ``ValueError`` (``ConfigError``);
    ``-`` is the command line's standard input, and is refused here (pass the text to
    :func:`check_source`). ``config`` defaults to the ``[tool.untrace]`` of the nearest
    ``pyproject.toml``."""
    from analyzer.discovery import STDIN, discover

    if isinstance(paths, (str, bytes, os.PathLike)):
        # a string is one path, not an iterable of one-letter paths
        paths = [paths]
    paths = [_path_argument(p, "check_paths: paths") for p in paths]
    if STDIN in paths:
        raise ConfigError("check_paths: `-` (standard input) is for the command line; "
                          "pass the text to check_source instead")
    config = config if config is not None else resolve_config(paths)
    cli = _cli_selection(select, ignore, extend_select)
    if not paths:
        Filter(config, cli)  # the selection is checked all the same
        return []
    found = discover(paths, config)
    if found.unreadable:
        import warnings

        for directory, reason in found.unreadable:
            # the API's way of the command's warning and exit 2: what is returned is not all
            warnings.warn(f"cannot read directory {directory}: {reason}; its files were not checked", stacklevel=2)
    return run_check(
        found.files,
        config=config,
        cli=cli,
        jobs=jobs,
        use_cache=use_cache,
        cache_dir=cache_dir,
        progress=progress,
    ).diagnostics


def _path_argument(path, what: str) -> str:
    """A path argument as the ``str`` the checker uses (``bytes`` decoded as the file
    system does); an empty one is a ``ConfigError`` (a ``ValueError``), anything else a
    ``TypeError`` naming it."""
    if isinstance(path, (str, bytes, os.PathLike)):
        path = os.fsdecode(path)  # a PathLike may give str or bytes
        if path:
            return path
        raise ConfigError(f"{what}: an empty path names no file")
    raise TypeError(f"{what}: expected a path (str, bytes or os.PathLike), not {type(path).__name__}")
