"""Analysing files: one file's rules and `# noqa` (`analyze_source`), in this process or
in worker processes that each build their own `Project`, with a time limit per file (a
soft one in Python, and a hard one that ends a worker stuck in native code). A worker
that dies is reported against the file it was on, and the other files are retried."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from analyzer import interrupts
from analyzer import rules as rule_registry
from analyzer.diagnostics import Diagnostic
from analyzer.file_diagnostics import internal_error
from analyzer.memory_budget import MemoryBudget, give_back
from analyzer.noqa import filter_noqa
from analyzer.source_text import decode_source, read_text


def engine():
    """The analysis engine (libcst and the analyses), imported on first use only: a run
    whose files are all cache hits never pays for it."""
    from analyzer import engine

    return engine


DEFAULT_OPSET = 18  # the ONNX opset rules assume when `[tool.untrace] opset` is not set

_PROJECT = None  # the worker's engine.Project
_BUDGET = None  # the worker's memory_budget.MemoryBudget
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


def _settle(project, budget) -> None:
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


def _init_worker(
    files: Sequence[str],
    roots: Sequence[str],
    slots=None,
    counter=None,
    opset: int = DEFAULT_OPSET,
    parent: tuple[int, int] | None = None,
) -> None:
    _leave_stop_signals_to_the_parent()
    _end_with_the_parent(parent)
    gc.set_threshold(*GC_THRESHOLDS)  # see GC_THRESHOLDS: a worker's whole life is analysis
    global _PROJECT, _BUDGET, _SLOTS, _SLOT, _OPSET
    _PROJECT = engine().Project(files, roots)
    _BUDGET = MemoryBudget.from_env()
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


def _worker_parent() -> tuple[int, int]:
    """What a worker needs to know of the process starting the pool: its pid, and the
    thread that forks (the main thread, which lives as long as the process)."""
    return os.getpid(), threading.main_thread().ident


def _leave_stop_signals_to_the_parent() -> None:
    """Ctrl-C and SIGTERM are the parent's to handle: it ends the workers (`_stop_pool`).
    A worker inherits the parent's handlers, and the signals blocked (the pool is started
    inside `interrupts.deferred`): a Ctrl-C to the process group that came since the fork
    is dropped by SIG_IGN, and SIGTERM (`terminate()`) ends the worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    interrupts.forget()
    interrupts.unblock_in_this_thread()


def _end_with_the_parent(parent: tuple[int, int] | None) -> None:
    """A worker ends when the process that started it ends, however that ends (SIGKILL
    too), and holds none of the caller's pipes: workers left running (150 MB each) kept
    the caller's ``communicate()`` waiting for ever (issue 22, item 11). Nothing a
    worker does needs undoing: it reads files and sends its results back."""
    # The report is the parent's: a worker writes nothing to standard output, and keeps
    # no descriptor of the caller's pipes (its own errors reach the parent as results).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    if not os.environ.get("UNTRACE_DEBUG"):
        os.dup2(devnull, 2)
    os.close(devnull)
    if parent is None:
        return
    import multiprocessing

    parent_pid, forking_thread = parent
    # Linux: the kernel kills the worker when its parent dies, even in native code that
    # holds the GIL. PR_SET_PDEATHSIG fires when the *thread* that forked exits, so it is
    # asked for only when the main thread forked this worker (a pool that forks from
    # another thread would lose its workers when that thread ends). A parent that died
    # before it was asked for is seen by the worker's new parent pid.
    if (
        sys.platform.startswith("linux")
        and multiprocessing.get_start_method() == "fork"
        and threading.get_ident() == forking_thread
        and _set_parent_death_signal(signal.SIGKILL)
        and os.getppid() != parent_pid
    ):
        os._exit(1)
    # Everywhere (macOS has no prctl; spawn and forkserver workers): a thread waits for
    # the parent's end, which closes the pipe whose other end is the worker's sentinel.
    from multiprocessing.connection import wait as wait_for

    parent_process = multiprocessing.parent_process()
    if parent_process is None:
        return

    def leave_when_the_parent_is_gone() -> None:
        wait_for([parent_process.sentinel])
        os._exit(1)

    threading.Thread(target=leave_when_the_parent_is_gone, name="untrace-parent-watch", daemon=True).start()


