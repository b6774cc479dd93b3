"""Sizes (`index_bounds`) a module writes as configuration fields, named as the attribute
of the class read from the same field.

A router often sizes its tensors from its configuration directly,

    def __init__(self, config):
        self.num_experts = config.num_experts
        self.bias = nn.Buffer(torch.zeros(config.num_experts))          # axis 0: self.num_experts
        self.gate = nn.Linear(config.hidden_size, config.num_experts)   # last axis of its output

while sizes are the text of attribute chains of `self` (a forward does not rebind them).
`config.num_experts`, read in the class's own `__init__` from one of its parameters that
`__init__` neither rebinds nor writes to, is the number `self.num_experts` holds when that
attribute is written once, at the top of that `__init__`, from the same field
(`submodule_sizes.attribute_reading`; `attribute_map` aliases count as the field).

Sizes are taken from: the first size of a tensor factory built in that `__init__`, and
the `out_features` of an `nn.Linear` built there as `self.<attr>`, which is the size of
the last axis of what calling `self.<attr>` returns. A field (or parameter) no attribute
reads is named by its symbol (`symbolic_sizes`: `nn.Linear(h, config.num_experts)` and
`nn.Linear(h, num_experts)` of a parameter). Anything else stays unknown."""

from __future__ import annotations

from analyzer.analyses.ranges.axis_sizes import FACTORIES, argument, fixed_size, size_arguments
from analyzer.analyses.ranges.submodule_sizes import attribute_reading, own_init, renamed, same_class, single_write
from analyzer.analyses.ranges.symbolic_sizes import of_init_expression
from analyzer.frontend import expr_text, ir

_LINEAR_MODULES = ("torch.nn.Linear", "torch.nn.modules.linear.Linear")


def call_bound(analyzer, frame, func, node) -> tuple | None:
    """The `("axis", ...)` bound of the tensor the call ``node`` returns, ``func`` the
    value it calls, when one of the sizes above decides it; None otherwise."""
    factory = func.type == "ext" and func.ref in FACTORIES and frame is not None and frame.fn.name == "__init__"
    if not (factory or func.type == "module" and func.ref in _LINEAR_MODULES) or not isinstance(node, ir.Call):
        return None
    key = _instance_class(analyzer, frame)
    if key is None:
        return None
    if factory:
        sizes = size_arguments(node)
        size = _size(analyzer, key, frame.fn, sizes[0]) if sizes else None
        return ("axis", 0, len(sizes), size) if size is not None else None
    size = _linear_width(analyzer, key, node.func)
    return ("axis", -1, None, size) if size is not None else None


def _instance_class(analyzer, frame):
    """The class of `self` in the frame, when the frame's function belongs to it (or to
    the class it only renames): a subclass's `__init__` may rebind what the base's wrote."""
    if frame is None or frame.class_key is None or frame.self_value is None:
        return None
    instance = frame.self_value.ref if frame.self_value.type == "module" else None
    if not isinstance(instance, type(frame.class_key)) or not same_class(renamed(analyzer, instance), frame.class_key):
        return None
    return frame.class_key


def _linear_width(analyzer, key, accessor) -> str | None:
    """The `out_features` of `self.<attr>`, written once in the class's own `__init__` as
    `nn.Linear(in, out, ...)`."""
    if not (isinstance(accessor, ir.Attribute) and isinstance(accessor.value, ir.Name) and accessor.value.id == "self"):
        return None
    key = renamed(analyzer, key)
    init = own_init(analyzer, key)
    # The layer as its `__init__` builds it (`self.gate = nn.Linear(h, n)`, not by a
    # helper whose arguments are not the layer's), with a width that can be a size: looked
    # at before the class's other writes, as most layers' widths are local names.
    built = next((s.value for s in init.body if isinstance(s, ir.Assign) and len(s.targets) == 1
                  and isinstance(s.targets[0], ir.Attribute) and s.targets[0].attr == accessor.attr
                  and isinstance(s.value, ir.Call)), None) if init is not None else None
    if built is None or any(a.star for a in built.args) or expr_text(built.func).rsplit(".", 1)[-1] != "Linear":
        return None
    out = argument(built, 1, "out_features")
    if out is None or not (fixed_size(out) or isinstance(out, (ir.Attribute, ir.Name))) or single_write(analyzer, key, accessor.attr) is not built:
        return None
    return _size(analyzer, key, init, out)


def _size(analyzer, key, init, e) -> str | None:
    if fixed_size(e):
        return expr_text(e)
    if not isinstance(e, (ir.Attribute, ir.Name)):
        return None
    # An attribute read from the same field names the size; else the field itself does
    # (`symbolic_sizes`: `@config.num_experts`, the same number in every module built from it).
    found = attribute_reading(analyzer, key, init, e) if isinstance(e, ir.Attribute) else None
    return found if found is not None else of_init_expression(analyzer, key, init, e)
