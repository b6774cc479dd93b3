"""A configuration flag that is the module's training mode is False in an export:

    class EncoderLayer(nn.Module):
        def __init__(self, config: OneFormerConfig):       # is_training: bool = False
            self.is_training = config.is_training
        def forward(self, h):
            h = F.dropout(h, p=self.dropout, training=self.is_training)
            if self.is_training:
                ...                                          # training-only code

`self.is_training` is read as a training mode by the class itself (it is the `training`
argument of a call: dropout runs exactly when it is true), and a model built for
inference leaves it at its default False: what `if self.is_training:` guards is
training-only code, as under `if self.training:` (reported by UT106). A flag is taken for
one only when all of this holds: it is written once, in the class's own `__init__`, at
its top level, straight from a parameter defaulting to False or from a field of a
parameter annotated with a configuration class that declares the field `= False` (in
its body or a base's); and some method of the class passes `self.<flag>` as a
`training=` keyword. A name alone (`self.train_mode`) decides nothing."""

from __future__ import annotations

from analyzer.analyses.engine.memo import memoized
from analyzer.analyses.project.index import ClassKey
from analyzer.analyses.ranges.submodule_sizes import (
    annotated_class,
    canonical_field,
    field_of_parameter,
    own_init,
    single_write,
)
from analyzer.frontend import ir


def is_training_flag(analyzer, self_value, attr: str) -> bool:
    """Whether `self.<attr>` of the module ``self_value`` is a training mode defaulting to False."""
    key = getattr(self_value, "ref", None)
    if getattr(self_value, "type", None) != "module" or not isinstance(key, ClassKey):
        return False
    return bool(memoized(analyzer, analyzer.training_flags, (key, attr),
                         lambda: _passed_as_training(analyzer, key, attr) and _defaults_to_false(analyzer, key, attr)))


def _passed_as_training(analyzer, key: ClassKey, attr: str) -> bool:
    """Some method of the class calls something with `training=self.<attr>`."""
    module = analyzer.module_ir(key.path)
    if module is None or not any(f"training{eq}self.{attr}" in module.source for eq in ("=", " = ")):
        return False  # a look at the text first: the question is asked of every `if self.<flag>:`
    info = analyzer.class_info(key)
    if info is None:
        return False
    for method in info.node.methods().values():
        for stmt in ir.walk_statements(method.body, into_defs=True):
            for root in ir.child_expressions(stmt):
                for node in ir.walk_expression(root):
                    if isinstance(node, ir.Call) and any(
                            a.keyword == "training" and _is_self_attribute(a.value, attr) for a in node.args):
                        return True
    return False


def _defaults_to_false(analyzer, key: ClassKey, attr: str) -> bool:
    init = own_init(analyzer, key)
    value = single_write(analyzer, key, attr) if init is not None else None
    source = field_of_parameter(init, value) if value is not None else None
    if source is None:
        return False
    param, field = source
    if not field:
        return any(p.name == param and _is_false(p.default) for p in init.params)
    config = annotated_class(analyzer, key, init, param)
    if config is None or "." in field:
        return False
    field = canonical_field(analyzer, config, field)
    for info in analyzer.mro(config):
        declared = [s for s in info.node.body if isinstance(s, ir.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ir.Name) and s.targets[0].id == field]
        if declared:
            return len(declared) == 1 and _is_false(declared[0].value)
    return False


def _is_false(e) -> bool:
    return isinstance(e, ir.Const) and e.value is False


def _is_self_attribute(e, attr: str) -> bool:
    return isinstance(e, ir.Attribute) and e.attr == attr and isinstance(e.value, ir.Name) and e.value.id == "self"
