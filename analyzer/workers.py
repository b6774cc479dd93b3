"""Analysing many files: in this process, or in worker processes that each build their
own `Project` and are replaced when they pass their memory budget.

    analyze_all(pending, all_files, roots, jobs, progress, opset, on_outcome)

A worker is sent a batch of neighbouring files (they share dependencies, which its
project keeps) and answers file by file, so the parent always knows which file a worker
is on. A worker that passes its memory budget (`analyzer.memory_budget`) after a file
says so with that file's outcome and ends; the parent starts a fresh one and sends it
the rest of the batch. A fresh process is the only release that gives all the memory
back: one that drops the project in place keeps hundreds of MB resident, pinned by the
few objects that live on in each of the allocator's arenas.

A worker that dies (a crash in native code, the hard time limit) is reported against the
file it was on, after that file has been tried once more alone in a fresh worker; the
files after it in its batch go to the next worker. With one job and many files the
analysis still runs in one worker, for the same bound on memory; a few files are
analysed in this process (a pre-commit run on one file starts no process).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait as wait_for_any

from analyzer import file_analysis, interrupts
from analyzer.file_analysis import DEFAULT_OPSET, Outcome, analyze_source, engine, rare_collections, settle
from analyzer.file_diagnostics import internal_error
from analyzer.memory_budget import MemoryBudget

# With one job, this many files or more are analysed in a worker process (whose memory is
# bounded by replacing it); fewer in this process, which costs no start-up.
IN_PROCESS_FILES = 64

# What a forked worker starts from (`_WarmStart`): (files, roots, Project), set by the
# parent while its workers run.
_warm: tuple | None = None


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


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
        if len(items) == 1 or (jobs == 1 and len(items) < IN_PROCESS_FILES):
            _analyze_here(items, all_files, roots, opset, outcomes, bar)
        else:
            _Workers(items, all_files, roots, min(jobs, len(items)), opset, outcomes, bar).run()
    finally:
        if bar:
            bar.close()


def _analyze_here(items, all_files, roots, opset, outcomes, bar) -> None:
    project = engine().Project(all_files, roots)
    budget = MemoryBudget.from_env()
    with rare_collections():
        for index, (path, data) in enumerate(items):
            interrupts.check()  # an interrupt whose first raise was lost
            outcomes.deliver(index, analyze_source(path, data, project, opset))
            settle(project, budget)
            if bar:
                bar.advance(1)


class _Outcomes:
    """Which files' outcomes were handed on (`analyze_all`), each once."""

    def __init__(self, size: int, on_outcome: Callable[[int, Outcome], None]):
        self._done = [False] * size
        self._on_outcome = on_outcome
        self.remaining = size

    def deliver(self, index: int, outcome: Outcome) -> None:
        if not self._done[index]:
            self.remaining -= 1
        self._done[index] = True
        self._on_outcome(index, outcome)

    def done(self, index: int) -> bool:
        return self._done[index]


def _died(path: str, why: str) -> Outcome:
    return [internal_error(path, RuntimeError(why), "a worker process")], {}, False


# --------------------------------------------------------------------------------------
# the parent's side


class _Worker:
    """One analysing process, and the files sent to it that have no outcome yet (the
    first of them is the one it is on)."""

    def __init__(self, context, init_args: tuple):
        parent_end, child_end = context.Pipe(duplex=True)
        self.process = context.Process(target=_worker_main, args=(child_end, *init_args), daemon=True)
        self.process.start()
        child_end.close()
        self.connection = parent_end
        self.sent: deque[int] = deque()
        self.since = time.monotonic()  # when it started on the file it is on (near enough)

    def send(self, batch: list[tuple[int, str, bytes]]) -> None:
        self.sent.extend(index for index, _, _ in batch)
        self.since = time.monotonic()
        with contextlib.suppress(OSError):
            # A worker that died before it read: the parent hears its end as an EOF.
            self.connection.send(batch)

    def stop(self) -> None:
        """End it now: it writes nothing, so SIGKILL is safe, and it is reaped."""
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        with contextlib.suppress(OSError, ValueError, AssertionError):
            self.process.join(timeout=5)
        self.connection.close()

    def leave(self) -> None:
        """It ended on its own (its budget) or was told to: reap it."""
        with contextlib.suppress(OSError, ValueError, AssertionError):
            self.process.join(timeout=30)
        if self.process.exitcode is None:
            self.stop()
        else:
            self.connection.close()


