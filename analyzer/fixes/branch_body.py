"""Can a block of statements become the body of a ``torch.cond`` branch function?

``refusal(body, types, last_return=...) -> str | None``: None when every statement is
straight-line code that only binds local names and calls things that are free of side
effects; otherwise why not, as a phrase that completes "not rewritten: the branch ...".

Why each refusal: ``torch.cond`` traces *both* branches as graphs that take tensors and
return tensors. A branch that returns early, breaks out of a loop, raises, writes an
attribute, mutates a tensor or a container in place, or turns a tensor into a Python
value has no such graph (torch.cond rejects input mutation and aliasing, and a Python
value from ``.item()`` cannot decide anything inside a graph). Calls are allowed only
where the callee is known: ``torch.*`` functions, Tensor methods that are not in place,
and submodules (``self.proj(x)``: their own hazards are reported at their own sites).

``types`` maps names and ``self.attr`` to ``analyzer.analyses.kinds.values.type_tag`` strings
(``BranchFact.types``).
"""

from __future__ import annotations

from collections.abc import Mapping

from analyzer.analyses.kinds import torch_api as api
from analyzer.frontend import expr_text, ir
from analyzer.frontend.verify import assigned_names

_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop", "remove", "clear"})
_SIDE_EFFECT_METHODS = frozenset({"backward", "register_hook", "retain_grad", "record_stream"})
# Builtins that compute a value from their arguments and nothing else (not ``min``/``max``:
# of tensors they take ``bool()`` of one, which a torch.cond or while_loop body cannot,
# even in eager; ``abs(t)`` is ``t.abs()``).
_PYTHON_BUILTINS_OK = frozenset({"len", "isinstance", "range", "slice", "abs"})
_ESCAPING_BUILTINS = frozenset({"bool", "int", "float", "complex"})
_CALLABLE_TYPES = frozenset({"module", "modules"})
PURE_METHOD = "method/pure"  # a helper of the class that only computes its result (`pure_methods`)
_NESTED = {
    ir.If: "`if`", ir.Loop: "loop", ir.With: "`with`", ir.Try: "`try`", ir.Match: "`match`",
    ir.FunctionDef: "`def`", ir.ClassDef: "`class`", ir.Import: "`import`", ir.Global: "`global`",
    ir.Nonlocal: "`nonlocal`", ir.Delete: "`del`", ir.Opaque: "statement untrace does not model",
}


def refusal(body: list[ir.Stmt], types: Mapping[str, str], *, last_return: bool = False) -> str | None:
    # A name the block binds is a local of the function, never a module or a builtin, even
    # where ``types`` (the names known at the `if`) resolves it as a free name.
    local = {name for name in assigned_names(body) if types.get(name, "").startswith("ext:")}
    if local:
        types = {**types, **{name: "unknown" for name in local}}
    for i, stmt in enumerate(body):
        why = _statement(stmt, types, is_last=i == len(body) - 1, last_return=last_return)
        if why:
            return why
    return None


def _statement(stmt, types, *, is_last: bool, last_return: bool) -> str | None:
    if isinstance(stmt, ir.Assign):
        for target in stmt.targets:
            why = _target(target)
            if why:
                return why
    elif isinstance(stmt, ir.AugAssign):
        return f"updates `{expr_text(stmt.target)}` in place (`{expr_text(stmt.target)} {stmt.op}= ...`)"
    elif isinstance(stmt, ir.Return):
        if not (is_last and last_return):
            return "returns early"
        if stmt.value is None:
            return "returns None"
    elif isinstance(stmt, ir.Break):
        return "uses `break`"
    elif isinstance(stmt, ir.Continue):
        return "uses `continue`"
    elif isinstance(stmt, ir.Raise):
        return "raises an exception"
    elif isinstance(stmt, ir.Assert):
        return "contains an `assert`"
    elif isinstance(stmt, ir.ExprStmt):
        if not isinstance(stmt.value, ir.Const):  # a docstring-like constant is harmless
            return f"evaluates `{expr_text(stmt.value)}` for its side effects"
    elif isinstance(stmt, ir.Pass):
        pass
    elif isinstance(stmt, ir.FunctionDef) and not stmt.decorators and not stmt.is_async:
        # A branch function of a fix already made inside the block (`true_fn`, `loop_body`):
        # its body is held to the same rules, ending in a return.
        local = {p.name for p in stmt.params} | assigned_names(stmt.body)
        inner = {**types, **{name: "unknown" for name in local}}  # its own names, not the enclosing scope's
        why = refusal(stmt.body, inner, last_return=True)
        return f"defines `{stmt.name}`, which {why}" if why else None
    else:
        return f"contains a nested {_NESTED.get(type(stmt), type(stmt).__name__)}"
    for expr in ir.child_expressions(stmt):
        for sub in ir.walk_expression(expr):
            why = _expression(sub, types)
            if why:
                return why
    return None


