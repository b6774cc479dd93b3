"""Modules built inside the call being analysed, and the state of the ones that are not.

A parameter or buffer of a module the model holds (`self.proj.weight`) is module state:
fixed in the exported model, and a write into it is a write into the model (UT301). A
module built in the very call that uses it (`new_bias = nn.Embedding(n + 2, heads)` in
`forward`) is not state: its weight is a tensor this code made, freshly initialised, and
a write into it (`new_bias.weight.data[:n] = old`) is traced as faithfully as a write into
`torch.zeros(...)` (UT304). A module built in `__init__` becomes state when it is bound to
`self` (`as_state`, from `calls.as_attribute`).
"""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.values import PARAM_VALUED, Value

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


def parameter_of(module: Value) -> Value:
    """A parameter or buffer of ``module`` (its `weight`, `running_mean`, ...)."""
    return Value.tensor(origin=None if module.origin == BUILT_HERE else "parameter", ref=PARAM_VALUED)
