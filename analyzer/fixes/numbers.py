"""Python numbers chosen by a tensor test, as ``torch.sym_ite``:

    tau = self.sharp if h.mean() > 0 else self.soft
        ->  tau = torch.sym_ite((h.mean() > 0).item(), self.sharp, self.soft)

    if h.abs().mean() > self.limit:
        passes = self.hard_passes        ->  passes = torch.sym_ite((h.abs().mean() > self.limit).item(),
    else:                                                           self.hard_passes, self.easy_passes)
        passes = self.easy_passes

``number_ternary(src, node, types, torch)`` and ``number_if(src, node, stmt, types, torch)``
give the ``Fix`` or why there is none.

Why ``sym_ite`` and not ``torch.where``: a number made a 0-d tensor does not promote as a
Python number does (``int_tensor * 0.5`` is float32, ``int_tensor * torch.tensor(0.5,
dtype=torch.float64)`` float64; ``torch.tensor(0.1)`` is not the double 0.1), and a tensor
is no ``range`` bound. ``torch.sym_ite(b, t, f)`` is ``t if b else f`` on a Python bool, so
eager results are the same values of the same types; under ``torch.export`` the test's
``.item()`` is an unbacked SymBool and the choice a symbolic number (``ITE(u0, 0.5, 2.0)``)
that arithmetic with tensors, sizes and the ``while_loop`` bound of a loop fix carry into
the graph. ``(p).item()`` is ``bool(p)`` for a boolean tensor of one element (and raises
where ``bool(p)`` raises); a test that is not boolean is made so first (``.bool()``, which
is what ``bool()`` tests: non-zero, NaN true).

Refused: a side that is not a number (a string, ``None``, a container, a tensor: the
tensor fixes take those), literals of two types (``1 if p else 0.5``: ``sym_ite`` needs
one type, and raises otherwise), sides that may have side effects (both are evaluated),
and an ``if`` whose branches are not each one plain ``name = value`` per name chosen.
Unsafe: that the two sides have one type is checked at run time (``sym_ite`` raises on a
mismatch) where it is not visible in the source.
"""

from __future__ import annotations

import libcst as cst

from analyzer.diagnostics import Fix
from analyzer.fixes.cond import is_tensor
from analyzer.fixes.predicates import _bare, tensor_predicate
from analyzer.fixes.source import FixSource, loses_comments, reindent
from analyzer.fixes.where import side_effect_free
from analyzer.frontend import ir

APPLICABILITY = "unsafe"


