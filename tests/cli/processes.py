"""Running the real ``untrace`` in a session of its own, signalling it, and finding what
is left of it, from ``/proc`` (Linux)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from .conftest import PYTHON, _env

HAVE_PROC = os.path.isdir("/proc/self") and hasattr(os, "killpg")


def start(*argv: str, cwd, script: str | None = None) -> subprocess.Popen:
    """``untrace ARGV`` (or ``python SCRIPT ARGV``) in a new session, the way a shell runs
    a command: its workers are in that session, its pipes are ours."""
    command = [PYTHON, script, *argv] if script else [PYTHON, "-m", "analyzer.cli", *argv]
    return subprocess.Popen(
        command, cwd=cwd, env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True, preexec_fn=_take_ctrl_c,
    )


def _take_ctrl_c() -> None:
    """In the child: Ctrl-C and SIGTERM as a terminal's foreground command gets them,
    whatever the test process' own state: a command keeps a signal it was started ignoring
    (and a mask it was started with), and in one CI run the Ctrl-C tests of one pytest
    worker all saw the run go on to the end, as an ignored SIGINT does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # state, ppid, pgrp, session, ...


def _live(field: int, value: int) -> list[int]:
    """The live processes (zombies are dead) whose /proc stat ``field`` is ``value``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None and int(fields[field]) == value and fields[0] != "Z":
                found.append(int(name))
    return found


def in_session(sid: int) -> list[int]:
    """The live processes of session ``sid``."""
    return _live(3, sid)


def children(pid: int) -> list[int]:
    return _live(1, pid)


def wait_for_children(pid: int, count: int, timeout: float = 120) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = children(pid)
        if len(found) >= count:
            return found
        time.sleep(0.005)
    raise AssertionError(f"the run did not start {count} workers in {timeout:g} s")


def survivors(sid: int, grace: float = 2.0) -> list[int]:
    """What is still running of session ``sid`` after ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while (left := in_session(sid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def end_session(sid: int) -> None:
    """Kill whatever is left of a run (so that a failing test leaves nothing behind)."""
    for pid in in_session(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