def _set_parent_death_signal(signum: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


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
    which the op rules (UT302) read from a ``TargetFact``. The recursive passes get the
    frames they need for code as deep as the front end lets through (`stack_room`)."""
    # imported here: `analyzer.frontend` brings libcst, which a run whose every file is
    # a cache hit never loads
    from analyzer.frontend.nesting import stack_room

    with stack_room():
        return _analyze_source(path, data, project, opset)


def _analyze_source(path: str, data: bytes | str, project, opset: int) -> tuple[list[Diagnostic], dict, bool]:
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
            _settle(_PROJECT, _BUDGET)
        finally:
            if hard:
                signal.setitimer(signal.ITIMER_PROF, 0)
            if _SLOTS is not None:
                _SLOTS[2 * _SLOT] = -1
    return results


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


Outcome = tuple[list[Diagnostic], dict, bool]  # a file's diagnostics, deps, and whether they may be cached


def analyze_all(
    pending: Sequence[tuple[str, bytes, str | None]],
    all_files: Sequence[str],
    roots: Sequence[str],
    jobs: int | None,
    progress: bool,
    opset: int,
    on_outcome: Callable[[int, Outcome], None],
) -> None:
    """Hand each pending file's outcome to ``on_outcome`` (pending index, outcome) as soon
    as it is known, and keep none: a tree's dependencies (13 KB a transformers file) are
    written to the cache and dropped as the run goes."""
    jobs = default_jobs() if not jobs or jobs < 1 else jobs
    items = [(path, data) for path, data, _ in pending]
    outcomes = _Outcomes(len(items), on_outcome)
    bar = _Progress(len(items)) if progress else None
    try:
        if jobs == 1 or len(items) == 1:
            project = engine().Project(all_files, roots)
            budget = MemoryBudget.from_env()
            with _rare_collections():
                for index, (path, data) in enumerate(items):
                    interrupts.check()  # an interrupt whose first raise was lost
                    outcomes.deliver(index, analyze_source(path, data, project, opset))
                    _settle(project, budget)
                    if bar:
                        bar.advance(1)
        else:
            _analyze_in_pool(items, all_files, roots, min(jobs, len(items)), bar, outcomes, opset)
    finally:
        if bar:
            bar.close()


class _Outcomes:
    """Which files' outcomes were handed on (`analyze_all`), each once."""

    def __init__(self, size: int, on_outcome: Callable[[int, Outcome], None]):
        self._done = [False] * size
        self._on_outcome = on_outcome

    def deliver(self, index: int, outcome: Outcome) -> None:
        self._done[index] = True
        self._on_outcome(index, outcome)

    def done(self, index: int) -> bool:
        return self._done[index]


def _died(path: str, why: str) -> tuple[list[Diagnostic], dict, bool]:
    return [internal_error(path, RuntimeError(why), "a worker process")], {}, False


def _analyze_in_pool(items, all_files, roots, jobs, bar, outcomes: _Outcomes, opset=DEFAULT_OPSET) -> None:
    """Analyse ``items`` in worker processes. A worker that dies (a crash in native code,
    or the hard time limit) takes the pool down with it: the file it was on is identified
    from the shared slots and reported, and every unfinished file is retried."""
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
                outcomes.deliver(index, _died(items[index][0], f"the analysis took more than {HARD_TIMEOUT:g} s of CPU time"))
                if bar:
                    bar.advance(1)
            else:
                suspects.append(index)
        if not in_flight:
            suspects = list(broken)  # nothing to go by: take every file on its own
        # Each suspect alone in a pool of its own: it harms nobody if it kills it again.
        for index in suspects:
            if outcomes.done(index):
                continue
            again, running = _run_batches([[index]], items, outcomes, all_files, roots, 1, bar, opset)
            if again:
                slow = bool(HARD_TIMEOUT) and any(elapsed >= HARD_TIMEOUT for _, elapsed in running)
                why = f"the analysis took more than {HARD_TIMEOUT:g} s of CPU time" if slow else "the analysis process died"
                outcomes.deliver(index, _died(items[index][0], why))
                if bar:
                    bar.advance(1)
        todo = [i for i in broken if not outcomes.done(i)]
        chunk = 1


def _run_batches(batches, items, outcomes, all_files, roots, jobs, bar, opset=DEFAULT_OPSET) -> tuple[list[int], list[tuple[int, float]]]:
    """Run ``batches`` of item indices in a fresh pool. Returns the indices whose worker
    died, and the (index, seconds) of the files being analysed when it happened."""
    import multiprocessing

    broken: list[int] = []
    executor = None
    try:
        # Started with stop signals held (`interrupts.deferred`): one that comes while a
        # worker is forked would otherwise be raised in a fork callback, where Python
        # ignores it (the run went on), or in the worker before it set its handlers.
        with interrupts.deferred():
            slots = multiprocessing.Array("d", [-1.0, 0.0] * jobs, lock=False)
            counter = multiprocessing.Value("i", 0)
            executor = ProcessPoolExecutor(
                max_workers=jobs,
                initializer=_init_worker,
                initargs=(list(all_files), list(roots), slots, counter, opset, _worker_parent()),
            )
            futures: dict[Future, list[int]] = {
                executor.submit(_analyze_batch, [(i, *items[i]) for i in batch]): batch for batch in batches
            }
        remaining = set(futures)
        while remaining:
            done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            interrupts.check()  # an interrupt whose first raise was lost
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
                    outcomes.deliver(index, outcome)
                if bar:
                    bar.advance(len(batch))
        executor.shutdown(wait=True)
    except BaseException:
        if executor is not None:
            _stop_pool(executor)
        raise
    in_flight = []
    if broken:
        now = time.monotonic()
        for slot in range(jobs):
            index = int(slots[2 * slot])
            if index >= 0 and not outcomes.done(index):
                in_flight.append((index, now - slots[2 * slot + 1]))
    return sorted(broken), in_flight


def _stop_pool(executor: ProcessPoolExecutor) -> None:
    """Interrupted: end the workers now, without waiting for the files in progress, and
    reap them, so that none outlives this process (they write nothing; SIGKILL is safe)."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.kill()
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(timeout=5)
    executor.shutdown(wait=False, cancel_futures=True)


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
