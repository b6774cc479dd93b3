"""What the tensors of a module are: module state, or tensors this code made.

A parameter or buffer of a module the model holds (`self.proj.weight`) is module state:
fixed in the exported model, and a write into it is a write into the model (UT301). A
module built in the very call that uses it (`new_bias = nn.Embedding(n + 2, heads)` in
`forward`) is not state: its weight is a tensor this code made, freshly initialised, and
a write into it (`new_bias.weight.data[:n] = old`) is traced as faithfully as a write into
`torch.zeros(...)` (UT304). A module built in `__init__` becomes state when it is bound to
`self` (`as_state`, from `call_values.as_attribute`).

A loop over a container of submodules whose classes are not known (`for m in
self.model:`, with `self.model` copied from another model) yields submodules all the
same: whatever such a module holds (`m.stride`, a buffer its class registered) is state
too, fixed in the exported model. It is taken as an assumed tensor (`certain=False`:
maybe a Python number; no rule fires on it as a tensor) whose values are parameter-valued.
"""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.values import PARAM_VALUED, STATIC, Value
from analyzer.frontend import ir

BUILT_HERE = "built-here"  # `origin` of a module value constructed in the call being analysed


def built_here(cls) -> Value:
    """The module a constructor call of ``cls`` makes."""
    return Value("module", ref=cls, origin=BUILT_HERE)


def as_state(value: Value) -> Value:
    """A module value (or a container of them) as part of the model's state."""
    if value.type == "module" and value.origin == BUILT_HERE:
        return replace(value, origin=None)
    if value.type == "modules":
        return replace(value, elem=as_state(value.elem) if value.elem is not None else None,
                       elems=tuple(as_state(e) for e in value.elems) if value.elems is not None else None)
    return value


SUBMODULE = Value("module")  # a submodule of a class that is not known


def submodule_items(iterable: Value, node) -> Value | None:
    """The item of a loop over ``iterable`` (the expression ``node``) when it is a
    container of submodules of unknown classes: a ModuleList of modules not resolved, or
    an attribute of `self` that is not a known Python value. None otherwise."""
    if iterable.type == "modules" and iterable.elem is None:
        return SUBMODULE
    of_self = isinstance(node, ir.Attribute) and isinstance(node.value, ir.Name) and node.value.id == "self"
    if of_self and iterable.type in ("method", "unknown") and iterable.level == STATIC:
        return SUBMODULE
    return None


def state_of_unknown(module: Value) -> Value:
    """What an attribute of a submodule of unknown class holds."""
    return Value.tensor(certain=False, origin="parameter" if module.origin != BUILT_HERE else None, ref=PARAM_VALUED)


def parameter_of(module: Value) -> Value:
    """A parameter or buffer of ``module`` (its `weight`, `running_mean`, ...)."""
    return Value.tensor(origin=None if module.origin == BUILT_HERE else "parameter", ref=PARAM_VALUED)
