"""Does a freshly built module compute differently because of its *own* training flag?

`Cls(...)` is in training mode, and so is every submodule its `__init__` builds, but a
module handed to the constructor keeps the mode it had: `nn.Module.__init__` sets
`self.training = True` on the new module only, and only `.train()` / `.eval()` walk the
children. A wrapper (`Exportable(model)`) that builds no submodule of its own and never
reads its flag exports the same graph in either mode; UT401 then has nothing to report.

Requires: a `KindAnalyzer` (the class's bases and `__init__` attribute table). Computes,
for a project class, whether its own flag may matter: True unless every base is a
project class or `torch.nn.Module`, no attribute `__init__` sets may be a module (a
submodule built there trains with it; an unresolved value might be one), and no method
of the class reads `training` or calls `train` / `eval`.
"""

from __future__ import annotations

from analyzer.analyses.project.index import ClassKey
from analyzer.frontend import ir

_PLAIN_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_MODE_ATTRIBUTES = frozenset({"training", "train", "eval"})


def own_mode_matters(analyzer, key: ClassKey) -> bool:
    infos = list(analyzer.mro(key))
    if not infos:
        return True
    for info in infos:
        for base in info.bases:
            if not (base.type == "class" and isinstance(base.ref, ClassKey)) and base.ref not in _PLAIN_BASES:
                return True  # an nn container, a framework base, an unresolved base: it may hold children
        if any(_reads_mode(method) for method in info.node.methods().values()):
            return True
    return any(_may_be_module(value) for value in analyzer.attributes(key).values())


def _may_be_module(value) -> bool:
    if value.type in ("module", "modules", "unknown"):
        return True
    return value.type == "container" and value.elem is not None and _may_be_module(value.elem)


def _reads_mode(fn: ir.FunctionDef) -> bool:
    for stmt in ir.walk_statements(fn.body, into_defs=True):
        for root in ir.child_expressions(stmt):
            for node in ir.walk_expression(root):
                if isinstance(node, ir.Attribute) and node.attr in _MODE_ATTRIBUTES:
                    return True
    return False
