"""The name a fix writes for the torch module at the place it edits.

``torch_name(point, parents, line_of, module) -> TorchName``: the name that is the torch
module where ``point`` (the node an edit replaces) is evaluated, and that a fix therefore
spells ``torch.where`` / ``torch.cond`` / ``torch._check`` / ``torch.logical_and`` with;
or, when no name is, why not. Every fix that writes ``torch.`` asks here.

Why: ``torch.where(...)`` is right only where ``torch`` is the module. A parameter, a
local, a loop or comprehension variable named ``torch``, a ``global torch`` that a
function rebinds, or ``import numpy as torch`` make it something else, and after
``import torch as th`` the name ``torch`` is not bound at all (``th.where`` is).

Python's rules for a name read in a function (the language reference, "Resolution of
names"): it is local to the innermost function (``def``, ``lambda``, comprehension)
that binds it anywhere in its body -- a parameter, an assignment, annotation, ``for``,
``with``, ``except`` or ``match`` target, an import, a ``def``/``class``, ``del``, a
``:=`` (which binds in the function around a comprehension) -- unless that function
declares it ``global`` (the module's) or ``nonlocal`` (the next function's). Otherwise
it is looked up in the enclosing functions, then the module; class bodies are skipped.
A comprehension's first iterable, and a function's defaults and decorators, are
evaluated in the scope around it.

A name is the torch module at ``point`` when the scope it resolves to binds it only by
``import torch``, ``import torch.sub`` (which binds ``torch``) or ``import torch as
name``, and, in a function, one of those imports comes before ``point``. At module
level an import under ``if TYPE_CHECKING:`` binds nothing when the code runs, and a
``global name`` in any function may rebind it. Candidates are ``torch`` first, then every
other name bound by such an import, innermost scope first; the first one that resolves
is used. A star import is not followed: what it binds is in another file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import libcst as cst

from analyzer.frontend.positions import dotted_name

MODULE = "torch"
NOT_IMPORTED = f"`{MODULE}` is not imported in this module"

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True)
class Binding:
    """One way a scope binds a name. ``torch``: to the torch module (an import).
    ``what``: how, for messages, with ``{where}`` for the scope ("a parameter of {where}")."""

    what: str
    torch: bool = False
    node: cst.CSTNode | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TorchName:
    """``name``: what the fix writes for the torch module; None when no name in scope is
    the module, and then ``why_not`` says why (a phrase UT101 quotes after "not rewritten
    automatically:")."""

    name: str | None
    why_not: str = ""


@dataclass
class _Scope:
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    def torch_names(self) -> list[str]:
        return [name for name, bindings in self.bindings.items() if any(b.torch for b in bindings)]


class ModuleTorch:
    """What a module's own scope binds, for `torch_name`: computed once per file from
    its top-level statements (function bodies are not read) and the ``global``
    declarations of its functions (``globals_declared``: name -> a line declaring it).
    It also keeps the scopes of the functions `torch_name` has looked into."""

    def __init__(self, tree: cst.Module, globals_declared: Mapping[str, int]):
        self.scope = _Scope()
        for statement in tree.body:
            _collect(statement, self.scope, module_level=True)
        self.globals_declared = dict(globals_declared)
        self._scopes: dict[int, tuple[cst.CSTNode, _Scope]] = {}  # id(node) -> (node, its scope)

    def scope_of(self, node: cst.CSTNode) -> _Scope:
        held = self._scopes.get(id(node))
        if held is None or held[0] is not node:
            held = self._scopes[id(node)] = (node, _own_scope(node))
        return held[1]

    def why_not(self, name: str) -> str | None:
        """Why ``name`` at module level is not the torch module, or None when it is."""
        bindings = self.scope.bindings.get(name)
        if not bindings:
            return NOT_IMPORTED if name == MODULE else f"`{name}` is not bound in this module"
        other = next((b for b in bindings if not b.torch), None)
        if other is not None:
            besides = " as well as the torch module" if any(b.torch for b in bindings) else ", not the torch module"
            return f"`{name}` is {other.what.format(where='the module')}{besides}"
        line = self.globals_declared.get(name)
        if line is not None:
            return f"a function declares `global {name}` (line {line}) and may rebind it"
        return None


def globals_in_tree(tree: cst.Module, line_of: Callable[[cst.CSTNode], int | None]) -> dict[str, int]:
    """name -> the first line of a ``global name`` anywhere in a fully parsed ``tree``."""
    found: dict[str, int] = {}

    class _Globals(cst.CSTVisitor):
        def visit_Global(self, node: cst.Global) -> None:
            for item in node.names:
                found.setdefault(item.name.value, line_of(node) or 0)

    tree.visit(_Globals())
    return found


def torch_name(
    point: cst.CSTNode,
    parents: Mapping[cst.CSTNode, cst.CSTNode],
    line_of: Callable[[cst.CSTNode], int | None],
    module: ModuleTorch,
) -> TorchName:
    """The name to write for the torch module at ``point``. ``parents`` maps a node to its
    parent up to (at least) the outermost function holding ``point``; ``line_of`` gives a
    node's first line (None when unknown)."""
    scopes = [(node, module.scope_of(node)) for node in _enclosing_scopes(point, parents)]
    candidates = [MODULE]
    for _, scope in scopes:
        candidates += scope.torch_names()
    candidates += module.scope.torch_names()
    candidates = list(dict.fromkeys(candidates))
    point_line = line_of(point)
    reasons = {}
    for name in candidates:
        why = _why_not(name, scopes, module, point_line, line_of)
        if why is None:
            return TorchName(name)
        reasons[name] = why
    why = reasons[MODULE]
    others = [n for n in candidates if n != MODULE]
    if others:
        why += "; " + "; ".join(reasons[n] for n in others)
    elif why != NOT_IMPORTED:
        why += ", and no other name here is: add `import torch as th` for a fix"
    return TorchName(None, why)


def _why_not(name, scopes, module: ModuleTorch, point_line, line_of) -> str | None:
    """Why ``name`` is not the torch module at the point, or None when it is."""
    outward = False  # `nonlocal`: bound by an enclosing function
    for node, scope in scopes:
        if name in scope.globals:
            break
        if name in scope.nonlocals:
            outward = True
            continue
        bindings = scope.bindings.get(name)
        if not bindings or (outward and not isinstance(node, (cst.FunctionDef, cst.Lambda))):
            continue
        where = _scope_name(node)
        other = next((b for b in bindings if not b.torch), None)
        if other is not None:
            return f"`{name}` here is {other.what.format(where=where)}, not the torch module"
        lines = [line for line in (line_of(b.node) for b in bindings if b.node is not None) if line is not None]
        if point_line is None or not lines or min(lines) >= point_line:
            return f"`{name}` is imported in {where} only after this line"
        return None
    return module.why_not(name)


def _scope_name(node) -> str:
    if isinstance(node, cst.FunctionDef):
        return f"`{node.name.value}`"
    if isinstance(node, cst.Lambda):
        return "the `lambda`"
    if isinstance(node, cst.ClassDef):
        return f"the body of class `{node.name.value}`"
    return "the comprehension"


def _enclosing_scopes(point, parents) -> list[cst.CSTNode]:
    """The function, lambda, comprehension and class scopes ``point`` is evaluated in,
    innermost first (a class body only when ``point`` is directly in it)."""
    out = []
    path = [point]
    node = point
    while node in parents:
        parent = parents[node]
        if _evaluated_inside(parent, path) and (not isinstance(parent, cst.ClassDef) or not out):
            out.append(parent)
        path.append(parent)
        node = parent
    return out


def _evaluated_inside(scope, path: list) -> bool:
    """Whether the node at the end of ``path`` (the child of ``scope`` on the way up
    from the point) is evaluated in ``scope``'s own namespace."""
    child = path[-1]
    if isinstance(scope, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return child is scope.body
    if isinstance(scope, _COMPREHENSIONS):
        # the first iterable is evaluated outside: `[... for a in <here>]`
        return not (child is scope.for_in and len(path) >= 2 and path[-2] is scope.for_in.iter)
    return False


def _own_scope(node) -> _Scope:
    """The names a function, lambda, comprehension or class body binds."""
    scope = _Scope()
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.bind(param.name.value, Binding("a parameter of {where}", node=param))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bind(star.name.value, Binding("a parameter of {where}", node=star))
        _collect(node.body, scope, walrus_only=isinstance(node, cst.Lambda))
    elif isinstance(node, cst.ClassDef):
        _collect(node.body, scope)
    else:  # a comprehension: its targets (a `:=` in it binds in the function around it)
        comp = node.for_in
        while comp is not None:
            for name in _target_names(comp.target):
                scope.bind(name, Binding("a variable of {where}", node=comp))
            comp = comp.inner_for_in
    return scope


def _collect(node, scope: _Scope, *, module_level: bool = False, walrus_only: bool = False) -> None:
    """Add what ``node`` binds in ``scope``, not descending into nested scopes, except
    for the `:=` of a comprehension (``walrus_only``), which binds in ``scope``."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        if not walrus_only:
            kind = "a function" if isinstance(node, cst.FunctionDef) else "a class"
            scope.bind(node.name.value, Binding(kind + " defined in {where}", node=node))
        return
    if isinstance(node, cst.Lambda):
        return
    if isinstance(node, cst.NamedExpr):
        for name in _target_names(node.target):
            scope.bind(name, Binding("assigned with `:=` in {where}", node=node))
    if walrus_only or isinstance(node, _COMPREHENSIONS):
        for child in node.children:
            _collect(child, scope, module_level=module_level, walrus_only=True)
        return
    if isinstance(node, cst.If) and module_level and "TYPE_CHECKING" in (dotted_name(node.test) or ""):
        # imported for annotations only: nothing is bound when the module runs
        if node.orelse is not None:
            _collect(node.orelse, scope, module_level=True)
        return
    if isinstance(node, (cst.Import, cst.ImportFrom)):
        _imports(node, scope)
        return
    if isinstance(node, cst.Global):
        scope.globals |= {item.name.value for item in node.names}
        return
    if isinstance(node, cst.Nonlocal):
        scope.nonlocals |= {item.name.value for item in node.names}
        return
    for target, what in _targets(node):
        for name in _target_names(target):
            scope.bind(name, Binding(what, node=node))
    for child in node.children:
        _collect(child, scope, module_level=module_level)


def _targets(node) -> list[tuple[cst.CSTNode, str]]:
    """The targets a statement or clause binds, each with how (for messages)."""
    if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)):
        return [(node.target, "a variable of {where}")]
    if isinstance(node, cst.For):
        return [(node.target, "a loop variable of {where}")]
    if isinstance(node, cst.WithItem) and node.asname is not None:
        return [(node.asname.name, "a `with` target in {where}")]
    if isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler)) and node.name is not None:
        return [(node.name.name, "an exception name in {where}")]
    if isinstance(node, cst.Del):
        return [(node.target, "deleted with `del` in {where}")]
    if isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
        return [(node.name, "a `match` capture in {where}")]
    if isinstance(node, cst.MatchMapping) and node.rest is not None:
        return [(node.rest, "a `match` capture in {where}")]
    return []


def _imports(node, scope: _Scope) -> None:
    if isinstance(node, cst.ImportFrom):
        if isinstance(node.names, cst.ImportStar):
            return  # binds what another file exports: not followed
        source = "." * len(node.relative) + (dotted_name(node.module) or "")
        for alias in node.names:
            name = alias.asname.name.value if alias.asname else alias.name.value
            what = f"bound by `from {source} import {dotted_name(alias.name)}` in {{where}}"
            scope.bind(name, Binding(what, node=node))
        return
    for alias in node.names:
        imported = dotted_name(alias.name) or ""
        if alias.asname is not None:
            name = alias.asname.name.value
            what = f"bound by `import {imported} as {name}` in {{where}}"
            scope.bind(name, Binding(what, torch=imported == MODULE, node=node))
        else:
            name = imported.split(".")[0]  # `import torch.nn` binds `torch`, the package
            scope.bind(name, Binding(f"bound by `import {imported}` in {{where}}", torch=name == MODULE, node=node))


def _target_names(target) -> Iterable[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, (cst.StarredElement, cst.Element)):
        yield from _target_names(target.value)
