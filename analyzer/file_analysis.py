"""Analysing one file: its rules and `# noqa` (`analyze_source`) against a `Project`, within
a time limit (a soft one in Python here; the hard one that ends a worker stuck in native
code is `HARD_TIMEOUT`, armed by `analyzer.workers`), and what a process does between
files to keep its memory in bounds (`settle`). Many files, in this process or in worker
processes, are `analyzer.workers.analyze_all`."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading

from analyzer import rules as rule_registry
from analyzer.diagnostics import Diagnostic
from analyzer.file_diagnostics import internal_error
from analyzer.memory_budget import give_back
from analyzer.noqa import filter_noqa
from analyzer.source_text import decode_source, read_text


def engine():
    """The analysis engine (libcst and the analyses), imported on first use only: a run
    whose files are all cache hits never pays for it."""
    from analyzer import engine

    return engine


DEFAULT_OPSET = 18  # the ONNX opset rules assume when `[tool.untrace] opset` is not set


# The cyclic garbage collector's thresholds while files are analysed. A process that
# checks a tree keeps every parsed file's IR (the project's dependencies), so the heap
# grows to hundreds of MB of objects that live to the end, and with CPython's default
# (700, 10, 10) the collector rescans them over and over: on transformers that was a third
# of the CPU time. Almost all garbage here is freed by reference counting, so collecting
# rarely costs little memory (the same peak on a 250-file sample; 28% less CPU).
GC_THRESHOLDS = (100_000, 50, 100)


@contextlib.contextmanager
def rare_collections():
    """Collect rarely while files are analysed, and never rescan what a finished file
    left (see `settle`); everything is handed back to the collector at the end."""
    saved = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*saved)


def settle(project, budget) -> None:
    """After a file: what it added to the project (parsed IR, summaries) lives on, so it
    is moved out of the collector's generations for the rest of the run; unless the
    process has passed its memory budget (`analyzer.memory_budget`), when the project
    forgets everything and the collector gets it all back."""
    if budget.exceeded():
        project.release()
        gc.unfreeze()
        gc.collect()
        give_back()
        budget.released()
    else:
        gc.freeze()


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


Outcome = tuple[list[Diagnostic], dict, bool]  # a file's diagnostics, deps, and whether they may be cached


def analyze_source(path: str, data: bytes | str, project, opset: int = DEFAULT_OPSET) -> Outcome:
    """All rules' diagnostics for one file after ``# noqa``, its deps, and whether the
    result may be cached (internal errors are not). ``opset`` is the configured target,
    which the op rules (UT302) read from a ``TargetFact``. The recursive passes get the
    frames they need for code as deep as the front end lets through (`stack_room`)."""
    # imported here: `analyzer.frontend` brings libcst, which a run whose every file is
    # a cache hit never loads
    from analyzer.frontend.nesting import stack_room

    with stack_room():
        return _analyze_source(path, data, project, opset)


def _analyze_source(path: str, data: bytes | str, project, opset: int) -> Outcome:
    diagnostics: list[Diagnostic] = []
    cacheable = True
    try:
        with _deadline(FILE_TIMEOUT):
            try:
                facts, deps = engine().analyze_file(path, data, project)
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
        return read_text(p)

    try:
        diagnostics = filter_noqa(diagnostics, text_for)
    except Exception as error:  # noqa: BLE001
        diagnostics.append(internal_error(path, error, where="noqa handling"))
        cacheable = False
    return diagnostics, dict(deps or {}), cacheable


def _target_fact(path: str, opset: int):
    from analyzer.analyses.kinds.facts import Site, TargetFact

    return TargetFact(Site(path, 1, 1, 1, 1), opset)
