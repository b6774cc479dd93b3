"""Values at calls, for the value-kind analysis: the level of a Python value used as a
size or index, what an in-place write or a view writes into, what `self.x = value`
makes `self.x`, and the result of a call that cannot be resolved."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.kinds.module_state import as_state
from analyzer.analyses.kinds.ranks import absolute_only
from analyzer.analyses.kinds.values import (
    DATA,
    KNOWN_WHEN_TRACED,
    PARAM_VALUED,
    SHAPE,
    SHARED_ORIGINS,
    STATIC,
    Value,
    known_python_level,
    known_ref,
    unknown_level,
)


def as_attribute(value: Value, item: bool = False) -> Value:
    """What `self.x = value` makes `self.x` in forward: parameters and tensors stay
    tensors; Python values computed in __init__ are configuration (static). A container
    may grow after __init__; the common `item` of one keeps its count (`picks`)."""
    if value.type == "tensor":
        # Its size survives (`nn.Parameter(torch.zeros(n, h))`: `index_bounds`); values do not.
        size = value.bound if value.bound is not None and value.bound[0] == "axis" else None
        return replace(Value.tensor(True, SHAPE, origin="parameter", ref=PARAM_VALUED), bound=size,
                       rank=absolute_only(value.rank))
    if value.type in ("python", "none", "container"):
        # A range does not survive: another method may set the attribute again.
        return replace(value, level=STATIC, ctl=STATIC, interval=None) if value.type != "container" else replace(
            value, level=STATIC, ctl=STATIC, interval=None, elems=tuple(map(as_attribute, value.elems)) if item and value.elems else None,
            elem=as_attribute(value.elem, item=True) if value.elem else None)
    return as_state(replace(value, ctl=STATIC))


def view_origin(base: Value) -> str | None:
    """The origin of a view of ``base`` (`base[0]`, `base.view(...)`, `base.T`): it writes
    into what ``base`` writes into. A view of a local tensor is local until it is bound
    to a name of its own while its base has one (`FunctionAnalysis.statement`)."""
    return base.origin if base.origin in SHARED_ORIGINS else None


def written_kind(tensor: Value) -> str:
    """What an in-place write goes into, for UT301: a forward "input", a "parameter" or
    buffer (module state), a "view" of another tensor (the write changes it too), or a
    "local" tensor the code made itself (`torch.zeros(...)`, `x.clone()`, an op's result),
    which the legacy tracer records faithfully (a tensor that is shared on some paths
    only counts as local: `MAYBE_SHARED`)."""
    return tensor.origin if tensor.origin in ("input", "parameter", "view") else "local"


def as_index_level(v: Value) -> Level:
    """Level of a Python value used as a size, bound or index."""
    if v.type in ("python", "container"):
        return max(v.level, v.ctl)
    if v.type == "unknown":
        return unknown_level(v)
    return STATIC


def index_shape_level(index: Value) -> Level:
    if index.type == "tensor":
        return DATA if index.ref == "bool" else index.shape_level
    if index.type == "container" and index.elems is not None:
        return max((index_shape_level(e) for e in index.elems), default=STATIC)
    return as_index_level(index)


def shape_valued(args, kwargs, tensors_needed: bool = True) -> str | None:
    """The `ref` (`known_ref`) of a result computed from tensors known when traced
    (shape- or param-valued) and Python values of at most shape level, when every
    argument is one of those (and, with ``tensors_needed``, at least one is such a
    tensor); None otherwise."""
    values = list(args) + [v for k, v in kwargs.items() if k != "**"]
    refs: set = set()
    python_level = STATIC
    for v in values:
        if v.type == "starred" and v.elem is not None:
            values.append(v.elem)  # `torch.meshgrid(*[torch.arange(s) for s in sizes])`: its items
            continue
        if v.type == "container" and v.elems is not None and max(v.level, v.ctl) <= SHAPE:
            # `torch.cat((boxes, scores))`: each item's own ref (their join keeps none of two)
            values.extend(v.elems)
            python_level = max(python_level, v.level, v.ctl)
            continue
        if v.type == "tensor":
            if v.ref not in KNOWN_WHEN_TRACED:
                return None
            refs.add(v.ref)
        elif v.type in ("python", "none", "method"):
            if known_python_level(v) > SHAPE:
                return None
            python_level = max(python_level, known_python_level(v))
        elif v.type == "container":
            elem = v.elem
            if max(v.level, v.ctl) > SHAPE or (elem is not None and (elem.type == "tensor" and elem.ref not in KNOWN_WHEN_TRACED
                                                                     or elem.type not in ("tensor", "python", "none")
                                                                     or max(elem.level, elem.ctl) > SHAPE and elem.type != "tensor")):
                return None
            python_level = max(python_level, v.level, v.ctl)
            if elem is not None:
                if elem.type == "tensor":
                    refs.add(elem.ref)
                else:
                    python_level = max(python_level, elem.level, elem.ctl)
        elif v.type != "ext":  # dtypes, devices
            return None
    return known_ref(refs, python_level) if refs or not tensors_needed else None


def max_level(args, kwargs) -> Level:
    """What a Python function of ``args`` (`math.ceil`, `max`, `np.prod` of no tensor)
    depends on: the levels of its Python arguments, an unresolved one's included
    (`unknown_level`: `math.ceil(H / patch_h)` is a size whatever `patch_h` is)."""
    values = list(args) + list(kwargs.values())
    return max([a.level for a in values if a.type in ("python", "container")]
               + [unknown_level(a) for a in values if a.type == "unknown"] + [STATIC])


def unknown_result(args, kwargs) -> Value:
    """An unresolvable call: `unknown`, but carrying `data` when fed by tensor values."""
    values = list(args) + list(kwargs.values())
    if any(v.type == "tensor" and v.certain for v in values):
        return Value("unknown", DATA)
    level = max([v.level for v in values if v.type in ("python", "container")] + [STATIC])
    return Value("unknown", level)
