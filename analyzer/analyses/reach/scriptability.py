"""Would `torch.jit.script` accept a module class? A syntactic check of everything
scripting compiles with it, so that "script it" is proposed only when it can work.

Requires: a `KindAnalyzer` (for the project's classes, their `__init__` attributes and
module-level helpers). Computes, for a class: None when no construct TorchScript rejects
was found, else the first one met, as ``(construct, path, line)``.

What is compiled (as `torch.jit.script(module)` does): the class's `forward` (own or
inherited), every method and module-level helper it calls, transitively, and the
`forward` of every submodule assigned in `__init__` whose class is in the scanned tree
(`torch.nn` modules script as they are). Methods marked `@torch.jit.ignore` /
`@torch.jit.unused` are not compiled.

Every construct below was checked against `torch.jit.script` (torch 2.13; see
`tests/analyzer/test_scriptability.py`, which scripts each one). A construct not listed
is not claimed either way: the check can miss a rejection (type errors, unsupported
library calls), never invent one.
"""

from __future__ import annotations

from analyzer.analyses.kinds.values import UNKNOWN, Value
from analyzer.analyses.project.index import ClassKey, FunctionKey
from analyzer.frontend import expr_text, ir
from analyzer.frontend.printer import dotted_head

Rejection = tuple[str, str, int]  # (construct, path, line)

_NOT_COMPILED = ("torch.jit.ignore", "torch.jit.unused", "jit.ignore", "jit.unused")
MAX_FUNCTIONS = 200  # a bound on the walk for huge class graphs; past it: no answer


def first_rejection(analyzer, key: ClassKey) -> Rejection | None:
    return _Walk(analyzer).run(key)


