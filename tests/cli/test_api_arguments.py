"""The Python API's arguments: ``check_paths`` takes one path or an iterable of them, and
an empty one checks nothing; ``check_source`` takes text and a name (issue 22, item 9)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer import check_paths, check_source
from analyzer.config import ConfigError


def found(diagnostics) -> list[tuple[str, int, str]]:
    return [(d.path, d.line, d.code) for d in diagnostics]


@pytest.mark.parametrize("one", ["pkg/model.py", Path("pkg/model.py"), b"pkg/model.py"], ids=["str", "Path", "bytes"])
def test_check_paths_takes_one_path(fake, tree, one):
    # a string used to be iterated: "path does not exist: p"
    expected = found(check_paths(["pkg/model.py"], use_cache=False, jobs=1))
    assert expected == [("pkg/model.py", 6, "UT101"), ("pkg/model.py", 10, "UT201")]
    assert found(check_paths(one, use_cache=False, jobs=1)) == expected


def test_check_paths_takes_any_iterable_of_paths(fake, tree):
    paths = (p for p in [Path("pkg/model.py"), "pkg/clean.py"])
    assert found(check_paths(paths, use_cache=False, jobs=1)) == [("pkg/model.py", 6, "UT101"), ("pkg/model.py", 10, "UT201")]


@pytest.mark.parametrize("nothing", [[], (), iter([])], ids=["list", "tuple", "iterator"])
def test_check_paths_of_no_paths_checks_no_file(fake, tree, nothing):
    # it used to check the whole working directory, as the command line does with no PATH
    assert check_paths(nothing, use_cache=False, jobs=1) == []
    assert not (tree / ".untrace_cache").exists()


def test_check_paths_of_no_paths_still_checks_the_selection(fake, tree):
    with pytest.raises(ConfigError, match="unknown rule code"):
        check_paths([], select=["UT999"])


@pytest.mark.parametrize(
    "paths, error, message",
    [
        (["-"], ConfigError, "`-` (standard input) is for the command line; pass the text to check_source instead"),
        ([""], ConfigError, "check_paths: paths: an empty path names no file"),
        ("", ConfigError, "check_paths: paths: an empty path names no file"),
        ([1], TypeError, "check_paths: paths: expected a path (str, bytes or os.PathLike), not int"),
        (None, TypeError, "'NoneType' object is not iterable"),
    ],
)
def test_check_paths_refuses_what_is_no_path(fake, tree, paths, error, message):
    with pytest.raises(error) as caught:
        check_paths(paths, use_cache=False, jobs=1)
    assert message in str(caught.value)


def test_check_source_takes_text_or_bytes_and_any_path_type(fake, tree):
    source = (tree / "pkg" / "model.py").read_text()
    expected = [("pkg/model.py", 6, "UT101"), ("pkg/model.py", 10, "UT201")]
    assert found(check_source(source, "pkg/model.py")) == expected
    assert found(check_source(source.encode(), "pkg/model.py")) == expected
    for name in (Path("pkg/model.py"), b"pkg/model.py"):  # bytes used to be a TypeError from inside
        diagnostics = check_source(source, name)
        assert found(diagnostics) == expected and all(type(d.path) is str for d in diagnostics)


@pytest.mark.parametrize("source", [Path("pkg/model.py"), None, ["x = 1\n"]], ids=["Path", "None", "list"])
def test_check_source_refuses_what_is_not_text(fake, tree, source):
    # a path given for the text used to be "analysed" into a UT000 internal error
    with pytest.raises(TypeError, match=r"^check_source takes the source text \(str or bytes\), not "):
        check_source(source)
    if isinstance(source, os.PathLike):
        with pytest.raises(TypeError, match="to check files, call check_paths"):
            check_source(source)
