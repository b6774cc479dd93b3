"""An ``if`` that only guards writes through the mask it tests, made unconditional:

    if mask.any():                                      # (the `if`'s comment, kept)
        out[mask] = w[mask, None] * expert(x[mask])  ->  out[mask] = w[mask, None] * expert(x[mask])

``guarded_write(src, node, stmt, types) -> Fix | str | None``: None when the ``if`` is not
of this form (the other UT101 fixes take it).

Why: a write through a boolean mask with no element set writes nothing, so the test only
saves the work of an empty selection; torch.export cannot branch on it (a Python ``if`` on
``mask.any()``) but takes the masked write itself (``index_put`` of a data-dependent
number of rows). The same values on every input when the value written can be computed
on an empty selection: it must read tensors only through ``[mask]`` (``x[mask]``,
``w[mask, None]``), so that on an all-false mask every tensor it reads is empty.

Refused: any other statement in the branch, an ``else``, a write whose index is not the
mask tested, a value that reads a tensor other than through the mask or may have side
effects. Unsafe: a module called on the empty selection must accept zero rows (``Linear``,
activations and convolutions do; a ``BatchNorm`` in training mode, a reduction such as
``.max()`` do not), which is not visible in the source.
"""

from __future__ import annotations

import libcst as cst

from analyzer.diagnostics import Fix
from analyzer.fixes.branch_body import _expression
from analyzer.fixes.source import FixSource, loses_comments, reindent
from analyzer.frontend import expr_text, ir

APPLICABILITY = "unsafe"


def _tested_mask(test) -> str | None:
    """``m`` of ``m.any()`` / ``torch.any(m)``."""
    if isinstance(test, ir.Call) and not test.args and isinstance(test.func, ir.Attribute) \
            and test.func.attr == "any" and isinstance(test.func.value, ir.Name):
        return test.func.value.id
    if isinstance(test, ir.Call) and len(test.args) == 1 and isinstance(test.func, ir.Attribute) \
            and test.func.attr == "any" and isinstance(test.func.value, ir.Name) and test.func.value.id == "torch" \
            and isinstance(test.args[0].value, ir.Name):
        return test.args[0].value.id
    return None


def _by_mask(index, mask: str) -> bool:
    """``[mask]`` or ``[mask, <anything static>...]``."""
    parts = index.elts if isinstance(index, ir.Tuple) else [index]
    return bool(parts) and isinstance(parts[0], ir.Name) and parts[0].id == mask and not any(
        isinstance(sub, ir.Name) for p in parts[1:] for sub in ir.walk_expression(p))


def _value_refusal(value, mask: str, types) -> str | None:
    selected: set[int] = set()
    for sub in ir.walk_expression(value):
        if isinstance(sub, ir.Subscript) and isinstance(sub.value, ir.Name) and _by_mask(sub.index, mask):
            selected.add(id(sub.value))
            for inner in ir.walk_expression(sub.index):
                selected.add(id(inner))
    for sub in ir.walk_expression(value):
        why = _expression(sub, types)
        if why:
            return f"the value written {why}"
        if isinstance(sub, ir.Name) and id(sub) not in selected and types.get(sub.id, "unknown").startswith("tensor"):
            return (f"the value written reads `{sub.id}` other than through `[{mask}]` (on an empty mask it must "
                    "compute on empty tensors only)")
    return None


def guarded_write(src: FixSource, node: cst.If, stmt: ir.If, types) -> Fix | str | None:
    mask = _tested_mask(stmt.test)
    if mask is None or not stmt.body or not all(
            isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ir.Subscript)
            for s in stmt.body):
        return None
    if not types.get(mask, "").startswith("tensor/bool"):
        return None
    if stmt.orelse:
        return "the masked write has an `else` (only a guard with nothing to do otherwise is dropped)"
    for s in stmt.body:
        target = s.targets[0]
        if not _by_mask(target.index, mask):
            return f"`{expr_text(target)}` is not written through the mask `{mask}` the `if` tests"
        if not isinstance(target.value, ir.Name):
            return f"`{expr_text(target)}` writes into an expression"
        why = _value_refusal(s.value, mask, types)
        if why:
            return why
    if not isinstance(node.body, cst.IndentedBlock):
        return "the branch is on the `if` line"
    indent = src.indent_of(node)
    lines = []
    comment = node.body.header.comment
    if comment is not None:
        lines.append(comment.value + "\n")
    body = list(node.body.body)
    # the edit ends where the `if` does: before the last line's own comment, which stays
    body[-1] = body[-1].with_changes(trailing_whitespace=cst.TrailingWhitespace())
    lines += [src.code_of(line) for line in body]
    text = reindent("".join(lines), indent)[len(indent):].rstrip("\r\n")
    edit = src.edit(node, node, text)
    if loses_comments(src.text(edit), edit.content):
        return "comments inside the `if` would be lost"
    if not src.parses_after(edit, statement=True):
        return "the rewrite would not parse (please report this)"
    return Fix(f"Drop the `if {mask}.any()`: a write through an empty mask writes nothing", (edit,), APPLICABILITY)

