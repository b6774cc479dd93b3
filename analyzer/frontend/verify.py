"""Structural checks on the IR: the invariants the analyses and the lowering rely on.

`verify(module)` returns a list of problems (empty when the IR is well formed):
- every node is one of the closed set of kinds in `ir`;
- every statement has a span inside the file, head start not after head end;
- `break`/`continue` appear only inside a loop of the same function;
- assignment targets are names, attributes, subscripts, or tuples/lists/starred of those;
- `If.results` / `Loop.carried`, when filled, name variables assigned in the region.
"""

from __future__ import annotations

from analyzer.frontend import ir

_TARGETS = (ir.Name, ir.Attribute, ir.Subscript, ir.Tuple, ir.List, ir.Starred)


def verify(module: ir.Module) -> list[str]:
    problems: list[str] = []
    _block(module.body, module, loop_depth=0, problems=problems)
    return problems


def assigned_names(body: list[ir.Stmt]) -> set[str]:
    """Names bound anywhere in `body` (not inside nested function or class bodies)."""
    names: set[str] = set()
    for s in ir.walk_statements(body):
        if isinstance(s, ir.Assign):
            for t in s.targets:
                names |= target_names(t)
        elif isinstance(s, ir.AugAssign):
            names |= target_names(s.target)
        elif isinstance(s, ir.Loop) and s.target is not None:
            names |= target_names(s.target)
        elif isinstance(s, ir.With):
            for _, t in s.items:
                if t is not None:
                    names |= target_names(t)
        elif isinstance(s, (ir.FunctionDef, ir.ClassDef)):
            names.add(s.name)
        elif isinstance(s, ir.Import):
            for name, asname in s.names:
                if name != "*":
                    names.add(asname or name.split(".")[0])
        elif isinstance(s, ir.Try):
            names |= {h.name for h in s.handlers if h.name}
        elif isinstance(s, ir.Match):
            for c in s.cases:
                names |= set(c.bindings)
        for e in ir.child_expressions(s):
            for sub in ir.walk_expression(e):
                if isinstance(sub, ir.NamedExpr):
                    names.add(sub.target.id)
    return names


def target_names(t) -> set[str]:
    if isinstance(t, ir.Name):
        return {t.id}
    if isinstance(t, (ir.Tuple, ir.List)):
        return set().union(*(target_names(e) for e in t.elts)) if t.elts else set()
    if isinstance(t, ir.Starred):
        return target_names(t.value)
    return set()


def _check_target(t, where, problems):
    if not isinstance(t, _TARGETS):
        problems.append(f"{where}: invalid assignment target {type(t).__name__}")
    elif isinstance(t, (ir.Tuple, ir.List)):
        for e in t.elts:
            _check_target(e, where, problems)
    elif isinstance(t, ir.Starred):
        _check_target(t.value, where, problems)


def _exprs(node, where, problems):
    for e in ir.child_expressions(node):
        for sub in ir.walk_expression(e):
            if not isinstance(sub, ir.EXPRESSION_KINDS):
                problems.append(f"{where}: unknown expression kind {type(sub).__name__}")


def _block(body, module, loop_depth, problems):
    n_lines = len(module.source_lines)
    for s in body:
        where = f"{module.path}:{s.span.line}"
        if not isinstance(s, ir.STATEMENT_KINDS):
            problems.append(f"{where}: unknown statement kind {type(s).__name__}")
            continue
        sp = s.span
        if sp.line < 1 or sp.line > max(n_lines, 1) or (sp.end_line, sp.end_column) < (sp.line, sp.column):
            problems.append(f"{where}: bad span {sp} on {type(s).__name__}")
        if isinstance(s, (ir.Break, ir.Continue)) and loop_depth == 0:
            problems.append(f"{where}: {type(s).__name__.lower()} outside a loop")
        if isinstance(s, ir.Assign):
            for t in s.targets:
                _check_target(t, where, problems)
        if isinstance(s, ir.AugAssign):
            _check_target(s.target, where, problems)
        if isinstance(s, ir.If) and s.results:
            missing = set(s.results) - assigned_names(s.body) - assigned_names(s.orelse)
            if missing:
                problems.append(f"{where}: If results {sorted(missing)} are not assigned in either branch")
        if isinstance(s, ir.Loop) and s.carried:
            missing = set(s.carried) - assigned_names(s.body) - (target_names(s.target) if s.target else set())
            if missing:
                problems.append(f"{where}: Loop carries {sorted(missing)} that the body never assigns")
        _exprs(s, where, problems)
        if isinstance(s, (ir.FunctionDef, ir.ClassDef)):
            _block(s.body, module, 0, problems)
        elif isinstance(s, ir.Loop):
            _block(s.body, module, loop_depth + 1, problems)
            _block(s.orelse, module, loop_depth, problems)
        else:
            for block in ir.child_blocks(s):
                _block(block, module, loop_depth, problems)
