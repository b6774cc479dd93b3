"""Small programs in the style of the corpora, checked with `check_source`: every line that
must be reported ends in `# expect: UTxxx`, the lines that must not be reported sit in the
same program, and the exact multiset of (line, code) is asserted (each reported once)."""

from __future__ import annotations

import re
import textwrap
from collections import Counter

from analyzer import check_source

EXPECT = re.compile(r"#\s*expect:\s*(UT\d{3}(?:\s*,\s*UT\d{3})*)")


def expected(source: str) -> set[tuple[int, str]]:
    out = set()
    for lineno, line in enumerate(source.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, c.strip()) for c in m.group(1).split(",")}
    return out


class MarkedCases:
    """Named programs, each with the `check_source` options it is checked with."""

    def __init__(self):
        self.cases: dict[str, tuple[str, dict]] = {}

    def add(self, name: str, source: str, **options) -> None:
        self.cases[name] = (textwrap.dedent(source).lstrip("\n"), options)

    def names(self) -> list[str]:
        return sorted(self.cases)

    def check(self, name: str) -> None:
        source, options = self.cases[name]
        got = Counter((d.line, d.code) for d in check_source(source, path=f"{name}.py", **options))
        want = Counter(expected(source))
        assert sorted((got - want).elements()) == [], "reported but not marked (or reported twice)"
        assert sorted((want - got).elements()) == [], "marked but not reported"


def package_findings(tmp_path, monkeypatch, files: dict[str, str]) -> list[tuple[str, int, str]]:
    """(file name, line, code) of every finding of `check_paths` over a package `pkg`
    holding ``files`` (name -> source) beside an empty `__init__.py`, sorted."""
    from analyzer import check_paths

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return sorted((d.path.rsplit("/", 1)[-1], d.line, d.code) for d in check_paths([str(pkg)]))