class _Walk:
    def __init__(self, analyzer):
        self.analyzer = analyzer
        self.seen_functions: set = set()
        self.seen_classes: set[ClassKey] = set()
        self.todo: list[tuple] = []  # (FunctionDef, module, ClassKey | None)

    def run(self, key: ClassKey) -> Rejection | None:
        self.add_class(key)
        while self.todo:
            if len(self.seen_functions) > MAX_FUNCTIONS:
                return None
            fn, module, owner = self.todo.pop(0)
            found = self.function(fn, module, owner)
            if found is not None:
                return found
        return None

    # ------------------------------------------------------------------ what is compiled

    def add_class(self, key: ClassKey) -> None:
        if key in self.seen_classes:
            return
        self.seen_classes.add(key)
        info, forward = self.analyzer.find_method(key, "forward")
        if forward is not None:
            self.add_function(forward, info.key, key)
        for value in self.analyzer.attributes(key).values():
            for sub in _module_classes(value):
                self.add_class(sub)

    def add_function(self, fn: ir.FunctionDef, defined_in: ClassKey | str, owner: ClassKey | None) -> None:
        if id(fn) in self.seen_functions:
            return
        if any(expr_text(d) in _NOT_COMPILED for d in fn.decorators):
            return
        self.seen_functions.add(id(fn))
        path = defined_in.path if isinstance(defined_in, ClassKey) else defined_in
        module = self.analyzer.module_ir(path)
        if module is not None:
            self.todo.append((fn, module, owner))

    def callee(self, call: ir.Call, module: ir.Module, owner: ClassKey | None) -> None:
        """Queue the method or helper a call compiles along."""
        func = call.func
        if isinstance(func, ir.Attribute) and isinstance(func.value, ir.Name) and func.value.id == "self" and owner:
            info, method = self.analyzer.find_method(owner, func.attr)
            if method is not None:
                self.add_function(method, info.key, owner)
            return
        if isinstance(func, ir.Name):
            value = self.analyzer.resolve(self.analyzer.global_value(module, func.id) or UNKNOWN)
            if value.type == "function" and isinstance(value.ref, FunctionKey) and "." not in value.ref.qualname:
                helper_module = self.analyzer.module_ir(value.ref.path)
                fn = helper_module.functions().get(value.ref.qualname) if helper_module is not None else None
                if fn is not None:
                    self.add_function(fn, value.ref.path, None)

    # ------------------------------------------------------------------ one function

    def function(self, fn: ir.FunctionDef, module: ir.Module, owner: ClassKey | None) -> Rejection | None:
        def at(what: str, node) -> Rejection:
            return (what, module.path, node.span.line)

        if fn.is_async:
            return at("async def", fn)
        for p in fn.params:
            if p.kind == "vararg":
                return at(f"*{p.name}", p if p.span.line else fn)
            if p.kind == "kwarg":
                return at(f"**{p.name}", p if p.span.line else fn)
            if p.kind == "kwonly" and p.default is not None:
                return at(f"keyword-only argument `{p.name}` with a default", p if p.span.line else fn)
            if (p.annotation is None and p.default is not None and p.name != "self"
                    and not (isinstance(p.default, ir.Const) and p.default.value is None)):
                # Un-annotated arguments are Tensors to TorchScript: `k=2` is a type error.
                return at(f"un-annotated non-tensor argument `{p.name}={expr_text(p.default)}`",
                          p if p.span.line else fn)
        for stmt in ir.walk_statements(fn.body):
            found = self.statement(stmt, module, owner, at)
            if found is not None:
                return found
        return None

    def statement(self, stmt, module, owner, at) -> Rejection | None:
        if isinstance(stmt, ir.Try):
            return at("try/except", stmt)
        if isinstance(stmt, ir.Loop) and stmt.orelse:
            return at(f"{stmt.kind}/else", stmt)
        if isinstance(stmt, ir.FunctionDef):
            return at("nested function definition", stmt)
        if isinstance(stmt, ir.ClassDef):
            return at("class definition", stmt)
        if isinstance(stmt, (ir.Global, ir.Nonlocal)):
            return at("global statement" if isinstance(stmt, ir.Global) else "nonlocal statement", stmt)
        if isinstance(stmt, ir.Import):
            return at("import statement", stmt)
        if isinstance(stmt, ir.Match):
            return at("match statement", stmt)
        if isinstance(stmt, ir.Assign):
            for target in stmt.targets:
                if any(isinstance(n, ir.Starred) for n in ir.walk_expression(target)):
                    return at("starred assignment target", stmt)
        for root in ir.child_expressions(stmt):
            for node in ir.walk_expression(root):
                found = self.expression(node, module, owner, at)
                if found is not None:
                    return found
                if isinstance(node, ir.Call):
                    self.callee(node, module, owner)
        return None

    def expression(self, node, module, owner, at) -> Rejection | None:
        if isinstance(node, ir.Lambda):
            return at("lambda", node)
        if isinstance(node, ir.Comprehension):
            if node.kind == "generator":
                return at("generator expression", node)
            if node.kind == "set":
                return at("set comprehension", node)
            if any(g.ifs for g in node.generators):
                return at("comprehension filter (`if` inside a comprehension)", node)
        if isinstance(node, ir.Set):
            return at("set literal", node)
        if isinstance(node, ir.NamedExpr):
            return at("assignment expression (`:=`)", node)
        if isinstance(node, ir.OpaqueExpr) and node.reason == "yield":
            return at("yield", node)
        if (isinstance(node, ir.Subscript) and owner is not None and isinstance(node.value, ir.Attribute)
                and isinstance(node.value.value, ir.Name) and node.value.value.id == "self"
                and self.analyzer.attributes(owner).get(node.value.attr, UNKNOWN).type == "modules"
                and not _literal_index(node.index)):
            return at(f"`self.{node.value.attr}[...]` indexes a module list with a variable", node)
        if isinstance(node, ir.Dict) and any(k is None for k, _ in node.items):
            return at("dict expansion (`{**d}`)", node)
        if isinstance(node, ir.Call):
            if any(a.star == "**" for a in node.args):
                return at("keyword-argument expansion (`**`)", node)
            func = node.func
            if _is_name(func, "getattr") and len(node.args) >= 2 and not (
                    isinstance(node.args[1].value, ir.Const) and isinstance(node.args[1].value.value, str)):
                return at("getattr with a computed name", node)
            if isinstance(func, ir.Attribute) and isinstance(func.value, ir.Call) and _is_name(func.value.func, "super"):
                return at("super() call", node)
            # The name the callee's text starts with, if it is one: written out only for a
            # finding (a chain of calls would be written out at each of its calls).
            head = func.id if isinstance(func, ir.Name) else dotted_head(func)
            value = self.analyzer.global_value(module, head) if head else None
            if value is not None and value.type == "ext" and str(value.ref).split(".")[0] == "numpy":
                return at(f"NumPy call (`{expr_text(func)}`)", node)
        return None


def _literal_index(index) -> bool:
    """An integer literal (`[0]`, `[-1]`) or a slice of them: TorchScript accepts those."""
    if isinstance(index, ir.UnaryOp) and index.op == "-":
        index = index.operand
    if isinstance(index, ir.Slice):
        return all(part is None or _literal_index(part) for part in (index.lower, index.upper, index.step))
    return isinstance(index, ir.Const) and isinstance(index.value, int)


def _module_classes(value: Value) -> list[ClassKey]:
    if value.type == "module" and isinstance(value.ref, ClassKey):
        return [value.ref]
    out = []
    for elem in (value.elems or ()) + ((value.elem,) if value.elem is not None else ()):
        if isinstance(elem, Value):
            out.extend(_module_classes(elem))
    return out


def _is_name(e, name: str) -> bool:
    return isinstance(e, ir.Name) and e.id == name