class _Workers:
    """The parent's loop: keep every worker busy with a batch, hand on each outcome as it
    comes, replace a worker that retired or died."""

    def __init__(self, items, all_files, roots, jobs: int, opset: int, outcomes: _Outcomes, bar):
        import multiprocessing

        self.items = items
        self.outcomes = outcomes
        self.bar = bar
        self.jobs = jobs
        self.context = multiprocessing.get_context()
        self.init_args = (list(all_files), list(roots), opset, _worker_parent())
        self.todo: deque[int] = deque(range(len(items)))
        self.alone: set[int] = set()  # files whose worker died on them: tried again alone
        self.chunk = max(1, min(32, len(items) // (jobs * 8) or 1))
        self.workers: list[_Worker] = []
        self.warm = _WarmStart(all_files, roots) if self.context.get_start_method() == "fork" else None

    def run(self) -> None:
        global _warm
        try:
            while self.outcomes.remaining:
                self._keep_busy()
                busy = {worker.connection: worker for worker in self.workers if worker.sent}
                if not busy:
                    raise RuntimeError("files left with no worker on them")  # a bug here, not in a file
                for connection in wait_for_any(list(busy)):
                    interrupts.check()  # an interrupt whose first raise was lost
                    self._hear(busy[connection])
            for worker in self.workers:
                with contextlib.suppress(OSError):
                    worker.connection.send(None)
            for worker in self.workers:
                worker.leave()
        except BaseException:
            for worker in self.workers:
                worker.stop()
            raise
        finally:
            _warm = None  # the parsed modules go back to a caller of the API

    def _keep_busy(self) -> None:
        for worker in list(self.workers):
            if not worker.sent and not self.todo:
                worker.connection.send(None)  # nothing left for it
                worker.leave()
                self.workers.remove(worker)
        while len(self.workers) < self.jobs and self.todo:
            if self.warm is not None:
                self.warm.prepare()
            # Started with stop signals held (`interrupts.deferred`): one that comes while
            # a worker is forked would otherwise be raised in a fork callback, where
            # Python ignores it, or in the worker before it set its handlers.
            with interrupts.deferred():
                self.workers.append(_Worker(self.context, self.init_args))
        for worker in self.workers:
            if not worker.sent and self.todo:
                worker.send([(index, *self.items[index]) for index in self._next_batch()])

    def _next_batch(self) -> list[int]:
        first = self.todo.popleft()
        if first in self.alone:
            return [first]
        batch = [first]
        while self.todo and len(batch) < self.chunk and self.todo[0] not in self.alone:
            batch.append(self.todo.popleft())
        return batch

    def _hear(self, worker: _Worker) -> None:
        try:
            index, outcome, retiring = worker.connection.recv()
        except (EOFError, OSError):
            self._lost(worker)
            return
        worker.sent.popleft()
        worker.since = time.monotonic()
        if self.warm is not None:
            self.warm.learn(outcome[1])
        self.outcomes.deliver(index, outcome)
        if self.bar:
            self.bar.advance(1)
        if retiring:
            self._replace(worker)

    def _replace(self, worker: _Worker) -> None:
        """The worker is gone or going: what it had not done goes first to the next."""
        self.todo.extendleft(reversed(worker.sent))
        worker.sent.clear()
        worker.leave()
        self.workers.remove(worker)

    def _lost(self, worker: _Worker) -> None:
        """The worker died on the first file it had not answered."""
        index = worker.sent.popleft()
        elapsed = time.monotonic() - worker.since
        hard = file_analysis.HARD_TIMEOUT
        path = self.items[index][0]
        if hard and elapsed >= hard:
            self.outcomes.deliver(index, _died(path, f"the analysis took more than {hard:g} s of CPU time"))
        elif index in self.alone:
            self.outcomes.deliver(index, _died(path, "the analysis process died"))
        else:
            # Alone in a fresh worker, it harms nobody if it kills that one too; and a
            # death for another cause (the machine's memory) is not blamed on it.
            self.alone.add(index)
            worker.sent.appendleft(index)
        if self.outcomes.done(index) and self.bar:
            self.bar.advance(1)
        self._replace(worker)


class _WarmStart:
    """What the parent prepares once for all the workers it forks, which each started
    from nothing before: the module index (every file's text and identifiers, 3 s on
    transformers) and the IR of the modules that most files depend on (the base classes
    and utilities every model file imports, parsed again by each of the 10 workers of
    a transformers run: 27 MB of source, half of what the whole tree holds).

    Which modules those are is learnt from the dependencies of the outcomes received so
    far: the modules at least a tenth of the analysed files read are parsed in this
    process before the next worker is forked, which starts with a copy of them. A
    module's IR depends only on its text, so a worker's findings are the same whether
    it parsed the module or inherited it."""

    MAX_BYTES = 8_000_000  # of source parsed here: the workers' copies stay well within their budget

    def __init__(self, all_files: Sequence[str], roots: Sequence[str]):
        self.files, self.roots = list(all_files), list(roots)
        self.project = None
        self.counts: Counter[str] = Counter()
        self.analysed = 0  # outcomes with dependencies
        self.tried: set[str] = set()
        self.bytes = 0

    def learn(self, deps: dict) -> None:
        from analyzer.module_index import is_lookup

        if deps:
            self.analysed += 1
            self.counts.update(path for path in deps if not is_lookup(path))

    def prepare(self) -> None:
        """Parse what the next worker should start with, and offer it (`_warm`)."""
        global _warm
        if self.project is None:
            self.project = engine().Project(self.files, self.roots)
            self.project.index.read_tree()
        if self.analysed:
            from analyzer.frontend.nesting import stack_room

            common = sorted(path for path, n in self.counts.items() if 10 * n >= self.analysed and path not in self.tried)
            with stack_room():
                for path in common:
                    self.tried.add(path)
                    try:
                        size = os.path.getsize(path)
                        if self.bytes + size > self.MAX_BYTES:
                            continue
                        self.bytes += size
                        # with its methods: every worker reads them, and a worker that
                        # parsed a deferred method would parse it again after each fork
                        self.project.module(path, defer_methods=False)
                    except (Exception, RecursionError):  # noqa: BLE001 - the worker parses it, and reports what fails
                        continue
        _warm = (self.files, self.roots, self.project)


def _start_project(files: Sequence[str], roots: Sequence[str]):
    """The project a worker starts with: a copy of the parent's (`_WarmStart`), when it
    forked this worker for the same files; else a new one."""
    if _warm is not None and _warm[0] == list(files) and _warm[1] == list(roots):
        # what the parent made lives as long as this process: never rescanned
        gc.freeze()
        return _warm[2]
    return engine().Project(files, roots)


# --------------------------------------------------------------------------------------
# the worker's side


def _worker_main(connection, files: Sequence[str], roots: Sequence[str], opset: int,
                 parent: tuple[int, int] | None) -> None:
    """Analyse the batches the parent sends, answering (index, outcome, retiring) per
    file, until it sends None or this process passes its memory budget."""
    _leave_stop_signals_to_the_parent()
    _end_with_the_parent(parent)
    gc.set_threshold(*file_analysis.GC_THRESHOLDS)  # a worker's whole life is analysis
    # The hard limit: SIGPROF's default action ends this worker after that much CPU time
    # on one file, even inside native code (libcst's parser) that the Python-level
    # watchdog cannot interrupt. The parent knows which file it was on.
    hard = file_analysis.HARD_TIMEOUT if hasattr(signal, "ITIMER_PROF") else None
    if hard and file_analysis.FILE_TIMEOUT and hard <= file_analysis.FILE_TIMEOUT:
        hard = None  # a misconfiguration: let the soft limit speak
    if hard:
        signal.signal(signal.SIGPROF, signal.SIG_DFL)
    project = _start_project(files, roots)
    budget = MemoryBudget.from_env()
    while True:
        try:
            batch = connection.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for index, path, data in batch:
            if hard:
                signal.setitimer(signal.ITIMER_PROF, hard)
            try:
                outcome = analyze_source(path, data, project, opset)
            finally:
                if hard:
                    signal.setitimer(signal.ITIMER_PROF, 0)
            retiring = budget.exceeded()
            if not retiring:
                gc.freeze()  # what the file added lives on: the collector need not rescan it
            try:
                connection.send((index, outcome, retiring))
            except Exception as error:  # noqa: BLE001 - e.g. an outcome that cannot be pickled
                connection.send((index, _died(path, f"{type(error).__name__}: {error}"), retiring))
            if retiring:
                return


def _worker_parent() -> tuple[int, int]:
    """What a worker needs to know of the process starting it: its pid, and the thread
    that forks (the main thread, which lives as long as the process)."""
    return os.getpid(), threading.main_thread().ident


def _leave_stop_signals_to_the_parent() -> None:
    """Ctrl-C and SIGTERM are the parent's to handle: it ends the workers (`_Worker.stop`).
    A worker inherits the parent's handlers, and the signals blocked (workers are started
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
    # asked for only when the main thread forked this worker (a worker forked from
    # another thread would be lost when that thread ends). A parent that died before it
    # was asked for is seen by the worker's new parent pid.
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
    parent_process = multiprocessing.parent_process()
    if parent_process is None:
        return

    def leave_when_the_parent_is_gone() -> None:
        wait_for_any([parent_process.sentinel])
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
