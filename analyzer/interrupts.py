"""Stopping a run on Ctrl-C (SIGINT) or SIGTERM: at once, whatever it is doing, and never
by writing a file after the signal came.

Python's own SIGINT handler raises KeyboardInterrupt wherever the main thread is. When
that is a callback whose exceptions Python prints and ignores, the interrupt is lost
and the run goes on. One such place is in every run with workers: the functions
registered with ``os.register_at_fork`` (logging registers one) run in the parent right
after each fork of a pool's workers, and a signal that comes while the kernel copies the
process is handled in the first of them. ``check --fix`` then went on, fixed every file
and exited as if nothing happened (issue 22, item 14). Weakref callbacks and ``__del__``
methods are other such places. So:

- `install` (the executable's, `analyzer.cli.console`): SIGINT and SIGTERM are recorded
  before KeyboardInterrupt is raised. A raise that gets lost is raised again by `check`,
  which the run calls before it starts what must not follow an interrupt (a worker
  pool, a file's fix, the next fix pass), and the exit code is 130 whatever happened to
  the exception (`exit_code`).
- `deferred` holds signals for a section that must not be cut in the middle: starting a
  pool's workers (the forks) and replacing a file. A signal that comes inside is raised
  when the section ends; a section is not started after one. The signals are blocked
  for the thread too, so the workers forked inside start with them blocked (a worker
  sets its own handlers first, `workers._worker_main`) and threads started inside
  never take them (the main thread does).

In a process that did not call `install` (the Python API, tests calling ``main``),
`deferred` still blocks the signals for the section, and Python's handler raises when
it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

# Signals that stop a run. SIGTERM is handled like Ctrl-C (workers ended, temporary
# files removed, no fix written after it), and the process then ends by the signal, as
# the sender expects.
STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s is not None)

_received: int | None = None  # the first stop signal this process received
_depth = 0  # how many `deferred` sections the main thread is in


def _on_stop_signal(signum, frame) -> None:
    global _received
    if _received is None:
        _received = signum
    if _depth == 0:
        raise KeyboardInterrupt


def install() -> None:
    """Record SIGINT and SIGTERM and raise KeyboardInterrupt (main thread only). A
    signal the process was started with ignored (``nohup``, a background job) stays
    ignored."""
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _on_stop_signal)


def exit_at_once() -> None:
    """While the command starts (nothing to undo yet): a stop signal ends it at once,
    quietly, with exit 130. Replaced by `install` when the run begins."""

    def stop(signum, frame):
        global _received
        _received = signum
        end_by_signal()
        os._exit(130)

    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, stop)


def received() -> int | None:
    """The stop signal this process received, if any."""
    return _received


def check() -> None:
    """Raise KeyboardInterrupt if a stop signal came, even if its first raise was lost."""
    if _received is not None:
        raise KeyboardInterrupt


def forget() -> None:
    """In a forked worker: the parent's state is not the worker's."""
    global _received, _depth
    _received = None
    _depth = 0


def unblock_in_this_thread() -> None:
    """Take the stop signals again (a worker forked inside `deferred` starts with them
    blocked)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextlib.contextmanager
def deferred():
    """Hold stop signals until the section ends; raise KeyboardInterrupt then if one came,
    and at once, without running the section, if one came before."""
    global _depth
    check()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if hasattr(signal, "pthread_sigmask") else None
    main = threading.current_thread() is threading.main_thread()  # handlers run there only
    _depth += main
    try:
        yield
    finally:
        _depth -= main
        if previous is not None:
            # a signal held by the mask is delivered here, and its handler raises
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    check()  # one that reached the handler inside the section (delivered to another thread)


def hold() -> None:
    """The run is over: from now on a stop signal is only recorded (`exit_code`)."""
    global _depth
    _depth += 1
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def exit_code(code: int) -> int:
    """The exit code of a run that returned ``code``: 130 once a stop signal came (one
    still held by `hold` included)."""
    global _received
    if _received is None and hasattr(signal, "sigpending"):
        pending = [s for s in STOP_SIGNALS if s in signal.sigpending()]
        if pending:
            _received = pending[0]
    return 130 if _received is not None else code


def end_by_signal() -> None:
    """After SIGTERM, end the process by it (the sender sees it was terminated); after
    SIGINT, return (the exit code is 130)."""
    term = getattr(signal, "SIGTERM", None)
    if _received is not None and _received == term:
        signal.signal(term, signal.SIG_DFL)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, (term,))
        os.kill(os.getpid(), term)
