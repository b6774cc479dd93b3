"""Which findings are reported (`Filter`: enabled codes, per-file-ignores) and how
(`reported`): each path spelled one way (`report_path`), those in its message too, one
finding per site with every call path that reaches it, sorted on every field."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from analyzer.config import Config, Selection, check_selection, enabled_codes, known_codes
from analyzer.diagnostics import NOT_PATHS, PATH_MARK, Diagnostic
from analyzer.file_diagnostics import INTERNAL_ERROR


class Filter:
    """Which diagnostics are reported: enabled codes and per-file-ignores."""

    def __init__(self, config: Config, cli: Selection | None = None):
        check_selection(config, cli)
        layers = [config.selection] + ([cli] if cli else [])
        self.codes = enabled_codes(layers, known_codes())
        self.root = config.root.absolute()
        self.per_file = []
        per_file = config.all_per_file_ignores
        if per_file:
            import pathspec

            for glob, codes in per_file.items():
                self.per_file.append((pathspec.GitIgnoreSpec.from_lines([glob]), codes))
        self._ignored_for: dict[str, tuple[str, ...]] = {}

    def _per_file_codes(self, path: str) -> tuple[str, ...]:
        if path not in self._ignored_for:
            codes: tuple[str, ...] = ()
            if self.per_file:
                absolute = Path(os.path.abspath(path))
                try:
                    rel = absolute.relative_to(self.root).as_posix()
                except ValueError:
                    rel = absolute.name
                for spec, ignored in self.per_file:
                    if spec.match_file(rel):
                        codes += ignored
            self._ignored_for[path] = codes
        return self._ignored_for[path]

    def keep(self, diag: Diagnostic) -> bool:
        if diag.name == INTERNAL_ERROR:
            return True  # never hidden: the file was not really checked
        if diag.code not in self.codes:
            return False
        ignored = self._per_file_codes(diag.path)
        return not any(p == "ALL" or diag.code.startswith(p) for p in ignored)


def report_path(path: str) -> str:
    """The one spelling of a path in findings, as ruff prints them: relative to the
    working directory when the file is under it, else absolute. ``-`` (stdin) and
    other non-paths stay as they are."""
    if path in NOT_PATHS:
        return path
    try:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive (Windows)
        return os.path.abspath(path)
    except OSError:  # no working directory any more (the command refuses to start then)
        return path
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return absolute
    return relative


_PATH_REF = re.compile(f"{PATH_MARK}([^{PATH_MARK}\n]+){PATH_MARK}")


def spell_paths(text: str | None) -> str | None:
    """``text`` with the paths of `analyzer.diagnostics.path_ref` spelled by `report_path`
    (a marked text that is not an absolute path, which no analysis writes, is left as it is)."""
    if text is None or PATH_MARK not in text:
        return text
    return _PATH_REF.sub(lambda m: report_path(m[1]) if os.path.isabs(m[1]) else m[0], text)


def reported(found: Iterable[Diagnostic], keep: "Filter") -> list[Diagnostic]:
    """What is reported, in its order: the kept diagnostics, each path spelled one way
    (`report_path`), one finding per (path, cell, line, column, code) listing every call path
    that reaches it (a UT000 also per message: two different failures stay two), sorted
    on every field so that the report is the same bytes whatever the hash seed."""
    spelled: dict[str, str] = {}
    sites: dict[tuple, list[Diagnostic]] = {}
    for diag in found:
        if not keep.keep(diag):
            continue
        path = spelled.get(diag.path)
        if path is None:
            path = spelled[diag.path] = report_path(diag.path)
        if path != diag.path:
            diag = replace(diag, path=path)
        if PATH_MARK in diag.message or PATH_MARK in (diag.suggestion or ""):
            diag = replace(diag, message=spell_paths(diag.message), suggestion=spell_paths(diag.suggestion))
        key = (diag.path, diag.cell or 0, diag.line, diag.column, diag.code)
        if diag.code == "UT000":
            key += (diag.name, diag.message)
        sites.setdefault(key, []).append(diag)
    merged = []
    for group in sites.values():
        if len(group) == 1 and not group[0].call_paths:
            merged.append(group[0])
            continue
        group.sort(key=lambda d: (_path_order(d.call_path), _sort_key(d)))
        paths = sorted({p for d in group for p in d.all_call_paths}, key=_path_order)
        merged.append(replace(group[0], call_paths=tuple(paths)))
    return sorted(merged, key=_sort_key)


def _path_order(call_path: tuple[str, ...]) -> tuple:
    return (len(call_path), call_path)


def _sort_key(diag: Diagnostic) -> tuple:
    fix = diag.fix
    return (
        diag.path, diag.cell or 0, diag.line, diag.column, diag.code, diag.end_line, diag.end_column, diag.message,
        diag.name, diag.severity, diag.function or "", _path_order(diag.call_path),
        tuple(_path_order(p) for p in diag.all_call_paths), diag.suggestion or "",
        (True, fix.message, fix.applicability, tuple((e.line, e.column, e.end_line, e.end_column, e.content) for e in fix.edits))
        if fix is not None else (False,),
    )
