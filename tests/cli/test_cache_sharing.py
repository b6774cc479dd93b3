"""Where the cache may live, and how versions of untrace share one (issue 22, item 19;
docs/reliability.md, "The cache owns only what it made")."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import analyzer.cache
from analyzer.cache import MARK_EVERY, STALE_AFTER, VERSION_MARKER, Cache, CacheError
from analyzer.cli import main
from analyzer.config import Config
from analyzer.runner import run_check

from .test_user_files import snapshot


def check_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(["check", "-j", "1", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ where it may live


def test_a_cache_dir_under_a_regular_file_is_refused_before_any_work(fake, tree, capsys, monkeypatch):
    # it used to run without a cache, unsaid (making the folder failed, and a cache that
    # cannot be written is skipped for read-only trees)
    import analyzer.discovery

    def no_walk(*args, **kwargs):
        raise AssertionError("the files were looked for")

    monkeypatch.setattr(analyzer.discovery, "discover", no_walk)
    before = snapshot(tree)
    code, out, err = check_cli(capsys, "--cache-dir", "pkg/model.py/sub", "pkg")
    assert (code, out) == (2, "")
    assert err == ("untrace: error: cache directory pkg/model.py/sub cannot be made: pkg/model.py is not a "
                   "directory; name a new or empty folder\n")
    assert snapshot(tree) == before


def test_an_empty_cache_dir_is_a_usage_error(fake, tree, capsys):
    # Path("") is ".": it used to be reported as the working directory
    before = snapshot(tree)
    code, out, err = check_cli(capsys, "--cache-dir", "", "pkg")
    assert (code, out) == (2, "")
    assert err == "untrace: error: --cache-dir: empty name; name a folder for the cache, or pass --no-cache\n"
    assert snapshot(tree) == before


def test_the_cache_class_refuses_an_empty_name_and_a_path_under_a_file(tmp_path):
    (tmp_path / "m.py").write_text("")
    for root in ("", tmp_path / "m.py" / "sub", tmp_path / "m.py" / "a" / "b"):
        with pytest.raises(CacheError):
            Cache(root)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


# ------------------------------------------------------------------ versions sharing one cache


def run_as(version: str, root: Path, monkeypatch, **kwargs):
    """A check of every file under ``root`` by the untrace whose analyzer hash is ``version``."""
    monkeypatch.setattr(analyzer.cache, "analyzer_hash", lambda: version)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if ".untrace_cache" not in p.parts)
    return run_check(files, config=Config(root=root), jobs=1, **kwargs)


def folder(root: Path, version: str) -> Path:
    return root / ".untrace_cache" / f"{analyzer.cache.__version__}-{version}"


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


HOOK, VENV = "00000000000000aa", "00000000000000bb"


def test_two_versions_used_in_turn_keep_each_others_entries(fake, tree, monkeypatch):
    # a pre-commit hook pinned to one version, a virtual environment with another: each
    # used to delete the other's folder when it made its own, so every run was cold
    assert run_as(HOOK, tree, monkeypatch).analyzed == 2
    assert run_as(VENV, tree, monkeypatch).analyzed == 2
    for _ in range(2):
        for version in (HOOK, VENV):
            result = run_as(version, tree, monkeypatch)
            assert (result.cache_hits, result.analyzed) == (2, 0), version
            # and the answer of a run without the cache
            assert result.diagnostics == run_as(version, tree, monkeypatch, use_cache=False).diagnostics
    assert folder(tree, HOOK).is_dir() and folder(tree, VENV).is_dir()


def test_each_run_marks_its_folder_used_at_most_once_a_day(fake, tree, monkeypatch):
    run_as(HOOK, tree, monkeypatch)
    marker = folder(tree, HOOK) / VERSION_MARKER
    age(marker, MARK_EVERY / 2)
    before = marker.stat().st_mtime
    run_as(HOOK, tree, monkeypatch)
    assert marker.stat().st_mtime == before  # marked less than a day ago: no write
    age(marker, MARK_EVERY + 60)
    run_as(HOOK, tree, monkeypatch)  # a warm run, all hits: it used the folder all the same
    assert time.time() - marker.stat().st_mtime < 60


def test_a_version_not_used_for_long_is_removed_by_the_next_daily_mark(fake, tree, monkeypatch):
    run_as(HOOK, tree, monkeypatch)
    run_as(VENV, tree, monkeypatch)
    age(folder(tree, HOOK) / VERSION_MARKER, STALE_AFTER + 60)  # nobody ran the hook for long
    run_as(VENV, tree, monkeypatch)
    assert folder(tree, HOOK).is_dir()  # VENV marked its folder within the day: no sweep yet
    age(folder(tree, VENV) / VERSION_MARKER, MARK_EVERY + 60)
    run_as(VENV, tree, monkeypatch)
    assert not folder(tree, HOOK).exists() and folder(tree, VENV).is_dir()


def test_a_stale_folder_without_our_marker_is_never_removed(fake, tree, monkeypatch):
    run_as(HOOK, tree, monkeypatch)
    lookalike = folder(tree, "0123456789abcdef")
    lookalike.mkdir()
    (lookalike / "notes.txt").write_text("mine\n")
    (lookalike / VERSION_MARKER).write_text("not untrace's marker\n")
    for path in (lookalike / "notes.txt", lookalike / VERSION_MARKER, lookalike):
        age(path, STALE_AFTER * 10)
    age(folder(tree, HOOK) / VERSION_MARKER, MARK_EVERY + 60)
    run_as(HOOK, tree, monkeypatch)
    assert (lookalike / "notes.txt").read_text() == "mine\n"
