"""Paths that are not regular files, and directories that cannot be read: never a hang,
never a traceback, never a false "clean"."""

from __future__ import annotations

import builtins
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
        f"fifo.py:1:1: UT000 [parse-error] {FIFO_MESSAGE}\n\nNo hazards found (1 file checked); 1 file could not be parsed.\n"
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
        "No hazards found (2 files checked); 1 file could not be parsed.",
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
        "No hazards found (2 files checked); 1 file could not be parsed.",
    ]


# -- directories that cannot be read --------------------------------------------------


@pytest.fixture
def lock(monkeypatch):
    """``lock(directory)`` makes ``directory`` behave as with mode 000 for a user that is
    not root (the tests run as root, which reads every directory): listing it, and
    ``stat`` or ``open`` of anything in it, fail with EACCES. In this process only."""
    locked: list[str] = []
    real_scandir, real_stat, real_open = os.scandir, os.stat, builtins.open

    def denied(path) -> OSError:
        return PermissionError(13, "Permission denied", os.fspath(path))

    def inside(path) -> bool:
        absolute = os.path.abspath(os.fspath(path))
        return any(absolute.startswith(d + os.sep) for d in locked)

    def scandir(path="."):
        if os.path.abspath(os.fspath(path)) in locked or inside(path):
            raise denied(path)
        return real_scandir(path)

    def stat(path, *args, **kwargs):
        if not isinstance(path, int) and inside(path):
            raise denied(path)
        return real_stat(path, *args, **kwargs)

    def opener(path, *args, **kwargs):
        if not isinstance(path, int) and inside(path):
            raise denied(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(builtins, "open", opener)
    return lambda directory: locked.append(os.path.abspath(directory))


def _locked_tree(root):
    (root / "src" / "locked").mkdir(parents=True)
    (root / "src" / "ok.py").write_text("x = 1\n")
    (root / "src" / "locked" / "model.py").write_text(MODEL)


def test_walk_into_an_unreadable_directory_warns_and_exits_2(tmp_path, monkeypatch, cli, lock):
    monkeypatch.chdir(tmp_path)
    _locked_tree(tmp_path)
    lock("src/locked")
    code, out, err = cli("check", "--no-cache", "-j1", "src")
    assert err == "untrace: warning: cannot read directory src/locked: Permission denied\n"
    assert out == "No hazards found in what could be read (1 file checked); 1 directory could not be read.\n"
    assert code == 2


def test_walk_into_an_unreadable_directory_with_findings_elsewhere(tmp_path, monkeypatch, cli, lock):
    monkeypatch.chdir(tmp_path)
    _locked_tree(tmp_path)
    (tmp_path / "src" / "model.py").write_text(MODEL)
    lock("src/locked")
    code, out, err = cli("check", "--no-cache", "-j1", "--output-format", "concise", "--exit-zero", "src")
    assert err == "untrace: warning: cannot read directory src/locked: Permission denied\n"
    assert out.splitlines()[2] == "Found 2 hazards in 1 file (2 files checked); 1 directory could not be read."
    assert code == 2  # --exit-zero forgives findings, not a tree that was not all checked


def test_unreadable_directory_named_directly_is_a_usage_error(tmp_path, monkeypatch, cli, lock):
    monkeypatch.chdir(tmp_path)
    _locked_tree(tmp_path)
    lock("src/locked")
    code, out, err = cli("check", "--no-cache", "src/locked")
    assert (code, out) == (2, "")
    assert err == "untrace: error: cannot read directory src/locked: Permission denied\n"


def test_file_in_an_unsearchable_directory_named_directly_is_ut000(tmp_path, monkeypatch, cli, lock):
    monkeypatch.chdir(tmp_path)
    _locked_tree(tmp_path)
    lock("src/locked")
    code, out, err = cli("check", "--no-cache", "--output-format", "concise", "src/locked/model.py")
    assert (code, err) == (1, "")
    assert out == (
        "src/locked/model.py:1:1: UT000 cannot read file: Permission denied\n"
        "No hazards found (1 file checked); 1 file could not be parsed.\n"
    )


@pytest.mark.xfail(os.geteuid() == 0, reason="root reads a directory whatever its mode", strict=True)
def test_unreadable_directory_for_real(tmp_path):
    _locked_tree(tmp_path)
    locked = tmp_path / "src" / "locked"
    locked.chmod(0)
    try:
        walked = run_untrace("check", "--no-cache", "src", cwd=tmp_path)
        named = run_untrace("check", "--no-cache", "src/locked", cwd=tmp_path)
    finally:
        locked.chmod(0o755)
    assert walked.returncode == 2
    assert walked.stderr.decode() == "untrace: warning: cannot read directory src/locked: Permission denied\n"
    assert named.returncode == 2
    assert named.stderr.decode() == "untrace: error: cannot read directory src/locked: Permission denied\n"


def test_walk_does_not_report_a_directory_symlink_with_a_source_suffix(tmp_path):
    (tmp_path / "src" / "real").mkdir(parents=True)
    (tmp_path / "src" / "real" / "ok.py").write_text("x = 1\n")
    os.symlink(tmp_path / "src" / "real", tmp_path / "src" / "linked.py")
    done = run_untrace("check", "--no-cache", "--output-format", "concise", "src", cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout.decode()) == (0, "No hazards found (1 file checked).\n")


# -- configuration and .gitignore files that cannot be read ------------------------------


@needs_fifo
def test_config_that_is_a_fifo_is_a_usage_error_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "untrace.toml")
    (tmp_path / "m.py").write_text("x = 1\n")
    done = run_untrace("check", "--no-cache", "--config", "untrace.toml", "m.py", cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode() == "untrace: error: untrace.toml: cannot read configuration: not a regular file (a named pipe)\n"


@needs_fifo
def test_a_gitignore_that_is_a_fifo_does_not_hang_the_walk(tmp_path):
    (tmp_path / "src").mkdir()
    os.mkfifo(tmp_path / "src" / ".gitignore")
    (tmp_path / "src" / "ok.py").write_text("x = 1\n")
    done = run_untrace("check", "--no-cache", "src", cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout.decode()) == (0, "No hazards found (1 file checked).\n")


def test_an_unreadable_pyproject_is_a_usage_error_not_silently_skipped(tmp_path, monkeypatch, cli):
    import pathlib

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.untrace]\nselect = ["ALL"]\n')
    (tmp_path / "m.py").write_text(MODEL)
    real = pathlib.Path.read_bytes

    def read_bytes(self, *args, **kwargs):  # as a chmod 000 would, for root too
        if self.name == "pyproject.toml":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    code, out, err = cli("check", "--no-cache", "m.py")
    assert (code, out) == (2, "")
    assert err == f"untrace: error: {tmp_path / 'pyproject.toml'}: cannot read configuration: Permission denied\n"


