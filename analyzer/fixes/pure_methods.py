"""Which methods of a class a rewritten block may call: ``with_pure_methods(types, file, fn)``.

A branch or loop body that calls a helper of its own class (``self._cost(c, u, v)``) can
become a ``torch.cond`` branch or a ``while_loop`` body when the helper is straight-line
code that only computes its result: the same rules as the block itself
(``branch_body.refusal``), ending in a ``return``. Such helpers are tagged
``method/pure`` in the types the refusal reads (``self._cost``); a helper that calls
another pure helper is pure too (found by iterating to a fixed point). Decorated,
``async`` and static helpers are left out: what a decorator makes of a method is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping

from analyzer.fixes.branch_body import PURE_METHOD, refusal
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names


def with_pure_methods(types: Mapping[str, str], file, fn: ir.FunctionDef) -> dict[str, str]:
    """``types`` with ``self.<name>`` tagged ``method/pure`` for each pure method of the
    class that defines ``fn`` (``file``: the `branches._File` of the site)."""
    cls = _classes(file).get(id(fn))
    if cls is None or not any(types.get(f"self.{name}") in ("method", "function") for name in cls.methods()):
        return dict(types)  # the block calls no method of its class: nothing to prove
    candidates = {name: m for name, m in cls.methods().items()
                  if not m.decorators and not m.is_async and m.params and m.params[0].name == "self"
                  and types.get(f"self.{name}", "method") in ("method", "function")}
    pure: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, method in candidates.items():
            if name in pure:
                continue
            local = {p.name for p in method.params[1:]} | assigned_names(method.body)
            inner = {**types, **{f"self.{p}": PURE_METHOD for p in pure}, **{n: "unknown" for n in local}}
            if refusal(method.body, inner, last_return=True) is None and _returns_value(method.body):
                pure.add(name)
                changed = True
    return {**types, **{f"self.{name}": PURE_METHOD for name in pure}}


def _returns_value(body: list) -> bool:
    return bool(body) and isinstance(body[-1], ir.Return) and body[-1].value is not None


def _classes(file) -> dict[int, ir.ClassDef]:
    """id(method) -> its class, for every class of the file (built once per file)."""
    cached = getattr(file, "_method_classes", None)
    if cached is None:
        cached = {}
        for stmt in ir.walk_statements(file.module.body, into_defs=True):
            if isinstance(stmt, ir.ClassDef):
                cached.update({id(method): stmt for method in stmt.methods().values()})
        file._method_classes = cached
    return cached
