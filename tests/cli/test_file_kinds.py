"""Paths that are not regular files, and directories that cannot be read: never a hang,
never a traceback, never a false "clean"."""

from __future__ import annotations

import os

import pytest

from .conftest import MODEL, run_untrace

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX only")

FIFO_MESSAGE = "not a regular file (a named pipe); not read"


@needs_fifo
def test_check_of_a_named_fifo_is_ut000_and_does_not_block(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "model.py").write_text(MODEL)
    # the old code opened the pipe for reading and waited for a writer forever
    done = run_untrace("check", "--no-cache", "--output-format", "concise", "fifo.py", "model.py", cwd=tmp_path, timeout=60)
    out = done.stdout.decode()
    assert done.returncode == 1, done.stderr
    assert out.splitlines()[0] == f"fifo.py:1:1: UT000 {FIFO_MESSAGE}"
    assert "model.py:6:9: UT101" in out  # the other file was still checked


@needs_fifo
def test_text_output_of_a_fifo_finding_does_not_open_it_for_the_snippet(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    done = run_untrace("check", "--no-cache", "fifo.py", cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert done.stdout.decode() == (
        f"fifo.py:1:1: UT000 [parse-error] {FIFO_MESSAGE}\n\nFound 1 hazard in 1 file (1 file checked).\n"
    )


@needs_fifo
def test_walk_reports_a_py_fifo_and_skips_other_fifos_silently(tmp_path):
    (tmp_path / "src").mkdir()
    os.mkfifo(tmp_path / "src" / "pipe.py")
    os.mkfifo(tmp_path / "src" / "pipe.txt")
    (tmp_path / "src" / "ok.py").write_text("x = 1\n")
    done = run_untrace("check", "--no-cache", "--output-format", "concise", "src", cwd=tmp_path, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stdout.decode().splitlines() == [
        f"src/pipe.py:1:1: UT000 {FIFO_MESSAGE}",
        "Found 1 hazard in 1 file (2 files checked).",
    ]
    assert done.stderr == b""


@needs_fifo
def test_graph_of_a_fifo_is_a_usage_error(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    done = run_untrace("graph", "fifo.py", cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode() == "untrace: error: fifo.py: not a regular file (a named pipe); not read\n"


def test_walk_reports_a_broken_py_symlink_instead_of_skipping_it(tmp_path):
    (tmp_path / "src").mkdir()
    os.symlink(tmp_path / "gone.py", tmp_path / "src" / "link.py")
    (tmp_path / "src" / "ok.py").write_text("x = 1\n")
    done = run_untrace("check", "--no-cache", "--output-format", "concise", "src", cwd=tmp_path, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stdout.decode().splitlines() == [
        "src/link.py:1:1: UT000 cannot read file: No such file or directory",
        "Found 1 hazard in 1 file (2 files checked).",
    ]
