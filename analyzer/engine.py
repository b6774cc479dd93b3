"""One file in, facts out: parse, build the IR, run the value-kind analysis.

`analyze_file` is what `untrace check` runs per file (in worker processes). It never
imports or executes the code it reads: everything comes from the libcst parse.
"""

from __future__ import annotations

import os
from dataclasses import replace

from analyzer.analyses.facts import Fact, ParseErrorFact, Site
from analyzer.analyses.kinds import KindAnalyzer
from analyzer.analyses.project import Project
from analyzer.fixes.branches import attach_fixes
from analyzer.fixes.callsites import callsite_facts
from analyzer.frontend import ParseError, parse_module

__all__ = ["Project", "analyze_file"]


def analyze_file(path: str, source: str | bytes, project: Project | None = None) -> tuple[list[Fact], dict[str, str]]:
    """Facts for one file, and the other files (path -> content hash) they depend on."""
    try:
        module = parse_module(source, path)
    except ParseError as exc:
        return [ParseErrorFact(Site(path, exc.line, exc.column, exc.line, exc.column + 1), exc.message)], {}
    if project is None:
        project = Project([path] if os.path.isfile(path) else [])
    project.add_source(path, source, module)
    # One analyzer per project (per worker process): class tables and function summaries
    # of shared code (a base model class every file imports) are computed once.
    analyzer = getattr(project, "kind_analyzer", None)
    if analyzer is None:
        analyzer = project.kind_analyzer = KindAnalyzer(project)
    analyzer.forget(path)
    try:
        facts = analyzer.analyze_module(module) + callsite_facts(module)  # + UT4xx export call sites
    except RecursionError:
        return [ParseErrorFact(Site(path, 1, 1, 1, 2), "nesting too deep to analyse")], {}
    own = os.path.abspath(path)
    facts = attach_fixes(facts, lambda where: _source_of(where, path, source, module, project))
    deps = {}
    # Every file the analyzer has read so far in this process: a superset of what this
    # file's results depend on, so a cached result is never stale.
    for other in analyzer.touched_files:
        if other != own and other != path:
            digest = project.content_hash(other)
            if digest is not None:
                deps[other] = digest
    # Paths of facts as the user named the file, not the absolute form used internally.
    facts = [_with_path(f, path if os.path.abspath(f.site.path) == own else _display_path(f.site.path)) for f in facts]
    return facts, deps


def _source_of(where: str, path: str, source: str | bytes, module, project: Project):
    """(text, IR) of the file a fact is in: the one being checked, or another project file."""
    if where == path or os.path.abspath(where) == os.path.abspath(path):
        from analyzer.runner import decode_source

        return decode_source(source), module
    other = project.module(where)
    if other is None:
        return None
    try:
        with open(where, "rb") as handle:
            from analyzer.runner import decode_source

            return decode_source(handle.read()), other
    except OSError:
        return None


def _display_path(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _with_path(fact: Fact, path: str) -> Fact:
    if fact.site.path == path:
        return fact
    return replace(fact, site=replace(fact.site, path=path))
