"""A constructor flag that no construction in the tree sets is its default: in

    class LayerScale(nn.Module):
        def __init__(self, dim, init_values=1e-5, inplace=False):
            self.inplace = inplace
        def forward(self, x):
            return x.mul_(self.gamma) if self.inplace else x * self.gamma

`self.inplace` is False in every module of the tree when every construction of
`LayerScale` the tree holds leaves `inplace` unset (`analyzer.construction_sites`, asked
of the project so that a cached result depends on the answer): the in-place side is
never run. Only a flag that picks an in-place write (the question reads the tree's files, so it
is asked only where it matters), bound once, in the class's own `__init__`, straight
from a parameter with a constant default, and never assigned elsewhere in the class, is
decided."""

from __future__ import annotations

from analyzer.analyses.engine.memo import memoized
from analyzer.analyses.kinds import torch_api as api
from analyzer.frontend import ir


def constant_flag(analyzer, self_value, attr: str) -> bool | None:
    """The truth of `self.<attr>` when it is a constructor flag the tree never sets, else None."""
    key = getattr(self_value, "ref", None)
    if getattr(self_value, "type", None) != "module" or not hasattr(key, "name"):
        return None
    return memoized(analyzer, analyzer.constant_flags, (key, attr), lambda: _decide(analyzer, key, attr))


def _decide(analyzer, key, attr: str) -> bool | None:
    owner, init = analyzer.find_method(key, "__init__")
    if init is None or owner.key != key:
        return None  # built through a base's constructor: its sites are not this class's
    positional = [p for p in init.params if p.kind in ("positional", "posonly")][1:]
    params = {p.name: p for p in init.params}
    bound = [s for s in init.body if _assigns(s, attr)]
    if len(bound) != 1 or not isinstance(bound[0].value, ir.Name) or bound[0].value.id not in params:
        return None
    param = params[bound[0].value.id]
    if not (isinstance(param.default, ir.Const) and (param.default.value is None or isinstance(param.default.value, bool))):
        return None
    cls = analyzer.module_ir(key.path).classes().get(key.name)
    writes = [s for m in cls.methods().values() for s in ir.walk_statements(m.body, into_defs=True) if _assigns(s, attr)]
    if len(writes) != 1:
        return None
    if not _guards_inplace_write(cls, attr):
        return None  # asked only where it matters: the question reads the tree's files
    position = positional.index(param) if param in positional else 1 << 20
    if not analyzer.project.keeps_default(key.name, param.name, position):
        return None
    return bool(param.default.value)


def _assigns(s, attr: str) -> bool:
    targets = s.targets if isinstance(s, ir.Assign) else [s.target] if isinstance(s, ir.AugAssign) else []
    return any(isinstance(t, ir.Attribute) and t.attr == attr and isinstance(t.value, ir.Name) and t.value.id == "self"
               for t in targets)


def _guards_inplace_write(cls: ir.ClassDef, attr: str) -> bool:
    """Whether a test of `self.<attr>` in the class picks an in-place tensor method
    (`x.mul_(g) if self.inplace else x * g`, or an `if` around one)."""
    def is_flag(test) -> bool:
        return any(isinstance(x, ir.Attribute) and x.attr == attr and isinstance(x.value, ir.Name)
                   and x.value.id == "self" for x in ir.walk_expression(test))

    return guards(cls.methods().values(), is_flag, inplace_call)


def inplace_call(x) -> bool:
    """An in-place tensor method call (`x.mul_(g)`)."""
    return isinstance(x, ir.Call) and isinstance(x.func, ir.Attribute) and api.is_inplace_method(x.func.attr)


def guards(functions, is_flag, picked) -> bool:
    """Whether a test that ``is_flag`` (an `if` or a conditional expression in one of
    ``functions``) picks an expression that is ``picked``."""
    def picks(exprs) -> bool:
        return any(picked(x) for e in exprs for x in ir.walk_expression(e))

    for m in functions:
        for s in ir.walk_statements(m.body):
            if isinstance(s, ir.If) and is_flag(s.test) and picks(
                    e for st in ir.walk_statements(s.body + s.orelse) for e in ir.child_expressions(st)):
                return True
            for e in ir.child_expressions(s):
                for x in ir.walk_expression(e):
                    if isinstance(x, ir.IfExp) and is_flag(x.test) and picks([x.body, x.orelse]):
                        return True
    return False
