"""One file in, facts out: parse, build the IR, run the value-kind analysis.

`analyze_file` is what `untrace check` runs per file (in worker processes). It never
imports or executes the code it reads: everything comes from the libcst parse.
"""

from __future__ import annotations

import os
import io
import re
import tokenize
from dataclasses import replace

from analyzer.analyses.kinds.facts import BranchFact, Fact, LoopFact, ParseErrorFact, ScriptabilityFact, Site
from analyzer.analyses.kinds.analysis import KindAnalyzer
from analyzer.analyses.project.index import ClassKey, Project
from analyzer.analyses.reach.scriptability import first_rejection
from analyzer.analyses.reach.training_mode import own_mode_matters
from analyzer.analyses.kinds.values import UNKNOWN
from analyzer.diagnostics import path_ref
from analyzer.fixes.callsite_fact import CallSiteFact
from analyzer.fixes.branches import attach_fixes
from analyzer.fixes.callsites import callsite_facts
from analyzer.frontend import ParseError, ir
from analyzer.frontend.positions import cpython_ast
from analyzer.module_index import is_lookup

__all__ = ["Project", "analyze_file"]


def analyze_file(path: str, source: str | bytes, project: Project | None = None) -> tuple[list[Fact], dict[str, str]]:
    """Facts for one file, and the other files (path -> content hash) they depend on."""
    if not _may_have_facts(source) and _compiles(source, path):
        return [], {}
    if project is None:
        project = Project([path] if os.path.isfile(path) else [])
    try:
        module, stale = project.parse_source(path, source)
    except ParseError as exc:
        return [ParseErrorFact(Site(path, exc.line, exc.column, exc.line, exc.column + 1), exc.message)], {}
    # One analyzer per project (per worker process): class tables and function summaries
    # of shared code (a base model class every file imports) are computed once.
    analyzer = getattr(project, "kind_analyzer", None)
    if analyzer is None:
        analyzer = project.kind_analyzer = KindAnalyzer(project)
    if stale:
        analyzer.forget(path)  # summaries made from an older text of this file
    analyzer.begin_file()
    try:
        facts = analyzer.analyze_module(module)
        facts += _scriptability_facts(facts, module, analyzer, path)
        # UT4xx export call sites, with the facts of the class each one exports
        facts += [_with_class_facts(f, module, analyzer, path) for f in callsite_facts(module)]
    except RecursionError:
        return [ParseErrorFact(Site(path, 1, 1, 1, 2), "nesting too deep to analyse")], {}
    own = os.path.abspath(path)
    facts = attach_fixes(facts, lambda where: _source_of(where, path, module, project))
    deps = {}
    # The files this file's results were computed from (the cached summaries it reused
    # included), so that a cached result is never stale.
    for other in sorted(analyzer.files_read()):
        if is_lookup(other):
            deps[other] = project.index.answer(other)
        elif other != own:
            digest = project.content_hash(other)
            if digest is not None:
                deps[other] = digest
    # Paths of facts as the user named the file, not the absolute form used internally.
    facts = [_with_path(f, path if os.path.abspath(f.site.path) == own else _display_path(f.site.path)) for f in facts]
    return facts, deps


_FORWARD_DEF = re.compile(r"\bdef\s+forward\b")
_FORWARD_DEF_BYTES = re.compile(rb"\bdef\s+forward\b")


def _may_have_facts(source: str | bytes) -> bool:
    """False when the file cannot produce a fact of its own: facts come from classes that
    define `forward` (a `def forward` in the text) and from exporter calls (the word
    `export`). Most files of a large tree (configurations, tokenizers, utilities) have
    neither, or name `forward` only in prose; they are still parsed when a checked file
    calls into them."""
    if isinstance(source, bytes):
        return b"export" in source or _FORWARD_DEF_BYTES.search(source) is not None
    return "export" in source or _FORWARD_DEF.search(source) is not None


def _compiles(source: str | bytes, path: str) -> bool:
    """Whether CPython accepts the file: a file that skips the analysis still gets its
    UT000 from the full parse when it does not. ``compile`` of bytes decodes only the
    tokens it keeps, so a comment in another encoding than the file's passes it, while
    running or importing the file is a SyntaxError: the whole text must decode too."""
    if isinstance(source, bytes) and not _decodes(source):
        return False
    return cpython_ast(source, path) is not None


def _decodes(source: bytes) -> bool:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return False
    return True


def _scriptability_facts(facts, module, analyzer: KindAnalyzer, path: str) -> list[ScriptabilityFact]:
    """Whether `torch.jit.script` would accept each class whose `forward` branches or
    loops on tensors (the UT1xx rules propose scripting only when it would)."""
    hazardous = {f.site.call_path[0].split(".")[0] for f in facts
                 if isinstance(f, (BranchFact, LoopFact)) and f.site.call_path}
    out = []
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
            out.append(ScriptabilityFact(site, name, construct, f"{path_ref(where)}:{line}"))
    return out


def _with_class_facts(fact: CallSiteFact, module, analyzer: KindAnalyzer, path: str) -> CallSiteFact:
    """Attach the kind facts of the class an export call site exports, resolved through
    this file's imports (`from models import Net`, `models.Net`) into the scanned tree.
    Reading that file makes it a dependency of this one's cached result."""
    if fact.class_callee is None:
        return fact
    head, *rest = fact.class_callee.split(".")
    value = analyzer.resolve(analyzer.global_value(module, head) or UNKNOWN)
    for attr in rest:
        if value.type != "pymodule" or not value.ref:
            return fact
        target = analyzer.module_ir(value.ref)
        value = analyzer.resolve(analyzer.global_value(target, attr) or UNKNOWN) if target is not None else UNKNOWN
    if value.type != "class" or not isinstance(value.ref, ClassKey):
        return fact
    if fact.own_flag:
        fact = replace(fact, own_mode_matters=own_mode_matters(analyzer, value.ref))
    class_facts = analyzer.analyze_class(value.ref)
    if class_facts is None:
        return fact  # a base class's forward, or no forward: not resolved precisely enough
    own = os.path.abspath(path)
    display = [_with_path(f, path if os.path.abspath(f.site.path) == own else _display_path(f.site.path))
               for f in class_facts]
    return replace(fact, class_facts=tuple(display))


def _source_of(where: str, path: str, module: ir.Module, project: Project) -> ir.Module | None:
    """The IR of the file a fact is in: the one being checked, or another project file."""
    if where != path and os.path.abspath(where) != os.path.abspath(path):
        return project.module(where)
    return module


def _display_path(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _with_path(fact: Fact, path: str) -> Fact:
    if fact.site.path == path:
        return fact
    return replace(fact, site=replace(fact.site, path=path))
