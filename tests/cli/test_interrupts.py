"""Stopping a run: Ctrl-C, SIGTERM and SIGKILL of ``untrace check`` (the real command, in a
session of its own). Its workers end with it and release the caller's pipes, a Ctrl-C
stops it whatever it was doing (exit 130, nothing printed), and no fix is written after
it (issue 22, items 11 and 14; docs/reliability.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap

import pytest

from .conftest import MODEL, PYTHON, _env
from .processes import HAVE_PROC, end_session, start, survivors, wait_for_children

pytestmark = pytest.mark.skipif(not HAVE_PROC, reason="processes are found in /proc (Linux)")


def _tree(root, count: int = 30) -> dict[str, bytes]:
    for i in range(count):
        (root / f"m{i:02d}.py").write_text(MODEL)
    return _texts(root)


def _texts(root) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.suffix == ".py"}


def _wrapper(tmp_path, prelude: str) -> str:
    """A script that runs ``prelude`` in the process, then the `untrace` executable."""
    script = tmp_path.parent / f"{tmp_path.name}_untrace.py"
    script.write_text(
        textwrap.dedent(prelude)
        + "\nimport sys\nsys.argv = ['untrace', *sys.argv[1:]]\nfrom analyzer.cli import console\nconsole()\n"
    )
    return str(script)


@pytest.mark.parametrize(
    "signum, to_group, exit_code",
    [
        (signal.SIGKILL, False, -signal.SIGKILL),
        (signal.SIGTERM, False, -signal.SIGTERM),
        (signal.SIGINT, False, 130),
        (signal.SIGINT, True, 130),  # Ctrl-C in a terminal: the whole process group
    ],
    ids=["SIGKILL", "SIGTERM", "SIGINT", "SIGINT-group"],
)
def test_the_workers_end_with_their_parent(tmp_path, signum, to_group, exit_code):
    """Killed while its workers analyse, the run leaves no process behind, and the
    caller's ``communicate()`` returns: on the code before this fix, SIGKILL and SIGTERM
    left both workers running, holding the pipes, for ever."""
    before = _tree(tmp_path)
    run = start("check", "--fix", "--unsafe-fixes", "--no-cache", "--jobs", "2", ".", cwd=tmp_path)
    try:
        wait_for_children(run.pid, 2)
        (os.killpg if to_group else os.kill)(run.pid, signum)
        try:
            out, err = run.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("the caller's pipes are still held 30 s after the run was killed")
        assert survivors(run.pid) == []
        assert run.returncode == exit_code
        if signum != signal.SIGKILL:
            assert (out, err) == (b"", b"")  # nothing more printed, no traceback
            assert _texts(tmp_path) == before  # stopped during the analysis: no fix
    finally:
        end_session(run.pid)


def test_a_worker_whose_parent_is_gone_leaves_at_once():
    """A worker whose parent died before the worker could ask to be ended with it (the
    parent pid it was given is not its parent's any more) ends at once."""
    from analyzer.workers import _end_with_the_parent  # noqa: F401 - run below, in a process of its own

    code = textwrap.dedent("""\
        import os, threading
        from analyzer.workers import _end_with_the_parent
        try:
            _end_with_the_parent((os.getpid(), threading.get_ident()))  # a parent that is not ours
        except BaseException:
            os._exit(2)
        os._exit(0)
    """)
    assert subprocess.run([PYTHON, "-c", code], env=_env(), timeout=60).returncode == 1


def test_ctrl_c_while_the_workers_are_forked_stops_the_run(tmp_path):
    """A Ctrl-C that comes while the kernel copies the process for a worker is handled in
    the first function Python runs after the fork: a fork callback (logging registers
    one), whose exceptions Python prints and ignores. The run went on, fixed every file
    and exited as if nothing happened (issue 22, item 14: 1 in 7 Ctrl-Cs). Here the
    signal is raised from such a callback, after the first fork."""
    before = _tree(tmp_path)
    script = _wrapper(tmp_path, """\
        import os, signal
        sent = []
        def ctrl_c_during_the_fork():
            if not sent:
                sent.append(True)
                signal.raise_signal(signal.SIGINT)
        os.register_at_fork(after_in_parent=ctrl_c_during_the_fork)
    """)
    run = start("check", "--fix", "--unsafe-fixes", "--no-cache", "--jobs", "2", ".", cwd=tmp_path, script=script)
    try:
        out, err = run.communicate(timeout=120)
        assert (run.returncode, err.decode(), out.decode()) == (130, "", "")
        assert _texts(tmp_path) == before
        assert survivors(run.pid) == []
    finally:
        end_session(run.pid)


def test_a_lost_ctrl_c_still_stops_the_fixes(tmp_path):
    """Wherever Python loses the KeyboardInterrupt of a Ctrl-C (a callback whose
    exceptions it ignores), the run still stops before the next fix: the first file's fix
    was being written when it came, and is the only one written."""
    before = _tree(tmp_path)
    script = _wrapper(tmp_path, """\
        import signal
        import analyzer.fixes.files as files
        written = []
        real_rewrite = files.rewrite
        def rewrite(*args, **kwargs):
            status = real_rewrite(*args, **kwargs)
            written.append(args[0])
            if len(written) == 1:
                try:
                    signal.raise_signal(signal.SIGINT)
                except KeyboardInterrupt:
                    pass  # lost, as in a callback Python ignores the exceptions of
            return status
        files.rewrite = rewrite
    """)
    run = start("check", "--fix", "--unsafe-fixes", "--no-cache", "--jobs", "2", ".", cwd=tmp_path, script=script)
    try:
        out, err = run.communicate(timeout=120)
        assert (run.returncode, err.decode(), out.decode()) == (130, "", "")
        after = _texts(tmp_path)
        assert [name for name in before if after[name] != before[name]] == ["m00.py"]
        assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    finally:
        end_session(run.pid)


def test_sigterm_during_a_fix_completes_it_and_writes_no_other(tmp_path):
    """SIGTERM (a CI job cancelled, ``timeout``) while a fix is being written: that file
    is written whole, no temporary file is left, no other fix is written, and the
    process ends by the signal."""
    before = _tree(tmp_path)
    script = _wrapper(tmp_path, """\
        import os, signal
        real_fsync = os.fsync
        def fsync(fd):
            signal.raise_signal(signal.SIGTERM)  # between the temporary file and the replace
            return real_fsync(fd)
        os.fsync = fsync
    """)
    run = start("check", "--fix", "--unsafe-fixes", "--no-cache", "--jobs", "2", ".", cwd=tmp_path, script=script)
    try:
        out, err = run.communicate(timeout=120)
        assert (run.returncode, err.decode(), out.decode()) == (-signal.SIGTERM, "", "")
        after = _texts(tmp_path)
        changed = [name for name in before if after[name] != before[name]]
        assert changed == ["m00.py"] and b"torch.cond" in after["m00.py"]
        assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    finally:
        end_session(run.pid)
