"""Make `break`, `continue` and early `return` structured (AutoGraph-style control
booleans), so that every region has one entry and one exit, as ONNX `If` / `Loop` need.

Requires: an `ir.FunctionDef`. Computes: a new `FunctionDef` (the input is not
changed) in which

    return v       ->  $retval = v; $ret = True
    break          ->  $brkN = True           (N numbers the loop)
    continue       ->  $contN = True

and every statement that follows one that *may* set a flag runs under a synthetic
guard `if not ($ret or $brkN or $contN): ...`; a loop whose body may break or return
stops iterating once its flag is set (`for`: the body is guarded; `while`: the flags
join the condition); a loop's `else` runs only when it did not break. The function
returns `$retval` at its end. A function whose only `return` is its last statement is
returned unchanged.

    >>> from analyzer.frontend import parse_module, print_function
    >>> src = "def f(x):\\n    for i in range(3):\\n        if x:\\n            break\\n        x = x + i\\n    return x\\n"
    >>> print(print_function(structure_control_flow(parse_module(src).functions()["f"])), end="")
    L1    def f(x) {
    L2      $brk1 = False
    L2      for i in range(3) {
    L2        if (not $brk1) {
    L3          if x {
    L4            $brk1 = True
                }
    L5          if (not $brk1) {
    L5            x = (x + i)
                }
              }
            }
    L6      return x
          }
"""

from __future__ import annotations

import dataclasses
import itertools

from analyzer.frontend import ir

RET, RETVAL = "$ret", "$retval"


def structure_control_flow(fn: ir.FunctionDef) -> ir.FunctionDef:
    if not _needs_structuring(fn):
        return fn
    counter = itertools.count(1)
    tail = fn.body[-1:] if fn.body and isinstance(fn.body[-1], ir.Return) else []
    if tail and not _contains(fn.body[:-1], ir.Return):
        body, _, _ = _block(fn.body[:-1], counter, loop=None)
        return dataclasses.replace(fn, body=body + tail)
    body, _, _ = _block(fn.body, counter, loop=None)
    if _contains(fn.body, ir.Return):
        span = fn.span
        body = [_assign(RET, False, span), _assign(RETVAL, None, span), *body,
                ir.Return(ir.Name(RETVAL, span), span)]
    return dataclasses.replace(fn, body=body)


def _needs_structuring(fn: ir.FunctionDef) -> bool:
    body = fn.body
    tail_return = bool(body) and isinstance(body[-1], ir.Return)
    inner = body[:-1] if tail_return else body
    return _contains(inner, ir.Return) or _contains(body, (ir.Break, ir.Continue))


def _contains(body, kinds) -> bool:
    for s in ir.walk_statements(body):
        if isinstance(s, kinds):
            return True
    return False


def _assign(name: str, value, span: ir.Span) -> ir.Assign:
    return ir.Assign([ir.Name(name, span)], ir.Const(value, span), span)


def _guard(flags: set[str], span: ir.Span) -> ir.Expr:
    names = [ir.Name(f, span) for f in sorted(flags)]
    inner = names[0] if len(names) == 1 else ir.BoolOp("or", names, span)
    return ir.UnaryOp("not", inner, span)


def _block(stmts, counter, loop) -> tuple[list, set[str], bool]:
    """(new statements, flags they may set, whether they always set one)."""
    out: list = []
    exits: set[str] = set()
    for i, stmt in enumerate(stmts):
        new, may, always = _stmt(stmt, counter, loop)
        out.extend(new)
        exits |= may
        if always:
            return out, exits, True  # what follows is dead code
        if may and i + 1 < len(stmts):
            rest, rest_exits, _ = _block(stmts[i + 1:], counter, loop)
            exits |= rest_exits
            if rest:
                out.append(ir.If(_guard(may, stmt.span), rest, [], stmts[i + 1].span, synthetic=True))
            return out, exits, False
    return out, exits, False


def _stmt(s, counter, loop) -> tuple[list, set[str], bool]:
    if isinstance(s, ir.Return):
        value = s.value if s.value is not None else ir.Const(None, s.span)
        return [ir.Assign([ir.Name(RETVAL, s.span)], value, s.span), _assign(RET, True, s.span)], {RET}, True
    if isinstance(s, ir.Break):
        return [_assign(loop[0], True, s.span)], {loop[0]}, True
    if isinstance(s, ir.Continue):
        return [_assign(loop[1], True, s.span)], {loop[1]}, True
    if isinstance(s, ir.If):
        body, e1, a1 = _block(s.body, counter, loop)
        orelse, e2, a2 = _block(s.orelse, counter, loop)
        return [dataclasses.replace(s, body=body, orelse=orelse)], e1 | e2, a1 and a2 and bool(s.orelse)
    if isinstance(s, ir.Loop):
        return _loop(s, counter)
    if isinstance(s, ir.With):
        body, e, a = _block(s.body, counter, loop)
        return [dataclasses.replace(s, body=body)], e, a
    if isinstance(s, ir.Try):
        body, e, _ = _block(s.body, counter, loop)
        handlers = []
        for h in s.handlers:
            hb, he, _ = _block(h.body, counter, loop)
            e |= he
            handlers.append(dataclasses.replace(h, body=hb))
        orelse, eo, _ = _block(s.orelse, counter, loop)
        final, ef, _ = _block(s.finalbody, counter, loop)
        return [dataclasses.replace(s, body=body, handlers=handlers, orelse=orelse, finalbody=final)], e | eo | ef, False
    if isinstance(s, ir.Match):
        exits: set[str] = set()
        cases = []
        for c in s.cases:
            cb, ce, _ = _block(c.body, counter, loop)
            exits |= ce
            cases.append(dataclasses.replace(c, body=cb))
        return [dataclasses.replace(s, cases=cases)], exits, False
    return [s], set(), False


def _loop(s: ir.Loop, counter) -> tuple[list, set[str], bool]:
    n = next(counter)
    brk, cont = f"$brk{n}", f"$cont{n}"
    body, exits, _ = _block(s.body, counter, (brk, cont))
    stops = exits & {brk, RET}  # flags that end the iteration for good
    before: list = []
    if cont in exits:
        body = [_assign(cont, False, s.span), *body]
    if brk in exits:
        before.append(_assign(brk, False, s.span))
    new = dataclasses.replace(s, body=body)
    if stops:
        if s.kind == "for":
            new.body = [ir.If(_guard(stops, s.span), body, [], s.span, synthetic=True)]
        else:
            new.test = ir.BoolOp("and", [_guard(stops, s.span), s.test], s.test.span)
    orelse, else_exits, _ = _block(s.orelse, counter, None) if s.orelse else ([], set(), False)
    new.orelse = []
    after: list = []
    if orelse:
        after = [ir.If(_guard({brk}, s.span), orelse, [], s.span, synthetic=True)] if brk in exits else orelse
    return [*before, new, *after], (exits & {RET}) | else_exits, False
