"""How untrace writes what it writes (docs/reliability.md): outputs go where a shell
redirection would put them and never over a file the run read; a fix is written whole
or not at all, keeps what the file was (attributes, ACLs), never leaves the folders the
user named, and a file with hard links is left alone."""

from __future__ import annotations

import os
import resource
import stat
import struct
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import analyzer.runner
from analyzer.cli import main

from .test_user_files import FIXABLE, REPO, _edit_after_analysis, check

# ~9 KB whose unsafe fix (torch.cond) makes it longer: the repro.
BIG = FIXABLE + "".join(f"\n\ndef helper_{i}(a, b):\n    return a * {i} + b  # {'padding ' * 8}\n"
                        for i in range(80))


def _run(tmp_path: Path, *argv: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    def limit():
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "analyzer.cli", *argv], cwd=tmp_path, env=env,
                          capture_output=True, timeout=300, preexec_fn=limit)


# ------------------------------------------------------------------ a write that fails


@pytest.mark.parametrize("linked", [False, True], ids=["single", "hard-linked"])
def test_a_fix_that_cannot_be_written_leaves_the_file_as_it_was(tmp_path, linked):
    """Under `ulimit -f` (as on a full disk) the new text cannot be written: the file, and
    every link of it, keeps the old text, and the run says so."""
    (tmp_path / "big.py").write_text(BIG)
    assert 8_000 < len(BIG) < 10_000
    if linked:
        os.link(tmp_path / "big.py", tmp_path / "big_link.py")
    result = _run(tmp_path, "check", "--no-cache", "--fix", "--unsafe-fixes", "big.py", limit_bytes=len(BIG) + 16)
    assert (tmp_path / "big.py").read_text() == BIG
    if linked:
        assert (tmp_path / "big_link.py").read_text() == BIG
        assert os.stat(tmp_path / "big.py").st_nlink == 2
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert "big.py: " in err and "not fixed" in err
    assert "[*] 1 fixable with the `--fix` option" not in result.stdout.decode()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------ outputs


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def read():
        with open(path, "rb") as handle:
            into.append(handle.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("command", ["check", "graph"])
def test_output_into_a_named_pipe_writes_into_it(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    os.mkfifo(tmp_path / "out")
    got: list[bytes] = []
    reader = _read_fifo(tmp_path / "out", got)
    argv = ["check", "-j", "1", "--no-cache", "m.py", "-o", "out"] if command == "check" else ["graph", "m.py", "-o", "out"]
    code = main(argv)
    reader.join(10)
    assert code in (0, 1), capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out").st_mode)  # still the pipe
    assert got and (b"UT101" in got[0] if command == "check" else b"forward" in got[0])


def test_output_into_a_device_keeps_the_device(tmp_path, monkeypatch, capsys):
    """`-o /dev/null` as root once replaced the system's /dev/null by a regular file. A
    device node of our own stands in for it here."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    try:
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.xfail("making a device node needs root; the named-pipe test covers special files")
    assert main(["check", "-j", "1", "--no-cache", "m.py", "-o", "null"]) == 1
    assert stat.S_ISCHR(os.lstat(tmp_path / "null").st_mode)
    assert main(["graph", "m.py", "-o", "null"]) == 0
    assert stat.S_ISCHR(os.lstat(tmp_path / "null").st_mode)


@pytest.mark.parametrize("command", ["check", "graph"])
def test_output_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "latest.txt").write_text("old report\n")
    os.chmod(tmp_path / "reports" / "latest.txt", 0o640)
    (tmp_path / "out.txt").symlink_to("reports/latest.txt")
    (tmp_path / "new.txt").symlink_to("reports/new.txt")  # dangling: the file it names is made
    argv = ["check", "-j", "1", "--no-cache", "m.py"] if command == "check" else ["graph", "m.py"]
    main([*argv, "-o", "out.txt"])
    main([*argv, "-o", "new.txt"])
    for link, target in (("out.txt", "reports/latest.txt"), ("new.txt", "reports/new.txt")):
        assert (tmp_path / link).is_symlink() and os.readlink(tmp_path / link) == target
        assert (tmp_path / target).read_text() != "old report\n" and (tmp_path / target).stat().st_size
    assert stat.S_IMODE(os.stat(tmp_path / "reports" / "latest.txt").st_mode) == 0o640


def test_an_output_to_a_socket_is_a_usage_error(tmp_path, monkeypatch, capsys):
    import socket

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    server = socket.socket(socket.AF_UNIX)
    server.bind("sock")
    try:
        assert main(["check", "-j", "1", "--no-cache", "m.py", "-o", "sock"]) == 2
        assert "-o sock: is a socket" in capsys.readouterr().err
        assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)
    finally:
        server.close()


# ------------------------------------------------------------------ outputs are not inputs


CONFIG = '[tool.untrace]\nignore = ["UT201"]\n'


@pytest.mark.parametrize("argv, output, what", [
    (("m.py",), "pyproject.toml", "a configuration file this run read"),
    (("--config", "conf/untrace.toml", "m.py"), "conf/untrace.toml", "a configuration file this run read"),
    (("--config", "conf/untrace.toml", "m.py"), "pyproject.toml", None),  # not read: may be written
    ((".",), ".gitignore", "an ignore file of the checked files"),
    ((".",), "sub/.gitignore", "an ignore file of the checked files"),
    ((".",), "sub/m2.py", "a checked file"),
    (("m.py",), ".gitignore", "an ignore file of the checked files"),  # governs m.py, read or not
    (("sub/m2.py",), "sub/.gitignore", "an ignore file of the checked files"),
])
def test_an_output_may_not_overwrite_what_the_run_read(tmp_path, monkeypatch, capsys, argv, output, what):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m2.py").write_text(FIXABLE)
    (tmp_path / "sub" / ".gitignore").write_text("generated/\n")
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "untrace.toml").write_text('ignore = ["UT201"]\n')
    before = (tmp_path / output).read_bytes()
    code = main(["check", "-j", "1", "--no-cache", *argv, "-o", output])
    err = capsys.readouterr().err
    if what is None:
        assert code == 1 and (tmp_path / output).read_bytes() != before
        return
    assert code == 2, err
    assert f"-o {output}: is {what}, which writing would destroy" in err
    assert (tmp_path / output).read_bytes() == before


def test_an_output_may_not_overwrite_a_pyproject_the_config_search_read(tmp_path, monkeypatch, capsys):
    """A pyproject.toml without our table is still read on the way up to the one that
    has it: it is an input of the run."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    project = tmp_path / "inner"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'inner'\n")
    (project / "m.py").write_text(FIXABLE)
    monkeypatch.chdir(project)
    assert main(["check", "-j", "1", "--no-cache", "m.py", "-o", "pyproject.toml"]) == 2
    assert "is a configuration file this run read" in capsys.readouterr().err
    assert (project / "pyproject.toml").read_text() == "[project]\nname = 'inner'\n"


# ------------------------------------------------------------------ --fix and links


def test_fix_does_not_follow_a_symlink_out_of_the_named_folder(tmp_path, monkeypatch, capsys):
    """As in a walk: a link inside the tree to a file outside it is checked, not fixed.
    Named itself, it is the user's choice, and the target is fixed."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "shared.py").write_text(FIXABLE)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "link.py").symlink_to("../outside/shared.py")
    (tmp_path / "tree" / "inner.py").write_text(FIXABLE)
    (tmp_path / "tree" / "inner_link.py").symlink_to("inner.py")
    monkeypatch.chdir(tmp_path)
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "tree")
    assert (tmp_path / "outside" / "shared.py").read_text() == FIXABLE
    target = os.path.realpath(tmp_path / "outside" / "shared.py")
    assert f"tree/link.py: a symlink to {target}, outside the folders named, not fixed" in err
    assert code == 1
    assert (tmp_path / "tree" / "inner.py").read_text().count("torch.cond(") == 1  # inside: fixed once
    assert (tmp_path / "tree" / "inner_link.py").is_symlink()

    code, out, err = check(capsys, "--no-cache", "--diff", "--unsafe-fixes", "tree")
    assert "shared.py" not in out and "tree/link.py: a symlink to" in err

    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "tree/link.py")
    assert "torch.cond(" in (tmp_path / "outside" / "shared.py").read_text()
    assert (tmp_path / "tree" / "link.py").is_symlink()


def test_fix_through_a_named_symlinked_folder_stays_inside_it(tmp_path, monkeypatch, capsys):
    """The folder named may itself be a link: what lies in its target is inside."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "m.py").write_text(FIXABLE)
    (tmp_path / "alias").symlink_to("real")
    monkeypatch.chdir(tmp_path)
    check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "alias")
    assert "torch.cond(" in (tmp_path / "real" / "m.py").read_text()


