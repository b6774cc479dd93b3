"""Canonical text form of the IR (golden tests, `untrace graph --format text`).

One statement per line, regions indented, every line prefixed with its source line:

    L8   if (x.sum() > 0) -> (y) {
    L9     y = x
         } else {
    ...
"""

from __future__ import annotations

from analyzer.frontend import ir

_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8,
         "+": 9, "-": 9, "*": 10, "@": 10, "/": 10, "//": 10, "%": 10, "unary": 11, "**": 12}


def expr_text(e) -> str:
    """Python-like text of an expression, fully parenthesised where precedence needs it."""
    if e is None:
        return ""
    if isinstance(e, ir.Name):
        return e.id
    if isinstance(e, ir.Const):
        return "..." if e.value is ... else repr(e.value)
    if isinstance(e, ir.Attribute):
        return f"{_atom(e.value)}.{e.attr}"
    if isinstance(e, ir.Call):
        args = []
        for a in e.args:
            prefix = a.star + (f"{a.keyword}=" if a.keyword else "")
            args.append(prefix + expr_text(a.value))
        return f"{_atom(e.func)}({', '.join(args)})"
    if isinstance(e, ir.Subscript):
        idx = e.index
        inner = ", ".join(expr_text(x) for x in idx.elts) if isinstance(idx, ir.Tuple) and idx.elts else expr_text(idx)
        return f"{_atom(e.value)}[{inner}]"
    if isinstance(e, ir.Slice):
        s = f"{expr_text(e.lower)}:{expr_text(e.upper)}"
        return s + (f":{expr_text(e.step)}" if e.step is not None else "")
    if isinstance(e, ir.Tuple):
        if len(e.elts) == 1:
            return f"({expr_text(e.elts[0])},)"
        return "(" + ", ".join(expr_text(x) for x in e.elts) + ")"
    if isinstance(e, ir.List):
        return "[" + ", ".join(expr_text(x) for x in e.elts) + "]"
    if isinstance(e, ir.Set):
        return "{" + ", ".join(expr_text(x) for x in e.elts) + "}"
    if isinstance(e, ir.Dict):
        return "{" + ", ".join(f"**{expr_text(v)}" if k is None else f"{expr_text(k)}: {expr_text(v)}" for k, v in e.items) + "}"
    if isinstance(e, ir.BinOp):
        return f"({expr_text(e.left)} {e.op} {expr_text(e.right)})"
    if isinstance(e, ir.UnaryOp):
        sep = " " if e.op == "not" else ""
        return f"({e.op}{sep}{expr_text(e.operand)})"
    if isinstance(e, ir.Compare):
        parts = [expr_text(e.left)]
        for op, c in zip(e.ops, e.comparators):
            parts += [op, expr_text(c)]
        return "(" + " ".join(parts) + ")"
    if isinstance(e, ir.BoolOp):
        return "(" + f" {e.op} ".join(expr_text(v) for v in e.values) + ")"
    if isinstance(e, ir.IfExp):
        return f"({expr_text(e.body)} if {expr_text(e.test)} else {expr_text(e.orelse)})"
    if isinstance(e, ir.Lambda):
        return f"(lambda {', '.join(p.name for p in e.params)}: {expr_text(e.body)})"
    if isinstance(e, ir.Comprehension):
        gens = " ".join(
            f"for {expr_text(g.target)} in {expr_text(g.iter)}" + "".join(f" if {expr_text(i)}" for i in g.ifs)
            for g in e.generators
        )
        elt = f"{expr_text(e.key)}: {expr_text(e.elt)}" if e.kind == "dict" else expr_text(e.elt)
        brackets = {"list": "[]", "set": "{}", "dict": "{}", "generator": "()"}[e.kind]
        return f"{brackets[0]}{elt} {gens}{brackets[1]}"
    if isinstance(e, ir.Starred):
        return f"*{expr_text(e.value)}"
    if isinstance(e, ir.NamedExpr):
        return f"({expr_text(e.target)} := {expr_text(e.value)})"
    if isinstance(e, ir.FormattedString):
        return "f'" + "".join("{" + expr_text(v) + "}" for v in e.values) + "'"
    if isinstance(e, ir.OpaqueExpr):
        return f"<opaque {e.reason}>"
    return f"<{type(e).__name__}>"


def dotted_head(e) -> str | None:
    """The name `expr_text(e)` starts with when a `.` follows it (`np` for
    `np.linalg.norm(x).sum`), else None: what `expr_text(e).split(".")[0]` gives when it
    is a name, without writing out the whole expression (a chain of calls asked at each
    call would be written out again at each)."""
    after = None
    while isinstance(e, (ir.Attribute, ir.Call, ir.Subscript)):
        after, e = e, e.func if isinstance(e, ir.Call) else e.value
    return e.id if isinstance(e, ir.Name) and isinstance(after, ir.Attribute) else None


def _atom(e) -> str:
    text = expr_text(e)
    if isinstance(e, (ir.Name, ir.Const, ir.Attribute, ir.Call, ir.Subscript, ir.Tuple, ir.List)):
        return text
    return text if text.startswith("(") else f"({text})"


def print_function(fn: ir.FunctionDef, *, annotate=None) -> str:
    """`annotate(stmt) -> str | None` adds a trailing `# ...` note (e.g. hazard kinds)."""
    params = ", ".join(("*" if p.kind == "vararg" else "**" if p.kind == "kwarg" else "") + p.name for p in fn.params)
    lines = [f"L{fn.span.line:<4} def {fn.qualname or fn.name}({params}) {{"]
    _block(fn.body, 1, lines, annotate)
    lines.append("      }")
    return "\n".join(lines) + "\n"


def print_module(module: ir.Module, *, annotate=None) -> str:
    lines: list[str] = []
    _block(module.body, 0, lines, annotate)
    return "\n".join(lines) + "\n"


