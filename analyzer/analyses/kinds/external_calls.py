"""Calls into libraries, for the value-kind analysis: PyTorch (functions, `nn` module
classes, tensor methods: the values they return, the ops, escapes and in-place writes
they emit), numpy and math (escapes of tensor values), and the standard library."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.call_values import (
    as_index_level,
    max_level,
    shape_valued,
    unknown_result,
    view_origin,
    written_kind,
)
from analyzer.analyses.kinds.expression_operators import compared_level
from analyzer.analyses.kinds.facts import EscapeFact, InplaceFact
from analyzer.analyses.kinds.foreign_runtimes import context_call, foreign_result, is_foreign, outside_graph
from analyzer.analyses.kinds.module_state import built_here
from analyzer.analyses.kinds.ranks import lower_rank_mask
from analyzer.analyses.kinds.shapes import call_args, counted_range, pieces, repeats_are_data, size_level
from analyzer.analyses.kinds.summaries import BOOL_METHODS
from analyzer.analyses.kinds.values import (
    DATA,
    FIXED_ROWS,
    KNOWN_WHEN_TRACED,
    NDARRAY,
    PARAM_VALUED,
    SHAPE,
    STATIC,
    STATIC_PY,
    UNKNOWN,
    Value,
    join_all,
    known_level,
)
from analyzer.analyses.ranges import fixed_rows
from analyzer.frontend import ir


class ExternalCallSemantics:
    """The library calls of `CallSemantics` (a mixin over `ExpressionEvaluator`'s state)."""

    def call_external(self, qualname: str, args, kwargs, node) -> Value:
        name = qualname
        if name.startswith("builtins."):
            return self.call_builtin(name[9:], args, kwargs, node)
        if name.startswith("torch.nn.functional."):
            name = "torch." + name[len("torch.nn.functional."):]
            qualname_is_functional = True
        else:
            qualname_is_functional = False
        if qualname.startswith("torch."):
            return self.call_torch(qualname, name, args, kwargs, node, qualname_is_functional)
        if is_foreign(qualname):
            return Value.ext(foreign_result(qualname))  # that runtime's object, not a torch tensor
        if qualname.startswith("contextlib.") and (known := context_call(qualname, args)) is not None:
            return Value.ext(known) if isinstance(known, str) else known
        tensor_args = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor" and a.certain]
        root = qualname.split(".")[0]
        if root in ("numpy", "np"):
            if tensor_args:
                self.emit(EscapeFact(self.site(node.span), "np." + qualname.split(".", 1)[-1], "numpy", self.text(node)))
                return Value.python(DATA)
            return Value.python(max_level(args, kwargs))
        if root == "math":
            if tensor_args:
                self.emit(EscapeFact(self.site(node.span), qualname, "python", self.text(node)))
                return Value.python(DATA)
            return Value.python(max_level(args, kwargs))
        if root in ("typing", "warnings", "logging", "functools", "itertools", "operator", "copy", "dataclasses"):
            if qualname == "itertools.groupby" and args and args[0].type == "container":
                # Runs of equal items: how many there are, and which items each run holds, is
                # as dynamic as the items' values. A run is a container of the items, picked
                # under that level (`group = list(group); start = group[0][0]` is data).
                items = args[0].elem
                runs = max(args[0].level, compared_level(items) if items is not None else STATIC)
                run = replace(Value.container(items or UNKNOWN, level=runs), ctl=runs)
                return Value.container(Value.container(elems=(UNKNOWN.tainted(runs), run)), level=runs)
            if root == "itertools" or root == "functools":
                return unknown_result(args, kwargs)
            return STATIC_PY
        return unknown_result(args, kwargs)

    def call_torch(self, qualname: str, name: str, args, kwargs, node, functional: bool) -> Value:
        if qualname.startswith("torch.nn.") and not functional:
            cls = qualname
            if cls in api.CONTAINER_MODULES:
                modules = [m for a in args for m in _modules_in(a)]
                elems = tuple(modules) if args and all(a.type == "module" for a in args) else None
                return Value("modules", ref=cls, elem=join_all(modules), elems=elems)
            if cls in api.TENSOR_FACTORIES:
                return Value.tensor(origin="parameter", ref=PARAM_VALUED)
            if cls.startswith(("torch.nn.init.", "torch.nn.utils.")):
                return args[0] if args else UNKNOWN
            return built_here(cls)
        if api.is_static_function(qualname):
            return STATIC_PY
        if qualname in api.SYMBOLIC_CASTS:  # torch.sym_int(t.item()): a Python number, as data as its argument
            return Value.python(max_level(args, kwargs))
        self.emit_op(qualname, node)
        if name in api.SHAPE_FUNCTIONS:
            tensor = next((a for a in args if a.type == "tensor"), None)
            return Value.python(tensor.shape_level if tensor else SHAPE)
        if not api.returns_tensor(qualname):
            return unknown_result(args, kwargs)
        if outside_graph(name, args, NDARRAY):
            return Value.tensor(True, ref=PARAM_VALUED)  # a constant to the tracer, like a parameter
        tensors = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor"]
        shape_level = max([a.shape_level for a in tensors] + [as_index_level(a) for a in args if a.type == "python"] + [SHAPE])
        shape_level = max(shape_level, *[as_index_level(v) for k, v in kwargs.items() if k in ("size", "end", "start", "steps")] or [STATIC])
        known = None if api.is_random(name) else shape_valued(args, kwargs, tensors_needed=False)
        if name in api.TUPLE_FUNCTIONS or (name in api.TUPLE_WITH_DIM_FUNCTIONS and (len(args) > 1 and args[1].type == "python" or "dim" in kwargs)):
            piece = Value.tensor(True, shape_level, ref=known)
            return pieces(name.rsplit(".", 1)[-1], args[1:], kwargs, piece, call_args(node)[1:])
        if (name == "torch.where" and len(args) == 1 and not kwargs) or (name == "torch.nonzero" and kwargs.get("as_tuple")):
            return Value.container(Value.tensor(True, DATA))  # one index tensor per dimension
        if name in api.DATA_SHAPE_FUNCTIONS or (name == "torch.repeat_interleave" and repeats_are_data(
                args[1:] if len(args) > 1 or "repeats" in kwargs else args, kwargs)):  # `repeat_interleave(repeats)`
            return Value.tensor(True, DATA)
        if name in ("torch.cond",):
            # What the branch functions return: a tensor, or a tuple of them to unpack.
            return Value.tensor(False, shape_level)
        ref = known or ("bool" if name.rsplit(".", 1)[-1] in BOOL_METHODS else None)
        if qualname in api.ALIAS_FUNCTIONS and args and args[0].type == "tensor":
            return Value.tensor(True, shape_level, ref=ref, origin=view_origin(args[0]))
        return Value.tensor(True, shape_level, ref=ref, origin=FIXED_ROWS if self._fixed_rows(name, args, kwargs, node) else None)

    def _fixed_rows(self, name: str, args, kwargs, node) -> bool:
        """Whether the result's number of rows is fixed by the model (`fixed_rows`)."""
        if name == "torch.stack":
            return fixed_rows.stacked(args, call_args(node))
        if name == "torch.einsum":
            return fixed_rows.kept_by_einsum(args, call_args(node))
        return counted_range(name, args, kwargs)

    def tensor_method(self, recv: Value, name: str, args, kwargs, node) -> Value:
        shape_level = recv.shape_level if recv.type == "tensor" else SHAPE
        if name in api.SHAPE_METHODS:
            if name == "size" and not args and "dim" not in kwargs:
                return Value.container(Value.python(shape_level), level=shape_level, ref="shape")
            if name == "size" and isinstance(node, ir.Call) and node.args:
                return Value.python(size_level(shape_level, node.args[0].value))
            return Value.python(shape_level)
        if name in api.STATIC_METHODS:
            return STATIC_PY
        if name == "type" and not args and not kwargs:
            return STATIC_PY
        if name in api.PYTHON_ESCAPE_METHODS and recv.ref in KNOWN_WHEN_TRACED:
            known = known_level(recv.ref)
            return Value.python(known) if name == "item" else Value.container(Value.python(known), level=shape_level)
        if name in api.PYTHON_ESCAPE_METHODS:
            if id(node) not in self.check_conditions:
                self.emit(EscapeFact(self.site(node.span), name, "python", self.text(node)))
            if name == "tolist":
                # Its values are data; its length is the tensor's size.
                return Value.container(Value.python(DATA), level=shape_level)
            return Value.python(DATA)
        if name in api.NUMPY_ESCAPE_METHODS:
            if recv.ref in KNOWN_WHEN_TRACED:
                # Values known when traced (as `.item()` of them, above): nothing leaves the graph.
                return Value("python", known_level(recv.ref), shape_level=shape_level, ref=NDARRAY)
            self.emit(EscapeFact(self.site(node.span), name, "numpy", self.text(node)))
            return Value("python", DATA, shape_level=shape_level, ref=NDARRAY)
        if name in api.POSITION_WRITE_METHODS and (name in api.INDEX_PUT_METHODS
                                                   or written_kind(recv) not in ("input", "view")):
            # Into an input or a view, any in-place method is the finding (below).
            how = "index_put_"
            if name == "index_put_" and len(args) > 1 and args[0].type == "container" and args[0].elems is not None \
                    and len(args[0].elems) == 1 and lower_rank_mask(recv, args[0].elems[0], None, args[1], self.rank_facts):
                how = "mask-lower-rank"  # `t.index_put_((mask,), v)`, as `t[mask] = v`
            self.emit(InplaceFact(self.site(node.span), how, self.text(node), written_kind(recv)))
            return recv
        if api.is_inplace_method(name):
            if written_kind(recv) in ("input", "view"):
                self.emit(InplaceFact(self.site(node.span), "inplace-input", self.text(node), written_kind(recv)))
            if api.is_random(name):
                # `torch.empty(n).uniform_()`: values drawn at run time, whatever the receiver held.
                return replace(recv, ref=None, bound=None, interval=None)
            return recv
        tensors = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor"]
        sizing = args
        if name in api.RECEIVER_SHAPE_METHODS or name in api.MASKED_WRITE_METHODS:
            # What is written sizes nothing: the result has the receiver's shape (and the mask's).
            sizing = [a for a in args[:1] if a.type == "tensor"] if name in api.MASKED_WRITE_METHODS else []
            tensors = sizing
        level = max([shape_level] + [a.shape_level for a in tensors] + [as_index_level(a) for a in sizing if a.type in ("python", "container")])
        known = self._known_method_result(recv, name, args, kwargs)
        if name in api.TUPLE_METHODS or (name in api.TUPLE_WITH_DIM_METHODS and (args and args[0].type == "python" or "dim" in kwargs)):
            origin = view_origin(recv) if name in api.VIEW_METHODS else None
            return pieces(name, args, kwargs, Value.tensor(True, level, ref=known, origin=origin), call_args(node))
        if name in api.DATA_SHAPE_METHODS or (name == "repeat_interleave" and repeats_are_data(args, kwargs)):
            return Value.tensor(True, DATA)
        ref = known or ("bool" if name in BOOL_METHODS else None)
        aliased = name in api.VIEW_METHODS or name in api.ALIAS_METHODS
        return Value.tensor(True, level, ref=ref, origin=view_origin(recv) if aliased else None)


    @staticmethod
    def _known_method_result(recv: Value, name: str, args, kwargs) -> str | None:
        """The `ref` of a method's result when its values are known when traced: a method
        of such a tensor on such operands; `w.to(x)` / `w.type_as(x)` take only dtype and
        device from ``x``."""
        if api.is_random(name):
            return None
        if recv.ref not in KNOWN_WHEN_TRACED:
            return None
        if name in api.DTYPE_FROM_TENSOR_METHODS:
            args = [a for a in args if a.type != "tensor"]
            kwargs = {k: v for k, v in kwargs.items() if v.type != "tensor"}
        return shape_valued([recv, *args], kwargs)


def _modules_in(v: Value) -> list[Value]:
    if v.type == "module":
        return [v]
    if v.type in ("container", "modules"):
        if v.elems is not None:
            return [m for e in v.elems for m in _modules_in(e)]
        return _modules_in(v.elem) if v.elem is not None else []
    if v.type == "starred" and v.elem is not None:
        return _modules_in(v.elem)
    return []
