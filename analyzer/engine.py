"""One file in, facts out: parse, build the IR, run the value-kind analysis.

`analyze_file` is what `untrace check` runs per file (in worker processes). It never
imports or executes the code it reads: everything comes from the libcst parse.
"""

from __future__ import annotations

import ast
import os
import warnings
from dataclasses import replace

from analyzer.analyses.facts import Fact, ParseErrorFact, Site
from analyzer.analyses.kinds import KindAnalyzer
from analyzer.analyses.project import Project
from analyzer.fixes.callsites import callsite_facts
from analyzer.frontend import ParseError

__all__ = ["Project", "analyze_file"]


def analyze_file(path: str, source: str | bytes, project: Project | None = None) -> tuple[list[Fact], dict[str, str]]:
    """Facts for one file, and the other files (path -> content hash) they depend on."""
    if not _may_have_facts(source) and _compiles(source, path):
        return [], {}
    if project is None:
        project = Project([path] if os.path.isfile(path) else [])
    try:
        module, changed = project.parse_source(path, source)
    except ParseError as exc:
        return [ParseErrorFact(Site(path, exc.line, exc.column, exc.line, exc.column + 1), exc.message)], {}
    # One analyzer per project (per worker process): class tables and function summaries
    # of shared code (a base model class every file imports) are computed once.
    analyzer = getattr(project, "kind_analyzer", None)
    if analyzer is None:
        analyzer = project.kind_analyzer = KindAnalyzer(project)
    if changed:
        analyzer.forget(path)  # summaries made from an older text of this file
    try:
        facts = analyzer.analyze_module(module) + callsite_facts(module)  # + UT4xx export call sites
    except RecursionError:
        return [ParseErrorFact(Site(path, 1, 1, 1, 2), "nesting too deep to analyse")], {}
    own = os.path.abspath(path)
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


def _may_have_facts(source: str | bytes) -> bool:
    """False when the file cannot produce a fact of its own: facts come from classes that
    define `forward` and from exporter calls, and both need those words in the text. Most
    files of a large tree (configurations, tokenizers, utilities) have neither; they are
    still parsed when a checked file calls into them."""
    words = (b"forward", b"export") if isinstance(source, bytes) else ("forward", "export")
    return any(word in source for word in words)


def _compiles(source: str | bytes, path: str) -> bool:
    """Whether CPython's own parser accepts the file: a file that skips the analysis still
    gets its UT000 from the full parse when it does not."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to print
            compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError...
        return False
    return True


def _display_path(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _with_path(fact: Fact, path: str) -> Fact:
    if fact.site.path == path:
        return fact
    return replace(fact, site=replace(fact.site, path=path))
