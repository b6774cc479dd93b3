"""A write into a ``forward`` input made into a write into its copy:

    def forward(self, x, valid):               def forward(self, x, valid):
        x[~valid] = 0.0               ->           x = x.clone()
        x.mul_(self.scale)                         x[~valid] = 0.0
                                                   x.mul_(self.scale)

``fix_input_write(fact, file) -> Fix | str``: the fix of one UT301 site into an input.

Why: an exported graph has no way to write into the caller's tensor (ONNX has no input
mutation; ``torch.export`` replays it into the runtime module's argument, which a second
call then sees mutated). With the copy made at the top of ``forward``, every statement
of ``forward`` sees the same values as before -- views taken from ``x`` are views of the
copy, and each write lands in the copy -- so every output is the same, bit for bit.

What changes, and makes the fix unsafe: the caller's tensor is no longer written. Code
that relies on ``forward`` modifying its argument (a parent module reading it back)
would see the difference. Only ``forward`` is rewritten (a helper's argument is its
caller's local, which the caller may read back), and only an input without a default
(``x=None`` may not be a tensor at the top of the function).
"""

from __future__ import annotations

import libcst as cst

from analyzer.diagnostics import Edit, Fix
from analyzer.fixes.escapes import _function_at
from analyzer.frontend import ir

APPLICABILITY = "unsafe"


def _root_name(node) -> str | None:
    while True:
        if isinstance(node, cst.Subscript) or isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        elif isinstance(node, cst.Name):
            return node.value
        else:
            return None


def fix_input_write(fact, file) -> Fix | str:
    fn = _function_at(file, fact.site.line)
    if fn is None or fn.name != "forward":
        return "the write is not in `forward` (a helper's argument is its caller's tensor, which it may read back)"
    src = file.source_at(fact.site.line)
    node = src.node_at(cst.Subscript, fact.site.line, fact.site.column) if fact.how != "inplace-input" else \
        src.node_at(cst.Call, fact.site.line, fact.site.column)
    name = _root_name(node) if node is not None else None
    param = next((p for p in fn.params if p.name == name), None)
    if param is None or param.name == "self" or param.kind in ("vararg", "kwarg"):
        return "the tensor written is not a plain argument of `forward`"
    if param.default is not None:
        return f"`{name}` has a default (it may not be a tensor at the top of `forward`)"
    first = next((s for s in fn.body if not (isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Const)
                                             and isinstance(s.value.value, str))), None)
    if first is None or first.span.line < 1:
        return "the body of `forward` was not found"
    line_text = file.lines[first.span.line - 1]
    indent = line_text[: len(line_text) - len(line_text.lstrip())]
    if not line_text.strip() or first.span.column != len(indent) + 1:
        return "the first statement of `forward` was not found"
    edit = Edit(first.span.line, len(indent) + 1, first.span.line, len(indent) + 1, f"{name} = {name}.clone()\n{indent}")
    return Fix(f"Write into a copy of `{name}` made at the top of `forward` (the caller's tensor is no longer "
               "modified; the outputs are the same)", (edit,), APPLICABILITY)
