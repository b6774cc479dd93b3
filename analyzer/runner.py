"""Run the rules over files: the engine of ``untrace check`` and of the Python API.

    check_source(source, path="<stdin>", *, select=None, ignore=(), config=None)
    check_paths(paths, *, select=None, ignore=(), config=None, jobs=None, use_cache=True)

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

What is reported (``_reported``): each path spelled one way (``report_path``: relative to
the working directory under it, else absolute), one finding per (path, line, column,
code) with every call path that reaches it in ``call_paths``, sorted on every field.

``apply_fixes`` / ``fix_files`` (from ``analyzer.fixes.apply``) apply the edits of the
diagnostics' fixes, to the bytes analysed only (``CheckResult.hashes``).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import threading
import time
import tokenize
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path

from analyzer import rules as rule_registry
from analyzer.cache import content_hash
from analyzer.config import Config, ConfigError, Selection, check_codes, enabled_codes, known_codes, resolve_config
from analyzer.diagnostics import Diagnostic
from analyzer.files import not_regular, not_regular_message
from analyzer.fixes.apply import FixOutcome, apply_fixes, fix_files  # noqa: F401 - part of this module's API
from analyzer.noqa import filter_noqa

__all__ = [
    "CheckResult",
    "Diagnostic",
    "INTERNAL_ERROR",
    "apply_fixes",
    "check_paths",
    "check_source",
    "run_check",
]

PARSE_ERROR = "parse-error"
INTERNAL_ERROR = "internal-error"


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


def _file_diagnostic(path: str, name: str, message: str, suggestion: str | None = None) -> Diagnostic:
    return Diagnostic(
        code="UT000",
        name=name,
        message=message,
        severity="error",
        path=path,
        line=1,
        column=1,
        end_line=1,
        end_column=1,
        suggestion=suggestion,
    )


def internal_error(path: str, error: BaseException, where: str = "the analysis") -> Diagnostic:
    detail = str(error).splitlines()[0] if str(error) else ""
    named = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    return _file_diagnostic(
        path,
        INTERNAL_ERROR,
        f"untrace could not analyse this file: {named} in {where}",
        "this is a bug in untrace; the other files were still checked. Please report it with the file.",
    )


def read_error(path: str, error: OSError) -> Diagnostic:
    reason = error.strerror or type(error).__name__
    return _file_diagnostic(path, PARSE_ERROR, f"cannot read file: {reason}")


# --------------------------------------------------------------------------------------
# decoding (for noqa and reporters; the engine decodes on its own)


def decode_source(data: bytes | str) -> str:
    """The text of a Python source as its encoding declaration says, with undecodable
    bytes replaced (good enough for finding ``# noqa`` and printing a line)."""
    if isinstance(data, str):
        return data
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (SyntaxError, LookupError):
        encoding = "utf-8"
    try:
        text = data.decode(encoding, errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def _read_text(path: str) -> str | None:
    if not_regular(path):
        return None
    try:
        with open(path, "rb") as handle:
            return decode_source(handle.read())
    except OSError:
        return None


# --------------------------------------------------------------------------------------
# analysing one file (in this process or in a worker)

def _engine():
    """The analysis engine (libcst and the analyses), imported on first use only: a run
    whose files are all cache hits never pays for it."""
    from analyzer import engine

    return engine


DEFAULT_OPSET = 18  # the ONNX opset rules assume when `[tool.untrace] opset` is not set

_PROJECT = None  # the worker's engine.Project
_OPSET = DEFAULT_OPSET  # the worker's target opset
_SLOTS = None  # shared with the parent: per worker, (item index, monotonic start time)
_SLOT = -1


# The cyclic garbage collector's thresholds while files are analysed. A process that
# checks a tree keeps every parsed file's IR (the project's dependencies), so the heap
# grows to hundreds of MB of objects that live to the end, and with CPython's default
# (700, 10, 10) the collector rescans them over and over: on transformers that was a third
# of the CPU time. Almost all garbage here is freed by reference counting, so collecting
# rarely costs little memory (the same peak on a 250-file sample; 28% less CPU).
GC_THRESHOLDS = (100_000, 50, 100)


@contextlib.contextmanager
def _rare_collections():
    """Collect rarely while files are analysed, and never rescan what a finished file
    left (see `_settle`); everything is handed back to the collector at the end."""
    saved = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*saved)


def _settle() -> None:
    """After a file: what it added to the project (parsed IR, summaries) lives on, so it
    is moved out of the collector's generations for the rest of the run."""
    gc.freeze()


def _init_worker(files: Sequence[str], roots: Sequence[str], slots=None, counter=None, opset: int = DEFAULT_OPSET) -> None:
    # Ctrl-C is the parent's to handle: workers stay quiet and are shut down by it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*GC_THRESHOLDS)  # see GC_THRESHOLDS: a worker's whole life is analysis
    global _PROJECT, _SLOTS, _SLOT, _OPSET
    _PROJECT = _engine().Project(files, roots)
    _OPSET = opset
    if slots is not None and counter is not None:
        with counter.get_lock():
            _SLOT = counter.value
            counter.value += 1
        _SLOTS = slots
        # The hard limit: SIGPROF's default action ends this worker after that much CPU
        # time on one file, even inside native code (libcst's parser) that the Python
        # level watchdog cannot interrupt. The parent sees which file it was.
        if hasattr(signal, "SIGPROF"):
            signal.signal(signal.SIGPROF, signal.SIG_DFL)


class AnalysisTimeout(BaseException):
    """Raised by the per-file watchdog. A BaseException, so that the analysis' own
    ``except Exception`` handlers cannot swallow it."""


# CPU seconds one file may take (analysis and rules) before it is abandoned with an
# internal-error diagnostic: a pathological file must not hang the whole run. The soft
# limit interrupts Python code; in worker processes, the hard one ends the worker when
# native code (libcst's parser) does not return. CPU time rather than wall time, so that a
# busy machine does not turn slow files into failures. UNTRACE_FILE_TIMEOUT overrides.
def _timeout_from_env() -> float | None:
    try:
        value = float(os.environ.get("UNTRACE_FILE_TIMEOUT", "60"))
    except ValueError:
        value = 60.0
    return value if value > 0 else None


FILE_TIMEOUT = _timeout_from_env()
HARD_TIMEOUT = FILE_TIMEOUT * 1.5 + 10 if FILE_TIMEOUT else None


@contextlib.contextmanager
def _deadline(seconds: float | None):
    usable = (
        seconds
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)  # nobody else's timer is running
    )
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise AnalysisTimeout(f"gave up after {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGVTALRM, expire)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


def analyze_source(path: str, data: bytes | str, project, opset: int = DEFAULT_OPSET) -> tuple[list[Diagnostic], dict, bool]:
    """All rules' diagnostics for one file after ``# noqa``, its deps, and whether the
    result may be cached (internal errors are not). ``opset`` is the configured target,
    which the op rules (UT302) read from a ``TargetFact``."""
    diagnostics: list[Diagnostic] = []
    cacheable = True
    try:
        with _deadline(FILE_TIMEOUT):
            try:
                facts, deps = _engine().analyze_file(path, data, project)
                facts = list(facts) + [_target_fact(path, opset)]
            except (Exception, RecursionError) as error:  # noqa: BLE001 - one file must not stop the run
                return [internal_error(path, error)], {}, False
            for rule in rule_registry.all_rules():
                try:
                    diagnostics.extend(rule.detect(facts))
                except (Exception, RecursionError) as error:  # noqa: BLE001
                    diagnostics.append(internal_error(path, error, where=f"rule {rule.code}"))
                    cacheable = False
    except AnalysisTimeout as error:
        return [internal_error(path, error, where="the analysis (timed out)")], {}, False
    own_text: list[str | None] = []

    def text_for(p: str) -> str | None:
        if p == path:
            if not own_text:
                own_text.append(decode_source(data))
            return own_text[0]
        return _read_text(p)

    try:
        diagnostics = filter_noqa(diagnostics, text_for)
    except Exception as error:  # noqa: BLE001
        diagnostics.append(internal_error(path, error, where="noqa handling"))
        cacheable = False
    return diagnostics, dict(deps or {}), cacheable


def _target_fact(path: str, opset: int):
    from analyzer.analyses.facts import Site, TargetFact

    return TargetFact(Site(path, 1, 1, 1, 1), opset)


def _analyze_batch(batch: Sequence[tuple[int, str, bytes]]) -> list[tuple[list[Diagnostic], dict, bool]]:
    """Worker side: analyse ``(index, path, bytes)`` items, recording which one runs."""
    results = []
    hard = HARD_TIMEOUT if _SLOTS is not None and hasattr(signal, "ITIMER_PROF") else None
    if hard and FILE_TIMEOUT and hard <= FILE_TIMEOUT:
        hard = None  # a misconfiguration: let the soft limit speak
    for index, path, data in batch:
        if _SLOTS is not None:
            _SLOTS[2 * _SLOT] = index
            _SLOTS[2 * _SLOT + 1] = time.monotonic()
        if hard:
            signal.setitimer(signal.ITIMER_PROF, hard)
        try:
            results.append(analyze_source(path, data, _PROJECT, _OPSET))
            _settle()
        finally:
            if hard:
                signal.setitimer(signal.ITIMER_PROF, 0)
            if _SLOTS is not None:
                _SLOTS[2 * _SLOT] = -1
    return results


# --------------------------------------------------------------------------------------
# selection


class Filter:
    """Which diagnostics are reported: enabled codes and per-file-ignores."""

    def __init__(self, config: Config, cli: Selection | None = None):
        for label, patterns in (
            ("--select", cli.select if cli else None),
            ("--extend-select", cli.extend_select if cli else ()),
            ("--ignore", cli.ignore if cli else ()),
        ):
            bad = check_codes(patterns or ())
            if bad:
                raise ConfigError(f"{label}: unknown rule code(s): {', '.join(bad)} (see `untrace rule`)")
        layers = [config.selection] + ([cli] if cli else [])
        self.codes = enabled_codes(layers, known_codes())
        self.root = config.root.absolute()
        self.per_file = []
        per_file = config.all_per_file_ignores
        if per_file:
            import pathspec

            for glob, codes in per_file.items():
                self.per_file.append((pathspec.GitIgnoreSpec.from_lines([glob]), codes))
        self._ignored_for: dict[str, tuple[str, ...]] = {}

    def _per_file_codes(self, path: str) -> tuple[str, ...]:
        if path not in self._ignored_for:
            codes: tuple[str, ...] = ()
            if self.per_file:
                absolute = Path(os.path.abspath(path))
                try:
                    rel = absolute.relative_to(self.root).as_posix()
                except ValueError:
                    rel = absolute.name
                for spec, ignored in self.per_file:
                    if spec.match_file(rel):
                        codes += ignored
            self._ignored_for[path] = codes
        return self._ignored_for[path]

    def keep(self, diag: Diagnostic) -> bool:
        if diag.name == INTERNAL_ERROR:
            return True  # never hidden: the file was not really checked
        if diag.code not in self.codes:
            return False
        ignored = self._per_file_codes(diag.path)
        return not any(p == "ALL" or diag.code.startswith(p) for p in ignored)


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
        cache = Cache(Path(cache_dir) if cache_dir is not None else config.root / CACHE_DIR_NAME, all_files)

    found: list[Diagnostic] = []
    pending: list[tuple[str, bytes | str, str | None]] = []  # path, source, cache key
    result = CheckResult(diagnostics=[], files_checked=len(files) + (1 if stdin else 0))
    notebooks: dict = {}  # path -> notebook.Notebook
    for path in files:
        if path in unopened:
            found.append(_file_diagnostic(path, PARSE_ERROR, not_regular_message(unopened[path])))
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
        outcomes = _analyze_all(pending, all_files, roots, jobs, progress, opset)
        for (path, data, key), (diagnostics, deps, cacheable) in zip(pending, outcomes):
            if path in notebooks:
                diagnostics = _notebook().in_cells(diagnostics, path, notebooks[path])
            # A finding in another file is kept under its absolute path: the entry is
            # read again from other working directories (the file's own findings keep
            # the spelling its key was made with).
            diagnostics = [
                d if d.path == path or d.path in _NOT_PATHS else replace(d, path=os.path.abspath(d.path))
                for d in diagnostics
            ]
            found.extend(diagnostics)
            if cache is not None and key is not None and cacheable:
                cache.put(key, diagnostics, deps)
        result.analyzed = len(pending)
    if stdin is not None:
        path, data = stdin
        result.sources[path] = decode_source(data)
        source = _notebook_source(path, data, notebooks, found, result) if path.endswith(".ipynb") else data
        if source is not None:
            diagnostics, _, _ = analyze_source(path, source, _engine().Project(all_files, roots), opset)
            if path in notebooks:
                diagnostics = _notebook().in_cells(diagnostics, path, notebooks[path])
            found.extend(diagnostics)
            result.analyzed += 1

    result.files_checked -= len(result.skipped)
    result.diagnostics = _reported(found, keep)
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
        found.append(_file_diagnostic(path, PARSE_ERROR, str(error)))
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


_NOT_PATHS = ("-", "<stdin>", "<string>")


def report_path(path: str) -> str:
    """The one spelling of a path in findings, as ruff prints them: relative to the
    working directory when the file is under it, else absolute. ``-`` (stdin) and
    other non-paths stay as they are."""
    if path in _NOT_PATHS:
        return path
    try:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive (Windows)
        return os.path.abspath(path)
    except OSError:  # no working directory any more (the command refuses to start then)
        return path
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return absolute
    return relative


def _reported(found: Iterable[Diagnostic], keep: "Filter") -> list[Diagnostic]:
    """What is reported, in its order: the kept diagnostics, each path spelled one way
    (`report_path`), one finding per (path, cell, line, column, code) listing every call path
    that reaches it (a UT000 also per message: two different failures stay two), sorted
    on every field so that the report is the same bytes whatever the hash seed."""
    spelled: dict[str, str] = {}
    sites: dict[tuple, list[Diagnostic]] = {}
    for diag in found:
        if not keep.keep(diag):
            continue
        path = spelled.get(diag.path)
        if path is None:
            path = spelled[diag.path] = report_path(diag.path)
        if path != diag.path:
            diag = replace(diag, path=path)
        key = (diag.path, diag.cell or 0, diag.line, diag.column, diag.code)
        if diag.code == "UT000":
            key += (diag.name, diag.message)
        sites.setdefault(key, []).append(diag)
    merged = []
    for group in sites.values():
        if len(group) == 1 and not group[0].call_paths:
            merged.append(group[0])
            continue
        group.sort(key=lambda d: (_path_order(d.call_path), _sort_key(d)))
        paths = sorted({p for d in group for p in d.all_call_paths}, key=_path_order)
        merged.append(replace(group[0], call_paths=tuple(paths)))
    return sorted(merged, key=_sort_key)


def _path_order(call_path: tuple[str, ...]) -> tuple:
    return (len(call_path), call_path)


def _sort_key(diag: Diagnostic) -> tuple:
    fix = diag.fix
    return (
        diag.path, diag.cell or 0, diag.line, diag.column, diag.code, diag.end_line, diag.end_column, diag.message,
        diag.name, diag.severity, diag.function or "", _path_order(diag.call_path),
        tuple(_path_order(p) for p in diag.all_call_paths), diag.suggestion or "",
        (True, fix.message, fix.applicability, tuple((e.line, e.column, e.end_line, e.end_column, e.content) for e in fix.edits))
        if fix is not None else (False,),
    )


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _analyze_all(
    pending: Sequence[tuple[str, bytes, str | None]],
    all_files: Sequence[str],
    roots: Sequence[str],
    jobs: int | None,
    progress: bool,
    opset: int = DEFAULT_OPSET,
) -> list[tuple[list[Diagnostic], dict, bool]]:
    jobs = default_jobs() if not jobs or jobs < 1 else jobs
    items = [(path, data) for path, data, _ in pending]
    bar = _Progress(len(items)) if progress else None
    try:
        if jobs == 1 or len(items) == 1:
            project = _engine().Project(all_files, roots)
            outcomes = []
            with _rare_collections():
                for path, data in items:
                    outcomes.append(analyze_source(path, data, project, opset))
                    _settle()
                    if bar:
                        bar.advance(1)
            return outcomes
        return _analyze_in_pool(items, all_files, roots, min(jobs, len(items)), bar, opset)
    finally:
        if bar:
            bar.close()


def _died(path: str, why: str) -> tuple[list[Diagnostic], dict, bool]:
    return [internal_error(path, RuntimeError(why), "a worker process")], {}, False


def _analyze_in_pool(items, all_files, roots, jobs, bar, opset=DEFAULT_OPSET) -> list:
    """Analyse ``items`` in worker processes. A worker that dies (a crash in native code,
    or the hard time limit) takes the pool down with it: the file it was on is identified
    from the shared slots and reported, and every unfinished file is retried."""
    outcomes: list = [None] * len(items)
    todo = list(range(len(items)))
    chunk = max(1, min(32, len(items) // (jobs * 8) or 1))
    while todo:
        batches = [todo[i : i + chunk] for i in range(0, len(todo), chunk)]
        broken, in_flight = _run_batches(batches, items, outcomes, all_files, roots, jobs, bar, opset)
        if not broken:
            break
        suspects = []
        for index, elapsed in in_flight:
            if HARD_TIMEOUT and elapsed >= HARD_TIMEOUT:
                outcomes[index] = _died(items[index][0], f"the analysis took more than {HARD_TIMEOUT:g} s of CPU time")
                if bar:
                    bar.advance(1)
            else:
                suspects.append(index)
        if not in_flight:
            suspects = list(broken)  # nothing to go by: take every file on its own
        # Each suspect alone in a pool of its own: it harms nobody if it kills it again.
        for index in suspects:
            if outcomes[index] is not None:
                continue
            again, running = _run_batches([[index]], items, outcomes, all_files, roots, 1, bar, opset)
            if again:
                slow = bool(HARD_TIMEOUT) and any(elapsed >= HARD_TIMEOUT for _, elapsed in running)
                why = f"the analysis took more than {HARD_TIMEOUT:g} s of CPU time" if slow else "the analysis process died"
                outcomes[index] = _died(items[index][0], why)
                if bar:
                    bar.advance(1)
        todo = [i for i in broken if outcomes[i] is None]
        chunk = 1
    return outcomes


def _run_batches(batches, items, outcomes, all_files, roots, jobs, bar, opset=DEFAULT_OPSET) -> tuple[list[int], list[tuple[int, float]]]:
    """Run ``batches`` of item indices in a fresh pool. Returns the indices whose worker
    died, and the (index, seconds) of the files being analysed when it happened."""
    import multiprocessing

    slots = multiprocessing.Array("d", [-1.0, 0.0] * jobs, lock=False)
    counter = multiprocessing.Value("i", 0)
    broken: list[int] = []
    executor = ProcessPoolExecutor(
        max_workers=jobs,
        initializer=_init_worker,
        initargs=(list(all_files), list(roots), slots, counter, opset),
    )
    try:
        futures: dict[Future, list[int]] = {
            executor.submit(_analyze_batch, [(i, *items[i]) for i in batch]): batch for batch in batches
        }
        remaining = set(futures)
        while remaining:
            done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for future in done:
                batch = futures[future]
                try:
                    results = future.result()
                except BrokenProcessPool:
                    broken.extend(batch)
                    continue
                except Exception as error:  # noqa: BLE001 - e.g. an unpicklable result
                    results = [([internal_error(items[i][0], error, "a worker process")], {}, False) for i in batch]
                for index, outcome in zip(batch, results):
                    outcomes[index] = outcome
                if bar:
                    bar.advance(len(batch))
    except BaseException:
        for process in list(getattr(executor, "_processes", {}).values()):
            process.terminate()  # interrupted: do not wait for files in progress
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    in_flight = []
    if broken:
        now = time.monotonic()
        for slot in range(jobs):
            index = int(slots[2 * slot])
            if index >= 0 and outcomes[index] is None:
                in_flight.append((index, now - slots[2 * slot + 1]))
    return sorted(broken), in_flight


class _Progress:
    """A rich progress bar on stderr (only created when stderr is a terminal)."""

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("checking"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.progress.add_task("check", total=total)
        self.progress.start()

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)

    def close(self) -> None:
        self.progress.stop()


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
    path: str = "<stdin>",
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    extend_select: Iterable[str] = (),
    config: Config | None = None,
) -> list[Diagnostic]:
    """The diagnostics for one source text (never raises for bad input: a file that
    cannot be parsed gets UT000). ``config`` defaults to the built-in defaults."""
    config = config if config is not None else Config(root=Path.cwd())
    keep = Filter(config, _cli_selection(select, ignore, extend_select))
    diagnostics, _, _ = analyze_source(path, source, _engine().Project([path], [str(config.root)]),
                                       config.opset or DEFAULT_OPSET)
    return _reported(diagnostics, keep)


def check_paths(
    paths: Iterable[str | os.PathLike],
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
    sorted by path, line, column and code. ``config`` defaults to the ``[tool.untrace]``
    of the nearest ``pyproject.toml``."""
    from analyzer.discovery import discover

    paths = [os.fspath(p) for p in paths]
    config = config if config is not None else resolve_config(paths)
    found = discover(paths, config)
    if found.unreadable:
        import warnings

        for directory, reason in found.unreadable:
            # the API's way of the command's warning and exit 2: what is returned is not all
            warnings.warn(f"cannot read directory {directory}: {reason}; its files were not checked", stacklevel=2)
    return run_check(
        found.files,
        config=config,
        cli=_cli_selection(select, ignore, extend_select),
        jobs=jobs,
        use_cache=use_cache,
        cache_dir=cache_dir,
        progress=progress,
    ).diagnostics


