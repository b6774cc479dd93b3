"""The fact the export call-site pass (``analyzer.fixes.callsites``) emits, and what the
UT4xx rules ask of the kind facts.

Kept apart from the pass so that loading the rules imports neither libcst nor the
front end (a warm ``untrace check`` answers from the cache without them).
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.analyses.kinds.facts import BranchFact, EscapeFact, IterationFact, LoopFact, Site
from analyzer.analyses.kinds.levels import Level
from analyzer.diagnostics import path_ref


@dataclass(frozen=True, slots=True)
class CallSiteFact:
    """One thing an exporter call site does.

    kind:
      "export-without-eval"  the exported module is still in training mode here (detail: its expression)
      "legacy-export"        ``torch.onnx.export(..., dynamo=False)`` (detail: the exporter)
      "old-opset"            ``opset_version=N`` with a literal N (detail: N)
      "dynamic-export"       ``dynamic_axes=`` / ``dynamic_shapes=`` declared (detail: the keyword)
    module_class: the class the exported module was built from, when the call site traces
    back to a constructor in the same body; class_is_local: that class is defined in this file;
    class_callee: the constructor as written (``Net``, ``models.Net``).
    class_facts: the kind facts of that class's ``forward`` (and what it calls), when the
    engine resolved the class in the scanned tree (this file or another); None when it
    could not, so that rules can tell "no hazards" from "unknown".
    own_flag: the module is in training mode by its own flag only (built here, handed no
    module in training mode, never `.train()`-ed); own_mode_matters: whether that flag
    changes what the engine's resolved class computes (`analyzer.analyses.reach.training_mode`;
    True when unknown).
    """

    site: Site
    kind: str
    detail: str
    module_class: str | None = None
    class_is_local: bool = False
    class_callee: str | None = None
    class_facts: tuple | None = None
    own_flag: bool = False
    own_mode_matters: bool = True


def forward_hazards(callsite: CallSiteFact, *, shape: bool) -> list:
    """The kind facts of the exported class's ``forward`` (and what it calls):
    shape-level branches and loops (``shape=True``, UT103/UT104), or the UT1xx/UT2xx
    data hazards (``shape=False``), in source order."""
    cls = callsite.module_class
    if cls is None or callsite.class_facts is None:
        return []
    out = []
    for fact in callsite.class_facts:
        path = fact.site.call_path or ((fact.site.function,) if fact.site.function else ())
        if not path or path[0] != f"{cls}.forward":
            continue
        if shape:
            hit = (isinstance(fact, BranchFact) and fact.level == Level.SHAPE) or (
                isinstance(fact, LoopFact) and Level.SHAPE in (fact.bound_level, fact.exit_level)
                and Level.DATA not in (fact.bound_level, fact.exit_level))
        else:
            hit = (isinstance(fact, BranchFact) and fact.level == Level.DATA) or (
                isinstance(fact, LoopFact) and Level.DATA in (fact.bound_level, fact.exit_level)
            ) or isinstance(fact, (IterationFact, EscapeFact))
        if hit:
            out.append(fact)
    return sorted(out, key=lambda f: (f.site.path, f.site.line, f.site.column))


def forward_ops(callsite: CallSiteFact) -> list:
    """The op facts (``OpFact``) of the exported class's ``forward`` and what it calls."""
    from analyzer.analyses.kinds.facts import OpFact

    return [f for f in callsite.class_facts or () if isinstance(f, OpFact)]


def describe(fact, here: str | None = None) -> str:
    """Where a kind fact is, for messages: `Net.forward` line 12, or with its file when
    that is not ``here`` (the call site's file): `Net.forward` (models.py:12)."""
    if here is not None and fact.site.path != here:
        return f"`{fact.site.function}` ({path_ref(fact.site.path)}:{fact.site.line})"
    return f"`{fact.site.function}` line {fact.site.line}"