def _line(stmt, depth, text, lines, annotate):
    note = annotate(stmt) if annotate else None
    suffix = f"  # {note}" if note else ""
    lines.append(f"L{stmt.span.line:<4} {'  ' * depth}{text}{suffix}")


def _close(depth, text, lines):
    lines.append(f"      {'  ' * depth}{text}")


def _block(body, depth, lines, annotate):
    for s in body:
        _stmt(s, depth, lines, annotate)


def _stmt(s, depth, lines, annotate):
    if isinstance(s, ir.Assign):
        targets = " = ".join(expr_text(t) for t in s.targets)
        _line(s, depth, f"{targets} = {expr_text(s.value)}", lines, annotate)
    elif isinstance(s, ir.AugAssign):
        _line(s, depth, f"{expr_text(s.target)} {s.op}= {expr_text(s.value)}", lines, annotate)
    elif isinstance(s, ir.ExprStmt):
        _line(s, depth, expr_text(s.value), lines, annotate)
    elif isinstance(s, ir.If):
        results = f" -> ({', '.join(s.results)})" if s.results else ""
        _line(s, depth, f"{'elif' if s.is_elif else 'if'} {expr_text(s.test)}{results} {{", lines, annotate)
        _block(s.body, depth + 1, lines, annotate)
        if s.orelse:
            _close(depth, "} else {", lines)
            _block(s.orelse, depth + 1, lines, annotate)
        _close(depth, "}", lines)
    elif isinstance(s, ir.Loop):
        carried = f" carried ({', '.join(s.carried)})" if s.carried else ""
        head = f"for {expr_text(s.target)} in {expr_text(s.iter)}" if s.kind == "for" else f"while {expr_text(s.test)}"
        _line(s, depth, f"{head}{carried} {{", lines, annotate)
        _block(s.body, depth + 1, lines, annotate)
        if s.orelse:
            _close(depth, "} else {", lines)
            _block(s.orelse, depth + 1, lines, annotate)
        _close(depth, "}", lines)
    elif isinstance(s, ir.Break):
        _line(s, depth, "break", lines, annotate)
    elif isinstance(s, ir.Continue):
        _line(s, depth, "continue", lines, annotate)
    elif isinstance(s, ir.Return):
        _line(s, depth, f"return {expr_text(s.value)}".rstrip(), lines, annotate)
    elif isinstance(s, ir.Raise):
        _line(s, depth, f"raise {expr_text(s.exc)}".rstrip(), lines, annotate)
    elif isinstance(s, ir.Assert):
        msg = f", {expr_text(s.msg)}" if s.msg is not None else ""
        _line(s, depth, f"assert {expr_text(s.test)}{msg}", lines, annotate)
    elif isinstance(s, ir.Pass):
        _line(s, depth, "pass", lines, annotate)
    elif isinstance(s, ir.With):
        items = ", ".join(expr_text(c) + (f" as {expr_text(t)}" if t is not None else "") for c, t in s.items)
        _line(s, depth, f"with {items} {{", lines, annotate)
        _block(s.body, depth + 1, lines, annotate)
        _close(depth, "}", lines)
    elif isinstance(s, ir.Try):
        _line(s, depth, "try {", lines, annotate)
        _block(s.body, depth + 1, lines, annotate)
        for h in s.handlers:
            name = f" as {h.name}" if h.name else ""
            _close(depth, f"}} except {expr_text(h.type)}{name} {{", lines)
            _block(h.body, depth + 1, lines, annotate)
        if s.orelse:
            _close(depth, "} else {", lines)
            _block(s.orelse, depth + 1, lines, annotate)
        if s.finalbody:
            _close(depth, "} finally {", lines)
            _block(s.finalbody, depth + 1, lines, annotate)
        _close(depth, "}", lines)
    elif isinstance(s, ir.FunctionDef):
        params = ", ".join(p.name for p in s.params)
        _line(s, depth, f"def {s.name}({params}) {{", lines, annotate)
        _block(s.body, depth + 1, lines, annotate)
        _close(depth, "}", lines)
    elif isinstance(s, ir.ClassDef):
        bases = ", ".join(expr_text(b) for b in s.bases)
        _line(s, depth, f"class {s.name}({bases}) {{", lines, annotate)
        _block(s.body, depth + 1, lines, annotate)
        _close(depth, "}", lines)
    elif isinstance(s, ir.Import):
        names = ", ".join(n + (f" as {a}" if a else "") for n, a in s.names)
        if s.module is None:
            _line(s, depth, f"import {names}", lines, annotate)
        else:
            _line(s, depth, f"from {'.' * s.level}{s.module} import {names}", lines, annotate)
    elif isinstance(s, ir.Global):
        _line(s, depth, "global " + ", ".join(s.names), lines, annotate)
    elif isinstance(s, ir.Nonlocal):
        _line(s, depth, "nonlocal " + ", ".join(s.names), lines, annotate)
    elif isinstance(s, ir.Delete):
        _line(s, depth, "del " + ", ".join(expr_text(t) for t in s.targets), lines, annotate)
    elif isinstance(s, ir.Match):
        _line(s, depth, f"match {expr_text(s.subject)} {{", lines, annotate)
        for c in s.cases:
            guard = f" if {expr_text(c.guard)}" if c.guard is not None else ""
            _close(depth + 1, f"case {c.pattern}{guard} {{", lines)
            _block(c.body, depth + 2, lines, annotate)
            _close(depth + 1, "}", lines)
        _close(depth, "}", lines)
    elif isinstance(s, ir.Opaque):
        _line(s, depth, f"<opaque {s.reason}>", lines, annotate)
    else:
        _line(s, depth, f"<{type(s).__name__}>", lines, annotate)
