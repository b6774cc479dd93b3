"""A flag parameter of `forward` that no call in the tree sets is its default: in

    class EsmFoldTriangleMultiplicativeUpdate(nn.Module):
        def forward(self, z, mask=None, inplace_safe: bool = False):
            if inplace_safe:
                return self._inference_forward(z, mask)   # writes into z in place
            ...

    self.tri_mul_out = EsmFoldTriangleMultiplicativeUpdate(config, _outgoing=True)
    pairwise_state = pairwise_state + self.tri_mul_out(pairwise_state, mask=tri_mask)

`inplace_safe` is False in every run of the model the tree builds: every construction of
the class binds it to an attribute, and every call through that attribute leaves the
parameter unset (`analyzer.forward_call_sites`, asked of the project so that a cached
result depends on the answer). A call that passes it, a module handed on as a value, or
a class the tree never builds (its user calls it directly) keeps both sides, and so does
a class or base calling `self(...)` / `self.forward(...)`. Only a `True`/`False` default
that picks a call on `self` (a method, a submodule) or an in-place tensor method is decided: the question reads the tree's files, so it is asked only where it
matters. (A call from another function that leaves it unset binds the default there:
`calls.bind_arguments`.)"""

from __future__ import annotations

from analyzer.analyses.kinds.values import Value, default_value
from analyzer.analyses.project.constructor_flags import guards, inplace_call
from analyzer.frontend import ir


def entry_default(analyzer, frame, p: ir.Param) -> Value | None:
    """What forward's parameter ``p`` holds at the entry of the class's own forward when
    no call in the tree sets it (a known flag, `values.default_value`), else None."""
    key = frame.class_key
    if not (isinstance(p.default, ir.Const) and type(p.default.value) is bool) or key is None:
        return None
    if frame.fn.name != "forward" or p.kind not in ("positional", "posonly", "kwonly"):
        return None
    if not guards([frame.fn], lambda test: _tests(test, p.name), _picked):
        return None
    if any(_calls_itself(method) for info in analyzer.mro(key) for method in info.node.methods().values()):
        return None  # `self.forward(x, inplace_safe=True)` in the class or a base of it
    positional = [q for q in frame.fn.params if q.kind in ("positional", "posonly")][1:]
    position = positional.index(p) if p in positional else 1 << 20
    if not analyzer.project.keeps_forward_default(key.name, p.name, position):
        return None
    return default_value(p.default)


def _calls_itself(fn: ir.FunctionDef) -> bool:
    """Whether ``fn`` calls `self(...)` or `self.forward(...)`."""
    for s in ir.walk_statements(fn.body, into_defs=True):
        for e in ir.child_expressions(s):
            for x in ir.walk_expression(e):
                callee = x.func if isinstance(x, ir.Call) else None
                if isinstance(callee, ir.Attribute) and callee.attr == "forward":
                    callee = callee.value
                if isinstance(callee, ir.Name) and callee.id == "self":
                    return True
    return False


def _tests(test, name: str) -> bool:
    if isinstance(test, ir.UnaryOp) and test.op == "not":
        test = test.operand
    return isinstance(test, ir.Name) and test.id == name


def _picked(x) -> bool:
    """A call on `self` (`self._inference_forward(z)`, `self.lin(z)`) or an in-place method."""
    return inplace_call(x) or (isinstance(x, ir.Call) and isinstance(x.func, ir.Attribute)
                               and isinstance(x.func.value, ir.Name) and x.func.value.id == "self")