def _literal_type(node: cst.BaseExpression) -> str | None:
    """The Python type of a literal side (``-1`` too), ``other`` for a non-number literal,
    None when not a literal."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _literal_type(node.expression)
    if isinstance(node, cst.Integer):
        return "int"
    if isinstance(node, cst.Float):
        return "float"
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return "bool"
    if isinstance(node, (cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List,
                         cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.Lambda)) or (
            isinstance(node, cst.Name) and node.value == "None"):
        return "other"
    return None


def _sides_refusal(src: FixSource, sides, torch: str) -> str | None:
    kinds = [_literal_type(side) for side in sides]
    if "other" in kinds:
        return "a side is not a number (only numbers chosen by a tensor test become `torch.sym_ite`)"
    literal = {k for k in kinds if k is not None}
    if len(literal) > 1:
        return ("the sides are numbers of two types (`torch.sym_ite` chooses between values of one type): make "
                "them one type, or the choice a tensor with `torch.where`")
    for side in sides:
        if not side_effect_free(side, tensor_methods=False, torch=torch):
            return f"`{src.code_of(side).strip()}` may have side effects, and the rewrite evaluates both sides"
    return None


def _flag(src: FixSource, test: cst.BaseExpression, types, torch: str) -> str:
    """``test`` as a Python bool that stays symbolic under torch.export: ``(p).item()``."""
    predicate = tensor_predicate(src, test, torch)
    if isinstance(predicate, str):
        raise _Refused(predicate)
    code = src.code_of(_bare(predicate))
    boolean = ("/bool" in types.get("$pred", "") or isinstance(predicate, cst.Comparison)
               or code.startswith(f"{torch}.logical_"))
    simple = isinstance(predicate, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
    if not simple:
        code = f"({code})"
    return f"{code}.item()" if boolean else f"{code}.bool().item()"


class _Refused(Exception):
    pass


def _pred_is_tensor(types) -> bool:
    return is_tensor(types.get("$pred", "unknown")) or is_tensor(types.get("$leaves", "unknown"))


def number_ternary(src: FixSource, node: cst.IfExp, types, torch: str) -> Fix | str:
    """``A if p else B`` of Python numbers -> ``torch.sym_ite((p).item(), A, B)``."""
    if not _pred_is_tensor(types):
        return "the condition is not a tensor: keep it a tensor first"
    why = _sides_refusal(src, (node.body, node.orelse), torch)
    if why:
        return why
    if types.get("$then") != "python" or types.get("$else") != "python":
        return ("neither side is a tensor (torch.where would turn the Python result into a tensor), nor both "
                "known to be numbers (`torch.sym_ite`)")
    try:
        flag = _flag(src, node.test, types, torch)
    except _Refused as refused:
        return str(refused)
    call = f"{torch}.sym_ite({flag}, {src.code_of(_bare(node.body))}, {src.code_of(_bare(node.orelse))})"
    if node.lpar:
        call = f"({call})"
    edit = src.edit(node, node, call)
    if not src.parses_after(edit, statement=False):
        return "the rewrite would not parse (please report this)"
    return Fix(f"Choose the number with `{torch}.sym_ite(...)`, which torch.export keeps symbolic", (edit,),
               APPLICABILITY)


def _branch_values(block) -> dict[str, cst.BaseExpression] | None:
    """name -> value for a branch that is only ``name = value`` lines, each name once."""
    if not isinstance(block, cst.IndentedBlock):
        return None
    values: dict[str, cst.BaseExpression] = {}
    for line in block.body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        small = line.body[0]
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            return None
        name = small.targets[0].target.value
        if name in values:
            return None
        values[name] = small.value
    return values


def _reads(node: cst.BaseExpression) -> set[str]:
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

    node.visit(_Names())
    return found


def number_if(src: FixSource, node: cst.If, stmt: ir.If, types, torch: str,
              fn: ir.FunctionDef | None = None) -> Fix | str | None:
    """``if p: n = A / else: n = B`` of Python numbers -> ``n = torch.sym_ite((p).item(), A, B)``.
    None when the ``if`` does not assign Python values only (the tensor fixes take it)."""
    results = list(stmt.results)
    if not results or not all(types.get(f"={name}") == "python" for name in results):
        return None
    if not isinstance(node.orelse, cst.Else):
        return None  # one-sided: the tensor fixes say why not
    if not _pred_is_tensor(types):
        return None
    then_values, else_values = _branch_values(node.body), _branch_values(node.orelse.body)
    if then_values is None or else_values is None or set(then_values) != set(else_values):
        return ("the branches are not both plain `name = number` assignments of the same names (by hand: "
                "`n = torch.sym_ite(p.item(), a, b)` for each)")
    names = list(then_values)
    for name in names:
        why = _sides_refusal(src, (then_values[name], else_values[name]), torch)
        if why:
            return why
        if (_reads(then_values[name]) | _reads(else_values[name])) & set(names):
            return f"the value of `{name}` reads a name the branches assign"
    try:
        flag = _flag(src, node.test, types, torch)
    except _Refused as refused:
        return str(refused)
    comments = []
    for clause in (node.body, node.orelse.body):
        if clause.header.comment is not None:
            comments.append(clause.header.comment.value)
    lines = []
    if len(names) > 1:
        chosen = f"chosen_{stmt.span.line}"
        if fn is not None and chosen in _names_in(fn):
            return f"`{chosen}` is taken in the function (the rewrite names the test so)"
        lines.append(f"{chosen} = {flag}")
        flag = chosen
    for name in names:
        lines.append(f"{name} = {torch}.sym_ite({flag}, {src.code_of(_bare(then_values[name]))}, "
                     f"{src.code_of(_bare(else_values[name]))})")
    if comments:
        lines[0] += "  " + "  ".join(comments)
    indent = src.indent_of(node)
    text = reindent("\n".join(lines), indent)[len(indent):]
    edit = src.edit(node, node, text)
    if loses_comments(src.text(edit), edit.content):
        return "comments inside the `if` would be lost"
    if not src.parses_after(edit, statement=True):
        return "the rewrite would not parse (please report this)"
    what = ", ".join(f"`{n}`" for n in names)
    return Fix(f"Choose {what} with `{torch}.sym_ite(...)`, which torch.export keeps symbolic", (edit,), APPLICABILITY)


def _names_in(fn: ir.FunctionDef) -> set[str]:
    names = {p.name for p in fn.params}
    for stmt in ir.walk_statements(fn.body, into_defs=True):
        for expr in ir.child_expressions(stmt):
            names |= {sub.id for sub in ir.walk_expression(expr) if isinstance(sub, ir.Name)}
    return names
