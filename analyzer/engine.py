"""One file in, facts out: parse, build the IR, run the value-kind analysis.

`analyze_file` is what `untrace check` runs per file (in worker processes). It never
imports or executes the code it reads: everything comes from the libcst parse.
"""

from __future__ import annotations

import os
from dataclasses import replace

from analyzer.analyses.facts import BranchFact, Fact, LoopFact, ParseErrorFact, ScriptabilityFact, Site
from analyzer.analyses.kinds import KindAnalyzer
from analyzer.analyses.project import ClassKey, Project
from analyzer.analyses.scriptability import first_rejection
from analyzer.analyses.values import UNKNOWN
from analyzer.fixes.callsite_fact import CallSiteFact
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
        facts = analyzer.analyze_module(module)
        facts += _scriptability_facts(facts, module, analyzer, path)
        # UT4xx export call sites, with the facts of the class each one exports
        facts += [_with_class_facts(f, module, analyzer, path) for f in callsite_facts(module)]
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


def _scriptability_facts(facts, module, analyzer: KindAnalyzer, path: str) -> list[ScriptabilityFact]:
    """Whether `torch.jit.script` would accept each class whose `forward` branches or
    loops on tensors (the UT1xx rules propose scripting only when it would)."""
    hazardous = {f.site.call_path[0].split(".")[0] for f in facts
                 if isinstance(f, (BranchFact, LoopFact)) and f.site.call_path}
    out = []
    own = os.path.abspath(path)
    for name in sorted(hazardous):
        cls = module.classes().get(name)
        if cls is None:
            continue
        found = first_rejection(analyzer, ClassKey(module.path, name))
        site = Site(path, cls.span.line, cls.span.column, cls.span.line, cls.span.column + 1)
        if found is None:
            out.append(ScriptabilityFact(site, name))
        else:
            construct, where, line = found
            shown = path if os.path.abspath(where) == own else _display_path(where)
            out.append(ScriptabilityFact(site, name, construct, f"{shown}:{line}"))
    return out


def _with_class_facts(fact: CallSiteFact, module, analyzer: KindAnalyzer, path: str) -> CallSiteFact:
    """Attach the kind facts of the class an export call site exports, resolved through
    this file's imports (`from models import Net`, `models.Net`) into the scanned tree.
    Reading that file makes it a dependency of this one's cached result."""
    if fact.class_callee is None:
        return fact
    head, *rest = fact.class_callee.split(".")
    value = analyzer.resolve(analyzer.globals_of(module).get(head, UNKNOWN))
    for attr in rest:
        if value.type != "pymodule" or not value.ref:
            return fact
        target = analyzer.module_ir(value.ref)
        value = analyzer.resolve(analyzer.globals_of(target).get(attr, UNKNOWN)) if target is not None else UNKNOWN
    if value.type != "class" or not isinstance(value.ref, ClassKey):
        return fact
    class_facts = analyzer.analyze_class(value.ref)
    if class_facts is None:
        return fact  # a base class's forward, or no forward: not resolved precisely enough
    own = os.path.abspath(path)
    display = [_with_path(f, path if os.path.abspath(f.site.path) == own else _display_path(f.site.path))
               for f in class_facts]
    return replace(fact, class_facts=tuple(display))


def _display_path(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _with_path(fact: Fact, path: str) -> Fact:
    if fact.site.path == path:
        return fact
    return replace(fact, site=replace(fact.site, path=path))
