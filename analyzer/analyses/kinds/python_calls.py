"""Python builtins and the methods of Python values (containers, modules, `super()`),
for the value-kind analysis: what they return and the tensor iterations and escapes
they emit. Methods of tensors are `external_calls.tensor_method`."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.call_values import as_index_level, max_level, shape_valued, unknown_result
from analyzer.analyses.kinds.expression_operators import compared_level, member_level
from analyzer.analyses.kinds.facts import EscapeFact, IterationFact
from analyzer.analyses.kinds.shapes import row_count_level, row_of, rows_fixed_by_model
from analyzer.analyses.kinds.values import (
    DATA,
    KNOWN_WHEN_TRACED,
    NDARRAY,
    NONE,
    PARAM_VALUED,
    ROWS,
    SPLIT_PIECES,
    STATIC,
    STATIC_PY,
    UNKNOWN,
    Value,
    join,
    known_level,
)
from analyzer.analyses.project.index import ClassKey, FunctionKey
from analyzer.frontend import ir


class PythonCallSemantics:
    """The builtin and Python-method calls of `CallSemantics` (a mixin over
    `ExpressionEvaluator`'s state)."""

    def call_builtin(self, name: str, args, kwargs, node) -> Value:
        first = args[0] if args else UNKNOWN
        if name in api.TENSOR_TO_PYTHON_BUILTINS:
            if first.type == "tensor" and first.ref in KNOWN_WHEN_TRACED:
                return Value.python(max(known_level(first.ref), first.ctl))
            if first.is_certain_tensor:
                self.emit(EscapeFact(self.site(node.span), name, "python", self.text(node)))
                return Value.python(DATA)
            if first.type == "tensor":
                return Value.python(first.ctl)
            return Value.python(first.level if first.type in ("python", "unknown", "container") else STATIC)
        if name == "len":
            if first.type == "tensor":
                return Value.python(first.shape_level)
            if first.type == "python" and first.ref == NDARRAY:
                return Value.python(max(first.shape_level, first.ctl))  # `len(t.numpy())`: a size
            if first.type == "container" and first.ref == "shape":
                return STATIC_PY  # `len(t.shape)`: the rank, fixed in every graph
            if first.type in ("container", "python"):
                return Value.python(max(first.level, first.ctl))
            return STATIC_PY
        if name == "range":
            # A tensor bound is read through `__index__`, as `int()` reads it: the trace
            # bakes the example's count in, without a TracerWarning.
            args = [self.call_builtin("int", [a], {}, node) if a.type == "tensor" else a for a in args]
            level = max((as_index_level(a) for a in args), default=STATIC)
            return Value.container(Value.python(level), level=level, ref="range")
        if name in ("enumerate", "reversed", "iter", "sorted", "list", "tuple", "set", "frozenset"):
            if first.type == "tensor":
                # Over a tensor sized by data (`nonzero`) the number of rows is data: a loop
                # over them is the data loop's finding (UT102), not a tensor iteration.
                rows = row_count_level(first)
                if first.certain and (rows < DATA or name in ("list", "tuple")) and not rows_fixed_by_model(first):
                    self.emit(IterationFact(self.site(node.span), name if name in ("list", "tuple", "enumerate") else "for", self.text(node)))
                row = row_of(first)
                if name == "enumerate":  # (index, row) pairs: unpacking one is no tensor unpacking
                    return Value.container(Value.container(elems=(STATIC_PY, row)), level=rows)
                return Value.container(row, level=rows)
            if first.type in ("container", "modules"):
                elem = first.elem
                if name == "enumerate":
                    elem = Value.container(elems=(STATIC_PY, first.elem or UNKNOWN))
                if name in ("list", "tuple") and first.elems is not None:
                    return replace(first, type="container", ref=name)
                level = max(first.level, first.ctl)
                if name in ("set", "frozenset") and elem is not None and elem.type in ("python", "unknown"):
                    level = max(level, elem.level)  # duplicates dropped by value: the size is as dynamic as the items
                return replace(Value.container(elem or UNKNOWN, level=level,
                                               ref=first.ref if first.ref in (ROWS, SPLIT_PIECES) and name != "set" else None),
                               ctl=first.ctl)  # picked from as the original is (`list(run)[0]`)
            if first.type == "python":
                return Value.container(Value.python(first.level), level=first.level)
            # The items of an unresolved value keep its level, as its subscripts and a `for`
            # over it do (`for i, p in enumerate(coords[b])` with `coords` from data).
            elem = UNKNOWN.tainted(first.level) if first.type == "unknown" else UNKNOWN
            return Value.container(Value.container(elems=(STATIC_PY, elem)) if name == "enumerate" else elem)
        if name == "zip":
            level = STATIC
            elems = []
            rows = None
            # Zipped with the layers of a ModuleList (`zip(stacked, self.norms)`), or with a tensor
            # of one row per layer (`fixed_rows`), the count is the model's.
            by_model = any(a.type == "modules" or a.type == "tensor" and rows_fixed_by_model(a) for a in args)
            for a in args:
                if a.type == "tensor":
                    if a.certain and row_count_level(a) < DATA and not by_model:
                        self.emit(IterationFact(self.site(node.span), "zip", self.text(node)))
                    level = max(level, row_count_level(a))
                    elems.append(row_of(a))
                elif a.type in ("container", "modules"):
                    level = max(level, a.level)
                    rows = rows or (ROWS if a.ref == ROWS else None)
                    elems.append(a.elem or UNKNOWN)
                else:
                    elems.append(UNKNOWN)
            return Value.container(Value.container(elems=tuple(elems)), level=level, ref=rows)
        if name in ("map", "filter"):
            return Value.container(UNKNOWN, level=max((a.level for a in args if a.type == "container"), default=STATIC))
        if name == "getattr" and len(args) >= 2:
            return UNKNOWN
        if name in api.STATIC_BUILTINS:
            if name == "super" and self.frame is not None and self.frame.self_value is not None:
                return Value("super", ref=self.frame.class_key, elem=self.frame.self_value)
            return STATIC_PY
        if name in api.PYTHON_MATH_BUILTINS:
            tensors = [a for a in args if a.type == "tensor"]
            if tensors:
                return Value.tensor(any(a.certain for a in tensors), max(a.shape_level for a in tensors),
                                    ref=shape_valued(args, kwargs))
            if name in ("min", "max", "sum", "all", "any") and len(args) == 1 and first.type == "container":
                elem = first.elem or UNKNOWN
                return Value.python(max(first.level, elem.level if elem.type != "tensor" else DATA))
            return Value.python(max_level(args, kwargs))
        if name == "next":
            if first.type == "container":
                return first.elem or UNKNOWN
            return UNKNOWN
        if name in ("dict",):
            # Its keys are the mapping's or the pairs' first items (`dict(zip(t.tolist(), ...))`).
            keys = member_level(first) if first.type == "container" else STATIC
            return Value.container(UNKNOWN, ref="dict", level=keys)
        return unknown_result(args, kwargs)

    def call_method(self, recv: Value, name: str, args, kwargs, node) -> Value:
        if recv is None:
            return UNKNOWN
        known_tensor_method = name in api.TENSOR_METHODS or name in api.SHAPE_METHODS or name in api.STATIC_METHODS \
            or name in api.PYTHON_ESCAPE_METHODS or name in api.NUMPY_ESCAPE_METHODS or api.is_inplace_method(name)
        if recv.type == "tensor" and isinstance(recv.ref, ClassKey):
            # A method of a `torch.Tensor` subclass of the checked code: run from its source,
            # as a module's own methods are; what it does not define is a tensor method.
            owner, method = self.analyzer.find_method(recv.ref, name)
            if method is not None:
                return self.invoke(FunctionKey(owner.key.path, method.qualname), method, owner.key, recv, args, kwargs, node)
        if recv.is_certain_tensor:
            self.emit_op(f"Tensor.{name}", node)
        if recv.is_certain_tensor or (recv.type in ("tensor", "unknown") and recv.level >= DATA and known_tensor_method):
            # An assumed tensor (an un-annotated forward argument) is only taken for one when
            # it is used like one: `cache.get_seq_length()` says it is something else.
            return self.tensor_method(recv, name, args, kwargs, node)
        if recv.type == "tensor":
            return unknown_result(args, kwargs)
        if recv.type == "super":
            owner, method = self.analyzer.find_method(recv.ref, name, after=recv.ref) if isinstance(recv.ref, ClassKey) else (None, None)
            if method is None:
                return unknown_result(args, kwargs)
            return self.invoke(FunctionKey(owner.key.path, method.qualname), method, owner.key, recv.elem, args, kwargs, node)
        if recv.type == "module":
            if name == "register_buffer" or name == "register_parameter":
                collect = self.frame.collect_attributes if self.frame is not None else None
                if collect is not None and isinstance(node.args[0].value, ir.Const):
                    registered = args[1] if len(args) > 1 and args[1].type == "tensor" else None
                    collect[node.args[0].value.value] = replace(Value.tensor(origin="parameter", ref=PARAM_VALUED),
                                                                rank=registered.rank if registered else None)
                return NONE
            if name in ("parameters", "buffers", "modules", "children", "named_parameters"):
                return Value.container(UNKNOWN)
            return unknown_result(args, kwargs)
        if recv.type == "modules":
            if name in ("values", "children", "modules"):
                return Value.container(recv.elem or UNKNOWN)
            if name == "items":
                return Value.container(Value.container(elems=(STATIC_PY, recv.elem or UNKNOWN)))
            if name == "keys":
                return Value.container(STATIC_PY)
            return UNKNOWN
        if recv.type == "container":
            if name in ("items",):
                return Value.container(Value.container(elems=(STATIC_PY, recv.elem or UNKNOWN)), level=recv.level)
            if name in ("values", "copy"):
                return Value.container(recv.elem or UNKNOWN, level=recv.level, ref=recv.ref)
            if name in ("keys",):
                return Value.container(STATIC_PY, level=recv.level)
            if name in ("get", "pop"):
                return join(recv.elem or UNKNOWN, args[1] if len(args) > 1 else NONE) or UNKNOWN
            if name in ("index", "count"):
                # Where an item is, how often: as dynamic as the items' values and the one looked for.
                return Value.python(max([member_level(recv)] + [compared_level(a) for a in args]))
            return UNKNOWN
        if recv.type in ("python", "none"):
            return Value.python(max([recv.level] + [a.level for a in args if a.type == "python"]))
        return unknown_result(args, kwargs)
