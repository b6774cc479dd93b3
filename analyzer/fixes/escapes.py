"""Fixes for the UT201 sites where a tensor becomes a Python number by ``int()`` / ``float()``:

    n = int(t)        ->   n = torch.sym_int(t.item())
    s = float(t)      ->   s = torch.sym_float(t.item())

``fix_escape(fact, file) -> Fix | str``: the fix, or why there is none.

Why: under ``torch.export`` (non-strict, the default of ``torch.onnx.export(dynamo=True)``)
``t.item()`` becomes an *unbacked* symbolic integer (``u0``) that the graph carries: a
slice bound (``x[:, :n]``), a ``narrow``/``topk``/``new_zeros`` size or ``min(n, k)``
stay symbolic, and export adds the runtime checks itself. ``int(t)`` instead asks for a
concrete Python int, the "Could not extract specialized integer from data-dependent
expression u0" error, and so does ``int()`` of the unbacked value.
``torch.sym_int`` / ``torch.sym_float`` are the casts that keep it symbolic; on plain
Python numbers they are ``int()`` / ``float()`` (``torch.sym_int`` truncates toward zero
as ``int`` does), so eager results do not change. Sizes need no ``torch._check_is_size``
any more (torch >= 2.6 treats an unbacked size as non-negative where it is used as one);
a bound the graph cannot know (``n <= x.shape[1]``) is checked at run time by the ops
themselves, as in eager.

The fix is *unsafe* in ruff's sense: it is exact on tensors, and the analysis only
reports ``int(t)`` where ``t`` is certainly a tensor, but that certainty is the
analysis's, not a proof. What stays: the value is still a Python number for the legacy
tracer (`dynamo=False`), so the site is reported again as ``.item()`` (UT201).
"""

from __future__ import annotations

import libcst as cst

from analyzer.analyses.kinds.facts import EscapeFact
from analyzer.diagnostics import Fix

APPLICABILITY = "unsafe"

_CASTS = {"int": "sym_int", "float": "sym_float"}


def fix_escape(fact: EscapeFact, file, torch_name) -> Fix | str:
    """``file``: the `branches._File` of the site; ``torch_name(src, node)`` the name of
    the torch module there (raises with why when there is none)."""
    cast = _CASTS.get(fact.how)
    if cast is None:
        return f"no rewrite for `{fact.how}`"
    src = file.source_at(fact.site.line)
    node = src.node_at(cst.Call, fact.site.line, fact.site.column)
    if node is None or not isinstance(node.func, cst.Name) or node.func.value != fact.how:
        return f"the `{fact.how}(...)` call was not found"
    if len(node.args) != 1 or node.args[0].star or node.args[0].keyword is not None:
        return f"`{fact.how}()` takes one plain argument here"
    torch = torch_name(src, node)
    value = node.args[0].value
    code = src.code_of(value.with_changes(lpar=[], rpar=[]) if not value.lpar else value)
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
        code = f"({code})"
    edit = src.edit(node, node, f"{torch}.{cast}({code}.item())")
    if not src.parses_after(edit, statement=False):
        return "the rewrite would not parse (please report this)"
    return Fix(f"Rewrite `{fact.how}(...)` as `{torch}.{cast}((...).item())`, which torch.export keeps symbolic",
               (edit,), APPLICABILITY)