def _target(target) -> str | None:
    if isinstance(target, ir.Name):
        return None
    if isinstance(target, (ir.Tuple, ir.List)):
        for elt in target.elts:
            why = _target(elt.value if isinstance(elt, ir.Starred) else elt)
            if why:
                return why
        return None
    if isinstance(target, ir.Attribute):
        return f"assigns the attribute `{expr_text(target)}`"
    if isinstance(target, ir.Subscript):
        return f"writes into `{expr_text(target.value)}` in place (`{expr_text(target)} = ...`)"
    return f"assigns `{expr_text(target)}`"


def _expression(e, types) -> str | None:
    if isinstance(e, ir.NamedExpr):
        return "binds a name with `:=`"
    if isinstance(e, ir.OpaqueExpr):
        return f"uses {e.reason}"
    if isinstance(e, ir.Call):
        return _call(e, types)
    return None


def callee_name(func, types: Mapping[str, str]) -> str | None:
    """The canonical dotted name of a callee rooted at an imported module
    (``F.relu`` -> ``torch.nn.functional.relu``), else None."""
    parts = []
    node = func
    while isinstance(node, ir.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ir.Name):
        return None
    tag = types.get(node.id, "")
    if not tag.startswith("ext:"):
        return None
    return ".".join([tag[4:], *reversed(parts)])


def _call(call: ir.Call, types) -> str | None:
    func = call.func
    text = expr_text(func)
    name = callee_name(func, types)
    if name is not None:
        if name.startswith("builtins."):
            builtin = name.split(".", 1)[1]
            if builtin in _ESCAPING_BUILTINS:
                return f"converts a tensor to a Python value (`{builtin}(...)`)"
            if builtin in _PYTHON_BUILTINS_OK:
                return None
            return f"calls `{builtin}()`, which untrace cannot prove free of side effects"
        if name.startswith("torch."):
            function = name.rsplit(".", 1)[1]
            if function.endswith("_") and not function.startswith("_"):
                return f"calls the in-place `{text}()`"
            return None
        return f"calls `{text}()`, which untrace cannot prove free of side effects"
    if isinstance(func, ir.Attribute):
        method = func.attr
        if method in api.PYTHON_ESCAPE_METHODS or method in api.NUMPY_ESCAPE_METHODS:
            return f"converts a tensor to a Python value (`.{method}()`)"
        if (method.endswith("_") and not method.startswith("_")) or method in _SIDE_EFFECT_METHODS:
            return f"calls the in-place `.{method}()`"
        if method in _MUTATORS:
            return f"mutates `{expr_text(func.value)}` in place (`.{method}()`)"
        if isinstance(func.value, ir.Name) and func.value.id == "self":
            if types.get(f"self.{method}") in _CALLABLE_TYPES or types.get(f"self.{method}") == PURE_METHOD:
                return None  # a submodule, or a helper that only computes its result
            return f"calls `self.{method}()`, which untrace does not check for side effects"
        if method in api.TENSOR_METHODS:
            return None
        return f"calls `{text}()`, which untrace cannot prove free of side effects"
    if isinstance(func, ir.Name) and types.get(func.id) in _CALLABLE_TYPES:
        return None
    if (isinstance(func, ir.Subscript) and isinstance(func.value, ir.Attribute) and isinstance(func.value.value, ir.Name)
            and func.value.value.id == "self" and types.get(f"self.{func.value.attr}") == "modules"):
        return None  # a submodule of a ModuleList (`self.layers[i](x)`), as `self.fc(x)` is
    return f"calls `{text}()`, which untrace cannot prove free of side effects"
