"""Python semantics of reads, for the value-kind analysis: names (local, closure, module
scope), attributes (of tensors, modules, classes, Python modules) and subscripts."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds import ranks
from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.call_values import index_shape_level, view_origin
from analyzer.analyses.kinds.expression_operators import all_shape_valued
from analyzer.analyses.kinds.module_state import parameter_of, state_of_unknown
from analyzer.analyses.kinds.picks import picked_item
from analyzer.analyses.kinds.shapes import size_level
from analyzer.analyses.kinds.values import (
    DATA,
    FIXED_ROWS,
    KNOWN_WHEN_TRACED,
    NDARRAY,
    SHAPE,
    STATIC,
    STATIC_PY,
    UNKNOWN,
    VALUES_INDICES,
    Value,
    known_level,
)
from analyzer.analyses.project.index import ClassKey, FunctionKey
from analyzer.analyses.ranges import index_bounds, keyed_ranges
from analyzer.analyses.ranges.fixed_rows import kept_by_slice
from analyzer.frontend import expr_text, ir

TRAINING_FLAG = Value("python", STATIC, ref="training")


class AccessSemantics:
    """The reads of `ExpressionEvaluator` (a mixin over its state)."""

    def _ev_Name(self, e, state):
        if e.id in state:
            value = state[e.id]
        elif self.frame is not None and e.id in self.frame.closure:
            value = self.frame.closure[e.id]
        else:
            value = self.analyzer.global_value(self.module, e.id)
            if value is None:
                return Value.ext("builtins." + e.id)
        return self.analyzer.resolve(value)

    def _ev_Attribute(self, e, state):
        base = self.ev(e.value, state)
        return self.attribute(base, e.attr, e)

    def attribute(self, base: Value, attr: str, node) -> Value:
        t = base.type
        if t == "ext":
            return Value.ext(f"{base.ref}.{attr}")
        if t == "pymodule":
            module = self.analyzer.module_ir(base.ref) if base.ref else None
            if module is None:
                return UNKNOWN
            return self.analyzer.resolve(self.analyzer.global_value(module, attr) or UNKNOWN)
        if t == "tensor":
            if attr in api.SHAPE_ATTRIBUTES:
                lvl = base.shape_level
                return replace(Value.container(Value.python(lvl), level=lvl, ref="shape"), rank=base.rank)
            if attr in api.STATIC_ATTRIBUTES:
                return STATIC_PY
            if attr in api.TENSOR_ATTRIBUTES:
                return replace(base, origin=view_origin(base) if attr in api.VIEW_ATTRIBUTES else None)
            return Value("method", ref=attr, elem=base)
        if t == "module":
            return self.module_attribute(base, attr, node)
        if t in ("modules", "super"):  # `super().forward`: the base class's method (`call_method`)
            return Value("method", ref=attr, elem=base)
        if t == "class":
            info = self.analyzer.class_info(base.ref) if isinstance(base.ref, ClassKey) else None
            if info is not None:
                owner, method = self.analyzer.find_method(base.ref, attr)
                if method is not None:
                    return Value("function", ref=FunctionKey(owner.key.path, method.qualname))
            return STATIC_PY
        if t in ("container", "python", "none"):
            if t == "container" and base.ref == VALUES_INDICES and attr in ("values", "indices"):
                return base.elem or UNKNOWN
            if t == "container" and attr in ("shape",):
                return Value.container(Value.python(base.level), level=base.level, ref="shape")
            return Value("method", ref=attr, elem=base)
        if t == "unknown":
            if attr in api.STATIC_ATTRIBUTES:
                return STATIC_PY
            if attr in api.SHAPE_ATTRIBUTES:
                return Value.container(Value.python(SHAPE), level=SHAPE, ref="shape")
            return Value("method", ref=attr, elem=base) if base.level >= DATA else UNKNOWN
        return UNKNOWN

    def module_attribute(self, base: Value, attr: str, node) -> Value:
        if attr == "training":
            return TRAINING_FLAG  # False in an export: what it guards is training-only code
        key = base.ref
        if isinstance(key, ClassKey):
            attrs = self.analyzer.attributes(key)
            if attr in attrs:
                return self.analyzer.resolve(attrs[attr])
            owner, method = self.analyzer.find_method(key, attr)
            if method is not None:
                decorators = {expr_text(d) for d in method.decorators}
                bound = Value("function", ref=FunctionKey(owner.key.path, method.qualname),
                              elem=None if "staticmethod" in decorators else base)
                if "property" in decorators or any(d.endswith(".getter") for d in decorators):
                    return self.call(bound, [], {}, node, {})
                return bound
            if attr in ("weight", "bias"):
                return parameter_of(base)
            if attr in ("register_buffer", "register_parameter"):
                return Value("method", ref=attr, elem=base)  # records the buffer (`call_method`)
            return UNKNOWN
        if isinstance(key, str):
            if attr in ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias",
                        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "pe", "num_batches_tracked"):
                return parameter_of(base)
            if attr in ("forward", "__call__"):
                return base
            return STATIC_PY
        return base if attr in ("forward", "__call__") else state_of_unknown(base)

    def _ev_Subscript(self, e, state):
        base = self.ev(e.value, state)
        index = self.ev(e.index, state)
        return self.subscript(base, index, e.index)

    def subscript(self, base: Value, index: Value, index_node) -> Value:
        t = base.type
        if t == "tensor":
            shape_level = max(base.shape_level, index_shape_level(index))
            # Basic indexing (ints, slices, None, ...) gives a view; a tensor index a copy (origin "copy").
            # Items of a tensor known when traced (and not picked by data), picked by what is
            # known too, are known.
            parts = index.elems if index.type == "container" and index.elems is not None else (index,)
            known = base.ref in KNOWN_WHEN_TRACED and base.ctl <= known_level(base.ref)
            ref = all_shape_valued([base, *(p for p in parts if p.type == "tensor")],
                                    [p for p in parts if p.type != "tensor"]) if known else None
            origin = "copy" if has_tensor(index) else FIXED_ROWS if kept_by_slice(base, index_node) else view_origin(base)
            return replace(Value.tensor(base.certain, shape_level, ref=ref, origin=origin),
                           bound=index_bounds.picked(base.bound, index_node), interval=base.interval,
                           rank=ranks.of_subscript(base.rank, index, index_node, self.rank_facts) if base.certain else None)
        if t == "container":
            if base.ref == "shape" and base.level >= DATA and size_level(base.level, index_node) < DATA:
                return Value.python(SHAPE)
            if base.elems is not None and isinstance(index_node, ir.Const) and isinstance(index_node.value, int):
                try:
                    return base.elems[index_node.value]
                except IndexError:
                    return UNKNOWN
            if isinstance(index_node, ir.Slice) or (index.type == "python" and index.ref == "slice"):
                return replace(base, elems=None, level=max(base.level, index.level), rank=None)
            item = picked_item(base.elem or UNKNOWN, max(index.level, base.ctl))
            return keyed_ranges.subscripted(base, index_node, item, self.function) if base.interval is not None else item
        if t == "modules":
            return base.elem or UNKNOWN
        if t == "python":
            if base.ref == NDARRAY and index.type == "python" and max(index.level, index.ctl) <= base.shape_level:
                # A row or slice of `t.numpy()` at a size-level index (maybe a number: its
                # length is never read then): an array, as long as the tensor is wide.
                return replace(base, level=max(base.level, index.level))
            return Value.python(max(base.level, index.level))
        if t == "unknown":
            return UNKNOWN.tainted(base.level)
        if t == "ext":
            return base  # typing subscripts: Optional[Tensor]
        return UNKNOWN


def has_tensor(index: Value) -> bool:
    if index.type == "tensor":
        return True
    return index.type == "container" and index.elems is not None and any(has_tensor(e) for e in index.elems)
