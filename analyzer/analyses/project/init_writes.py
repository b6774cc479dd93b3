"""Which `self.<attr> = value` writes of an `__init__` replace what the attribute held.

The attribute table of a class (`ClassTables.attributes`) is filled by running its
`__init__`; a write joins with what the attribute held before, since a write under an
`if` or in a loop may not happen. A subclass that builds its own submodule in place of
its base's,

    class OtherBlock(Block):
        def __init__(self, config):
            super().__init__(config)          # self.experts = Experts(config)
            self.experts = OtherExperts(config)

leaves every instance holding `OtherExperts`: Python replaces the value. The write
replaces it (a strong update) when it is a top-level statement of the `__init__` that
builds the instance (the class's own, first in its method-resolution order), which holds
no `return` (so every instance built has run it). Writes in helpers and bases it calls
stay joins: the call itself may be conditional."""

from __future__ import annotations

from analyzer.analyses.kinds.summaries import Frame
from analyzer.analyses.project.index import ClassKey
from analyzer.frontend import ir


def replaces(analyzer, frame: Frame, target: ir.Attribute) -> bool:
    """Whether the write to ``target`` (`self.<attr>`, in ``frame``) replaces the value."""
    if frame.fn.name != "__init__" or frame.self_value is None or id(target) not in _top_level_targets(analyzer, frame.fn):
        return False
    owner = frame.self_value.ref
    return isinstance(owner, ClassKey) and analyzer.find_method(owner, "__init__")[1] is frame.fn


def _top_level_targets(analyzer, fn: ir.FunctionDef) -> frozenset:
    """The ids of the single targets of ``fn``'s top-level assignments; none when ``fn``
    holds a `return` (an instance may be built without running them)."""
    memo = analyzer.init_targets
    held = memo.get(id(fn))
    if held is not None and held[0] is fn:
        return held[1]
    ids = frozenset() if any(isinstance(s, ir.Return) for s in ir.walk_statements(fn.body)) else frozenset(
        id(s.targets[0]) for s in fn.body if isinstance(s, ir.Assign) and len(s.targets) == 1)
    memo[id(fn)] = (fn, ids)  # the function is held, so its id is not reused
    return ids