def test_sarif_of_a_walk_with_an_unreadable_directory_is_not_successful(tmp_path, monkeypatch, cli, lock):
    import json

    monkeypatch.chdir(tmp_path)
    _locked_tree(tmp_path)
    lock("src/locked")
    code, out, _ = cli("check", "--no-cache", "-j1", "--output-format", "sarif", "src")
    assert code == 2
    import jsonschema

    from .test_formats import _schema_path

    jsonschema.validate(json.loads(out), json.loads(_schema_path().read_text()))
    (invocation,) = json.loads(out)["runs"][0]["invocations"]
    assert invocation == {
        "executionSuccessful": False,
        "toolExecutionNotifications": [
            {"level": "error", "message": {"text": "1 directory could not be read; the files in them were not checked"}}
        ],
    }


def test_check_paths_warns_about_an_unreadable_directory(tmp_path, monkeypatch, lock):
    from analyzer import check_paths

    monkeypatch.chdir(tmp_path)
    _locked_tree(tmp_path)
    lock("src/locked")
    with pytest.warns(UserWarning, match=r"^cannot read directory src/locked: Permission denied; its files were not checked$"):
        assert check_paths(["src"], jobs=1, use_cache=False) == []


@pytest.mark.parametrize("name, data, position", [
    ("first_line.py", b"# caf\xe9\n", "1:6"),
    ("trailing_comment.py", b"x = 1  # caf\xe9\n", "1:13"),
    ("comment_in_a_helper.py", b"import torch\n\n\ndef helper(x):\n    # caf\xe9\n    return x\n", "5:10"),
    ("in_a_string.py", b"x = 'caf\xe9'\n", "1:9"),
])
def test_a_file_cpython_cannot_decode_is_never_called_clean(tmp_path, name, data, position):
    """CPython decodes the whole file, comments included: a byte that is not UTF-8 (and no
    declaration says otherwise) makes running it a SyntaxError. ``compile`` of bytes lets
    it through in a comment, and a file with no model code was once reported clean."""
    (tmp_path / name).write_bytes(data)
    done = run_untrace("check", "--no-cache", "--output-format", "concise", name, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.decode().splitlines()[0] == (
        f"{name}:{position}: UT000 cannot analyse this file: cannot decode the file as utf-8: "
        "invalid continuation byte (0xe9)")


def test_a_declared_encoding_is_honoured(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\nx = 'caf\xe9'\n")
    done = run_untrace("check", "--no-cache", "--output-format", "concise", "latin.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
