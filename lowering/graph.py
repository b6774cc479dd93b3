"""Build ONNX graphs with torch dtypes and (symbolic) shapes always at hand.

Everything the lowering emits goes through a :class:`GraphBuilder`; op lowerings never
touch ``onnx.helper`` directly.  The builder keeps, for every value it hands out, the
torch dtype (always known) and the shape (rank known whenever ONNX can infer it), so an
op can decide what to emit from the types alone -- it never sees real tensors, except
module parameters and buffers, which become initializers.

Values
    ``Value(name, dtype, shape)`` -- frozen.  ``shape`` is ``None`` (rank unknown) or a
    tuple of dims, each an ``int`` (static), a ``str`` (symbolic, e.g. ``"batch"``) or
    ``None`` (unknown).  ``v.rank`` is ``len(shape)`` or ``None``.  A shape-level integer
    such as ``x.shape[0]`` on a dynamic axis is a 0-d int64 ``Value``.  ``bool(v)``
    raises: a graph value has no truth value at export time.

Builder API (``g`` is a ``GraphBuilder``)::

    g = GraphBuilder(opset=18)
    g.opset                                   # the target opset; ops branch on it
    g.add_input(name, dtype, shape) -> Value  # shape dims: int | str | None
    g.add_output(value, name=None, *, shape=...) -> Value
    g.op(op_type, *inputs, outputs=1, domain="", out_dtype=None, out_shape=None, **attrs)
        -> Value | tuple[Value, ...]
        # inputs: Value, or None for an omitted optional input (numpy arrays become
        # constants).  attrs: ONNX attributes; None values are dropped, torch dtypes are
        # turned into ONNX element types.  Output dtype/shape come from ONNX's own
        # per-node inference (with constant inputs and known shape-tensor contents
        # propagated); out_dtype/out_shape (one per output, or a list) override it and
        # are required for ops ONNX cannot infer.  An ill-typed node raises
        # GraphConstructionError at once (a bug), never later in the checker.
    g.const(value, dtype=None) -> Value       # torch.tensor(value, dtype=dtype) semantics,
                                              # deduplicated, stored as an initializer
    g.initializer(name, tensor) -> Value      # keeps the name (``encoder.0.weight``)
    g.const_value(v) -> torch.Tensor | None   # the value of a constant (not of a parameter)
    g.known_dims(v) -> tuple | None           # known contents of a 1-d/0-d int64 shape value
    g.result_type(*xs) -> torch.dtype         # torch.result_type over Values and scalars
    g.as_value(x, like=None) -> Value         # scalar -> constant, promoted as torch does
    g.promote(*xs) -> tuple[Value, ...]       # all operands cast to result_type(*xs)
    g.cast(v, dtype) -> Value                 # no node when already that dtype
    g.shape_of(v) -> Value                    # 1-d int64 (a constant when fully static)
    g.size(v, dim) -> int | Value             # int when static, else 0-d int64
    g.numel(v) -> int | Value
    g.shape_tensor([int | 0-d Value | 1-d Value, ...]) -> Value   # 1-d int64
    g.unsqueeze(v, axes) / g.squeeze(v, axes=None) -> Value
    g.reduce(op_type, x, axes, keepdims) -> Value    # axes as attribute or input per opset
    g.location(path, line)                    # context manager; nodes get metadata
                                              # ``source = "path:line"``
    g.error(message, hint=None, construct=None) -> LoweringError  # at the current location
    g.subgraph(name=None) -> GraphBuilder     # body of If / Loop; may use outer values;
                                              # its add_input makes names unique
    g.sees(v) -> bool                         # v is made here, in an enclosing graph, or an initializer
    g.build_graph(name=None) -> onnx.GraphProto   # If/Loop output types come from it
    g.fresh(hint) -> str; g.use_domain(domain, version=1)
    g.to_model(opset=None) -> onnx.ModelProto # dead nodes removed, shapes inferred,
                                              # onnx.checker full_check passed

Names: every generated value and node name is unique over the whole model (subgraphs
included), so a subgraph can refer to any outer value by name.  Constants and
initializers always live in the root graph, visible from every subgraph.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import onnx
import torch
from onnx import TensorProto, helper

from lowering.builder.constants import Constants
from lowering.builder.dims import _join_dims  # noqa: F401 - re-exported
from lowering.builder.dtypes import (  # noqa: F401 - re-exported
    is_bool, is_complex, is_float, is_int, onnx_dtype, torch_dtype)
from lowering.builder.emission import NodeEmission
from lowering.builder.inference import TypeInference
from lowering.builder.known_contents import KnownContents
from lowering.builder.promotion import Promotion, result_type  # noqa: F401 - re-exported
from lowering.builder.protos import _subgraphs, _tensor_to_proto, model_of  # noqa: F401 - re-exported
from lowering.builder.shapes import Shapes
from lowering.builder.value import Dim, Shape, Value, _value_info  # noqa: F401 - re-exported
from lowering.errors import GraphConstructionError, LoweringError

__all__ = [
    "DEFAULT_OPSET",
    "MIN_OPSET",
    "MAX_OPSET",
    "Dim",
    "Shape",
    "Value",
    "GraphBuilder",
    "onnx_dtype",
    "torch_dtype",
    "is_float",
    "is_int",
    "is_bool",
    "is_complex",
]

DEFAULT_OPSET = 18
MIN_OPSET = 17
MAX_OPSET = 23

_NAME_RE = re.compile(r"[^A-Za-z0-9_.]+")


class GraphBuilder(NodeEmission, TypeInference, KnownContents, Constants, Promotion, Shapes):
    """Builds one ONNX graph (the model's, or a subgraph of If/Loop); see module docs."""

    def __init__(self, opset: int = DEFAULT_OPSET, *, name: str = "untrace", parent: GraphBuilder | None = None):
        self.parent = parent
        self.root: GraphBuilder = parent.root if parent is not None else self
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self._defined: set[str] = set()  # names produced in this graph (inputs, node outputs)
        self._shape_cache: dict[str, Value] = {}
        self._local_consts: dict = {}
        if parent is None:
            if not isinstance(opset, int) or opset < 13:
                raise ValueError(f"opset {opset!r} is not supported (17..{MAX_OPSET} are)")
            self._opset = opset
            self._domains: dict[str, int] = {"": opset}
            self._taken: set[str] = set()
            self._counter = 0
            self._initializers: dict[str, TensorProto] = {}
            self._init_values: dict[str, Value] = {}
            self._init_tensors: dict[str, torch.Tensor] = {}
            self._consts: dict[tuple, Value] = {}
            self._const_tensors: dict[str, torch.Tensor] = {}
            self._content: dict[str, tuple[Dim, ...]] = {}  # known contents of shape values
            self._loc_stack: list[tuple[str, int | None]] = []

    # ------------------------------------------------------------------ basics

    @property
    def opset(self) -> int:
        return self.root._opset

    def fresh(self, hint: str = "v") -> str:
        """A name unused anywhere in the model, derived from ``hint``."""
        root = self.root
        base = _NAME_RE.sub("_", hint) or "v"
        while True:
            root._counter += 1
            name = f"{base}_{root._counter}"
            if name not in root._taken:
                root._taken.add(name)
                return name

    def unused_name(self, name: str) -> str:
        """`name` when no value, input or output of the model has it yet, else a fresh one
        derived from it; not claimed yet (`add_output` claims it)."""
        if name not in self.root._taken:
            return name
        fresh = self.fresh(name)
        self.root._taken.discard(fresh)
        return fresh

    def _claim(self, name: str) -> bool:
        if name in self.root._taken:
            return False
        self.root._taken.add(name)
        return True

    def use_domain(self, domain: str, version: int = 1) -> None:
        """Declare a non-default operator domain (e.g. ``com.microsoft``)."""
        if domain:
            self.root._domains.setdefault(domain, version)

    # ------------------------------------------------------------------ location

    @contextlib.contextmanager
    def location(self, path: str, line: int | None) -> Iterator[None]:
        """Nodes made inside carry ``metadata_props["source"] = "path:line"``."""
        stack = self.root._loc_stack
        stack.append((path, line))
        try:
            yield
        finally:
            stack.pop()

    @property
    def current_location(self) -> tuple[str, int | None] | None:
        stack = self.root._loc_stack
        return stack[-1] if stack else None

    def error(self, message: str, hint: str | None = None, construct: str | None = None) -> LoweringError:
        """A ``LoweringError`` at the current source location (raise it)."""
        loc = self.current_location
        path, line = loc if loc is not None else (None, None)
        return LoweringError(message, path=path, line=line, construct=construct, hint=hint)

    # ------------------------------------------------------------------ inputs / outputs

    def add_input(self, name: str, dtype: torch.dtype, shape: Shape) -> Value:
        """A graph input.  The root graph keeps ``name`` exactly (it must be free);
        a subgraph (If/Loop body) makes it unique."""
        if self.parent is None:
            if not self._claim(name):
                raise ValueError(f"input name {name!r} is already used")
        elif not self._claim(name):
            name = self.fresh(name)
        v = Value(name, dtype, None if shape is None else tuple(shape))
        onnx_dtype(dtype)
        self.inputs.append(v)
        self._defined.add(name)
        return v

    _KEEP = object()

    def add_output(self, value: Value, name: str | None = None, *, shape: Any = _KEEP) -> Value:
        """Make ``value`` a graph output, renamed to ``name`` through an Identity when
        needed.  ``shape`` overrides the declared output shape (e.g. a Loop-carried value
        whose shape changes between iterations: pass ``None`` or dims with ``None``)."""
        if not isinstance(value, Value):
            raise GraphConstructionError(f"graph output must be a Value, got {value!r}")
        taken_as_output = {o.name for o in self.outputs}
        if name is None or name == value.name:
            if value.name in self._defined and value.name not in taken_as_output and value.name not in {
                i.name for i in self.inputs
            }:
                out = value
            else:
                out = self.op("Identity", value)
        else:
            if not self._claim(name):
                raise ValueError(f"output name {name!r} is already used")
            out = self._emit("Identity", [value], [name], {}, "")[0]
        if shape is not GraphBuilder._KEEP:
            out = dataclasses.replace(out, shape=None if shape is None else tuple(shape))
        self.outputs.append(out)
        return out


    # ------------------------------------------------------------------ subgraphs / model

    def subgraph(self, name: str | None = None) -> GraphBuilder:
        """A child builder for an If branch or Loop body.  Its nodes may read any value
        of the enclosing graphs by name; constants go to the root graph."""
        return GraphBuilder(self.opset, name=name or self.fresh("subgraph"), parent=self)

    def sees(self, value: Value) -> bool:
        """Whether a node of this graph may read ``value``: made here or in an enclosing
        graph, or an initializer."""
        b = self
        while b is not None:
            if value.name in b._defined:
                return True
            b = b.parent
        return value.name in self.root._initializers

    def build_graph(self, name: str | None = None, *, with_initializers: bool = True) -> onnx.GraphProto:
        """This builder's GraphProto (the root's with every initializer unless told
        otherwise).  A subgraph output that is not produced inside the subgraph (an outer
        value, a constant) is passed through an Identity."""
        nodes = list(self.nodes)
        outputs = []
        produced = set(self._defined)
        input_names = {i.name for i in self.inputs}
        seen: set[str] = set()
        for o in self.outputs:
            oname = o.name
            if self.parent is not None and (oname not in produced or oname in input_names or oname in seen):
                new = self.fresh("yield")
                node = helper.make_node("Identity", [oname], [new], name=self.fresh("Identity"))
                nodes.append(node)
                oname = new
            seen.add(oname)
            outputs.append(_value_info(oname, o.dtype, o.shape))
        initializers = list(self.root._initializers.values()) if self.parent is None and with_initializers else []
        return helper.make_graph(
            nodes,
            name or self.name,
            [_value_info(i.name, i.dtype, i.shape) for i in self.inputs],
            outputs,
            initializer=initializers,
        )

    def to_model(self, opset: int | None = None) -> onnx.ModelProto:
        """The model: dead nodes and unused initializers removed, shapes inferred, and
        ``onnx.checker.check_model(full_check=True)`` passed."""
        if self.parent is not None:
            raise GraphConstructionError("to_model() on a subgraph builder")
        if opset is not None and opset != self.opset:
            raise ValueError(f"this graph was built for opset {self.opset}, not {opset}")
        if not self.outputs:
            raise GraphConstructionError("the graph has no outputs")
        # The graph is pruned and made a model before the initializers join it: each
        # one (the weights) is then copied once, into the model, not once per step.
        graph = self.build_graph(self.name, with_initializers=False)
        return model_of(graph, self.opset, self.root._domains, self._initializers.values())