# ------------------------------------------------------------------ attributes


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL in the kernel's extended-attribute form (version 2)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, ident) for tag, perm, ident in entries)


_ANY = 0xFFFFFFFF
USER_OBJ, USER, GROUP_OBJ, MASK, OTHER = 0x01, 0x02, 0x04, 0x10, 0x20


def test_fix_keeps_extended_attributes_and_acls(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    os.chmod(path, 0o640)
    try:
        os.setxattr(path, "user.origin", b"reviewed")
        os.setxattr(path, "system.posix_acl_access",
                    _acl((USER_OBJ, 6, _ANY), (USER, 6, 4321), (GROUP_OBJ, 4, _ANY), (MASK, 6, _ANY), (OTHER, 0, _ANY)))
    except OSError as error:
        pytest.xfail(f"this filesystem keeps no extended attributes or ACLs: {error}")
    before = {name: os.getxattr(path, name) for name in os.listxattr(path)}
    mode = stat.S_IMODE(os.stat(path).st_mode)
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "m.py")
    assert "torch.cond(" in path.read_text(), err
    assert {name: os.getxattr(path, name) for name in os.listxattr(path)} == before
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_fix_whose_attribute_cannot_be_kept_is_not_written(tmp_path, monkeypatch, capsys):
    """An attribute the new file cannot take (here: refused by a stand-in for a
    filesystem that refuses it) stops the write; the file keeps its text and attribute."""
    import analyzer.writes

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    try:
        os.setxattr(path, "user.origin", b"reviewed")
    except OSError as error:
        pytest.xfail(f"this filesystem keeps no extended attributes: {error}")

    def refuse(target, name, value, *args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(analyzer.writes.os, "setxattr", refuse)
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "m.py")
    monkeypatch.undo()
    assert path.read_text() == FIXABLE and os.getxattr(path, "user.origin") == b"reviewed"
    assert "m.py: its extended attribute user.origin cannot be kept (Operation not permitted), not fixed" in err
    assert code == 1
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------ the report after --fix


def test_a_file_changed_since_analysis_is_reported_without_stale_carets(tmp_path, monkeypatch, capsys):
    """The findings are those of the text analysed; drawing their carets over the
    user's new text would point at the wrong code."""
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "m.py"
    target.write_text(FIXABLE)
    edited = "# the user's new first line\n" + FIXABLE
    _edit_after_analysis(monkeypatch, target, edited)
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "m.py")
    assert target.read_text() == edited
    assert "m.py: changed since analysis, not fixed" in err
    assert "|" not in out  # no source line, no caret
    assert "note: the file changed since it was analysed; its lines are not shown" in out
    assert "[*] 1 fixable, not applied by --fix (see the warnings above)." in out
    assert "with the `--fix` option" not in out
