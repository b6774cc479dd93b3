"""Which files are checked: recursion (.py, .pyi, .ipynb), .gitignore (nested, negated),
excludes, default excludes, explicitly named files, --force-exclude."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.config import Config, ConfigError
from analyzer.discovery import discover


def make(root: Path, *paths: str) -> None:
    for path in paths:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x = 1\n")


def found(root: Path, *paths: str, force_exclude: bool = False, **config) -> list[str]:
    result = discover(list(paths) or ["."], Config(root=root, **config), force_exclude=force_exclude)
    return [Path(p).as_posix() for p in result.files]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(
        tmp_path,
        "a.py",
        "notes.txt",
        "stub.pyi",
        "pkg/__init__.py",
        "pkg/b.py",
        "pkg/gen/c.py",
        "pkg/gen/keep.py",
        "pkg/data/d.py",
        ".venv/lib/site.py",
        "venv/e.py",
        "build/f.py",
        "dist/g.py",
        "node_modules/h.py",
        ".tox/i.py",
        ".git/j.py",
        "sub/__pycache__/k.py",
        "sub/ok.py",
    )
    return tmp_path


def test_recursive_with_default_excludes(project):
    assert found(project) == [
        "a.py",
        "pkg/__init__.py",
        "pkg/b.py",
        "pkg/data/d.py",
        "pkg/gen/c.py",
        "pkg/gen/keep.py",
        "stub.pyi",  # stubs are collected, as ruff does (issue 10)
        "sub/ok.py",
    ]


def test_gitignore_nested_and_negated(project):
    (project / ".gitignore").write_text("pkg/data/\n")
    (project / "pkg" / ".gitignore").write_text("gen/*\n!gen/keep.py\n")
    assert found(project) == ["a.py", "pkg/__init__.py", "pkg/b.py", "pkg/gen/keep.py", "stub.pyi", "sub/ok.py"]


def test_gitignore_of_a_parent_directory_applies_to_a_named_subdirectory(project):
    (project / ".git").mkdir(exist_ok=True)
    (project / ".gitignore").write_text("*.py\n!pkg/\n!pkg/b.py\n")
    assert found(project, "pkg") == ["pkg/b.py"]


def test_exclude_and_extend_exclude(project):
    assert found(project, extend_exclude=("pkg/gen/", "a.py")) == ["pkg/__init__.py", "pkg/b.py", "pkg/data/d.py", "stub.pyi", "sub/ok.py"]
    # `exclude` replaces the defaults
    assert "build/f.py" in found(project, exclude=("pkg/",))
    assert "pkg/b.py" not in found(project, exclude=("pkg/",))


def test_named_files_are_checked_even_if_excluded_unless_force_exclude(project):
    (project / ".gitignore").write_text("a.py\n")
    assert found(project, "a.py", "build/f.py", "notes.txt") == ["a.py", "build/f.py", "notes.txt"]
    assert found(project, "a.py", "build/f.py", "pkg/gen/c.py", force_exclude=True, extend_exclude=("pkg/gen",)) == []
    # a named excluded directory is walked unless --force-exclude
    assert found(project, "build") == ["build/f.py"]
    assert found(project, "build", force_exclude=True) == []


def test_duplicates_and_order(project):
    assert found(project, "sub", "a.py", "./a.py", "sub/ok.py") == ["a.py", "sub/ok.py"]


def test_stdin_marker(project):
    result = discover(["-", "a.py"], Config(root=project))
    assert result.stdin and result.files == ["a.py"]


def test_missing_path_is_a_usage_error(project):
    with pytest.raises(ConfigError, match="does not exist"):
        discover(["nope.py"], Config(root=project))


def test_symlinked_directory_loop_is_not_followed(project):
    os.symlink(project, project / "pkg" / "loop")
    assert found(project).count("a.py") == 1


def test_gitignore_honoured_end_to_end(fake, tree, cli):
    (tree / ".gitignore").write_text("pkg/model.py\n")
    code, out, _ = cli("check", ".", "--no-cache")
    assert code == 0 and "(1 file checked)" in out
    # named explicitly: checked anyway, as ruff does
    assert cli("check", "pkg/model.py", "--no-cache")[0] == 1
    assert cli("check", "pkg/model.py", "--no-cache", "--force-exclude")[0] == 0


def test_config_exclude_end_to_end(fake, tree, cli):
    (tree / "pyproject.toml").write_text('[tool.untrace]\nexclude = ["pkg/model.py"]\n')
    code, out, _ = cli("check", "--no-cache")
    assert code == 0 and "(1 file checked)" in out
