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
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Union

import numpy as np
import onnx
import onnx.defs
import onnx.shape_inference
import torch
from onnx import TensorProto, helper, numpy_helper

from lowering.errors import GraphConstructionError, LoweringError
from lowering.model_checking import infer_and_check

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

Dim = Union[int, str, None]
Shape = Union[tuple[Dim, ...], None]

_TORCH_TO_ONNX: dict[torch.dtype, int] = {
    torch.float32: TensorProto.FLOAT,
    torch.float64: TensorProto.DOUBLE,
    torch.float16: TensorProto.FLOAT16,
    torch.bfloat16: TensorProto.BFLOAT16,
    torch.int8: TensorProto.INT8,
    torch.int16: TensorProto.INT16,
    torch.int32: TensorProto.INT32,
    torch.int64: TensorProto.INT64,
    torch.uint8: TensorProto.UINT8,
    torch.uint16: TensorProto.UINT16,
    torch.uint32: TensorProto.UINT32,
    torch.uint64: TensorProto.UINT64,
    torch.bool: TensorProto.BOOL,
    torch.complex64: TensorProto.COMPLEX64,
    torch.complex128: TensorProto.COMPLEX128,
}
_ONNX_TO_TORCH = {v: k for k, v in _TORCH_TO_ONNX.items()}

# A constant this small is handed to ONNX's per-node inference as known data, and its
# contents are tracked for shape arithmetic.
_MAX_PROPAGATED_ELEMENTS = 64


def onnx_dtype(dtype: torch.dtype) -> int:
    """The ONNX element type of a torch dtype (``LoweringError`` when there is none)."""
    try:
        return _TORCH_TO_ONNX[dtype]
    except KeyError:
        raise LoweringError(
            f"dtype {dtype} has no ONNX equivalent",
            hint="cast to float32, int64 or bool before this point",
        ) from None


def torch_dtype(elem_type: int) -> torch.dtype:
    """The torch dtype of an ONNX element type."""
    try:
        return _ONNX_TO_TORCH[elem_type]
    except KeyError:
        name = TensorProto.DataType.Name(elem_type) if elem_type else "UNDEFINED"
        raise GraphConstructionError(f"ONNX element type {name} has no torch dtype") from None


def is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def is_complex(dtype: torch.dtype) -> bool:
    return dtype.is_complex


def is_bool(dtype: torch.dtype) -> bool:
    return dtype == torch.bool


def is_int(dtype: torch.dtype) -> bool:
    """Integral, bool excluded."""
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)


@dataclasses.dataclass(frozen=True)
class Value:
    """A graph value: ONNX value name, torch dtype, shape (see the module docstring)."""

    name: str
    dtype: torch.dtype
    shape: Shape

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def static_shape(self) -> tuple[int, ...] | None:
        """The shape when every dim is a static int, else None."""
        if self.shape is None or not all(isinstance(d, int) for d in self.shape):
            return None
        return tuple(self.shape)  # type: ignore[return-value]

    def __bool__(self) -> bool:
        raise TypeError(
            f"graph value {self.name!r} has no truth value at export time "
            "(test `is None`, or emit an If)"
        )

    def __repr__(self) -> str:
        dims = "?" if self.shape is None else ",".join("?" if d is None else str(d) for d in self.shape)
        return f"Value({self.name}: {str(self.dtype).removeprefix('torch.')}[{dims}])"


def _type_proto(v: Value) -> onnx.TypeProto:
    return helper.make_tensor_type_proto(onnx_dtype(v.dtype), None if v.shape is None else list(v.shape))


def _value_info(name: str, dtype: torch.dtype, shape: Shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, onnx_dtype(dtype), None if shape is None else list(shape))


def _shape_from_type(tp: onnx.TypeProto) -> Shape:
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return None
    dims: list[Dim] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return tuple(dims)


def _merge_dims(a: Dim, b: Dim) -> Dim:
    """Two facts about the same dim: the more specific one wins (an int over a symbol)."""
    if isinstance(a, int):
        return a
    if isinstance(b, int):
        return b
    return a if a is not None else b


def _merge_shapes(inferred: Shape, ours: Shape) -> Shape:
    if inferred is None:
        return ours
    if ours is None or len(ours) != len(inferred):
        return inferred
    return tuple(_merge_dims(a, b) for a, b in zip(inferred, ours))


def _join_dims(a: Dim, b: Dim) -> Dim:
    """The dim of a value that is either a or b (If outputs)."""
    return a if a == b else None


_LOCAL_CONST_ELEMENTS = 64


def _tensor_to_proto(name: str, t: torch.Tensor) -> TensorProto:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        proto = TensorProto()
        proto.name = name
        proto.data_type = TensorProto.BFLOAT16
        proto.dims.extend(t.shape)
        proto.raw_data = t.view(torch.int16).numpy().tobytes()
        return proto
    onnx_dtype(t.dtype)  # refuses dtypes ONNX lacks
    return numpy_helper.from_array(t.numpy(), name)


def _tensor_key(t: torch.Tensor) -> tuple:
    t = t.detach().cpu().contiguous()
    raw = t.view(torch.int16) if t.dtype == torch.bfloat16 else t
    return (t.dtype, tuple(t.shape), raw.numpy().tobytes())


def _subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            yield from attr.graphs


def _prune_graph(graph: onnx.GraphProto) -> set[str]:
    """Drop the nodes (and initializers) no graph output depends on, subgraphs included.

    Returns the names the graph reads from enclosing scopes.
    """
    needed = {o.name for o in graph.output}
    live: list[onnx.NodeProto] = []
    for node in reversed(graph.node):
        if not any(o and o in needed for o in node.output):
            continue
        live.append(node)
        needed.update(i for i in node.input if i)
        for sub in _subgraphs(node):
            needed.update(_prune_graph(sub))
    live.reverse()
    del graph.node[:]
    graph.node.extend(live)
    kept = [init for init in graph.initializer if init.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    defined.update(o for n in graph.node for o in n.output)
    return needed - defined


_NAME_RE = re.compile(r"[^A-Za-z0-9_.]+")


class GraphBuilder:
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

    # ------------------------------------------------------------------ nodes

    def op(
        self,
        op_type: str,
        *inputs: Value | None,
        outputs: int = 1,
        domain: str = "",
        out_dtype: torch.dtype | Sequence[torch.dtype] | None = None,
        out_shape: Any = None,
        **attrs: Any,
    ) -> Value | tuple[Value, ...]:
        """Append one node; returns its output Value (a tuple when ``outputs > 1``)."""
        out_names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        dtypes = _per_output(out_dtype, outputs, "out_dtype")
        shapes = _per_output(out_shape, outputs, "out_shape")
        vals = self._emit(op_type, list(inputs), out_names, attrs, domain, dtypes, shapes)
        return vals[0] if outputs == 1 else tuple(vals)

    def _emit(self, op_type, inputs, out_names, attrs, domain, dtypes=None, shapes=None) -> list[Value]:
        in_vals: list[Value | None] = []
        for x in inputs:
            if x is None or isinstance(x, Value):
                in_vals.append(x)
            elif isinstance(x, (np.ndarray, np.generic, torch.Tensor)):
                in_vals.append(self.const(x))
            else:
                raise GraphConstructionError(
                    f"{op_type}: input {x!r} is not a Value (use g.as_value / g.const for Python scalars)"
                )
        while in_vals and in_vals[-1] is None:
            in_vals.pop()
        in_names = ["" if v is None else v.name for v in in_vals]
        onnx_attrs = {}
        for k, a in attrs.items():
            if a is None:
                continue
            if isinstance(a, torch.dtype):
                a = onnx_dtype(a)
            elif isinstance(a, (list, tuple)) and a and all(isinstance(e, torch.dtype) for e in a):
                a = [onnx_dtype(e) for e in a]
            onnx_attrs[k] = a
        node = helper.make_node(op_type, in_names, out_names, name=self.fresh(op_type), domain=domain or None, **onnx_attrs)
        if domain:
            self.use_domain(domain)
        loc = self.current_location
        if loc is not None:
            path, line = loc
            node.metadata_props.add(key="source", value=f"{path}:{line}" if line is not None else path)
        inferred = self._infer(node, in_vals, domain)
        results: list[Value] = []
        for i, name in enumerate(out_names):
            dt, shp = inferred[i] if i < len(inferred) else (None, None)
            want_dt = dtypes[i] if dtypes else None
            if want_dt is not None:
                if dt is not None and dt != want_dt:
                    raise GraphConstructionError(
                        f"{op_type}: output {i} is {dt} by ONNX inference, caller said {want_dt}"
                    )
                dt = want_dt
            if dt is None:
                raise GraphConstructionError(
                    f"{op_type}: cannot infer the dtype of output {i}; pass out_dtype="
                )
            if shapes and shapes[i] is not None:
                shp = tuple(shapes[i])
            results.append(Value(name, dt, shp))
        self.nodes.append(node)
        self._defined.update(out_names)
        self._propagate(node, in_vals, results)
        return results

    def _infer(self, node: onnx.NodeProto, in_vals: list[Value | None], domain: str) -> list[tuple[Any, Shape]]:
        op_type = node.op_type
        if op_type == "If":
            return self._infer_if(node)
        if op_type == "Loop":
            return self._infer_loop(node, in_vals)
        if any(True for _ in _subgraphs(node)):
            return []
        version = self.root._domains.get(domain or "", 1)
        try:
            schema = onnx.defs.get_schema(op_type, version, domain or "")
        except Exception:  # unknown op: the caller must say what comes out
            return []
        input_types = {}
        input_data = {}
        for v in in_vals:
            if v is None:
                continue
            input_types[v.name] = _type_proto(v)
            data = self._known_data(v)
            if data is not None:
                input_data[v.name] = data
        try:
            out = onnx.shape_inference.infer_node_outputs(
                schema,
                node,
                input_types,
                input_data,
                opset_imports=[helper.make_opsetid(d, ver) for d, ver in self.root._domains.items()],
            )
        except Exception as e:
            sig = ", ".join("None" if v is None else repr(v) for v in in_vals)
            raise GraphConstructionError(f"{op_type}({sig}) {dict((a.name, helper.get_attribute_value(a)) for a in node.attribute)}: {e}") from None
        result = []
        for name in node.output:
            tp = out.get(name)
            if tp is None or not tp.HasField("tensor_type") or not tp.tensor_type.elem_type:
                result.append((None, None))
            else:
                result.append((torch_dtype(tp.tensor_type.elem_type), _shape_from_type(tp)))
        return result

    @staticmethod
    def _graph_output_types(graph: onnx.GraphProto) -> list[tuple[torch.dtype, Shape]]:
        return [(torch_dtype(o.type.tensor_type.elem_type), _shape_from_type(o.type)) for o in graph.output]

    def _infer_if(self, node):
        branches = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
        then_t = self._graph_output_types(branches["then_branch"])
        else_t = self._graph_output_types(branches["else_branch"])
        result = []
        for (dt1, s1), (dt2, s2) in zip(then_t, else_t):
            if dt1 != dt2:
                raise GraphConstructionError(f"If: branch outputs disagree on dtype ({dt1} vs {dt2})")
            if s1 is None or s2 is None or len(s1) != len(s2):
                result.append((dt1, None))
            else:
                result.append((dt1, tuple(_join_dims(a, b) for a, b in zip(s1, s2))))
        return result

    def _infer_loop(self, node, in_vals):
        body = next(a.g for a in node.attribute if a.name == "body")
        outs = self._graph_output_types(body)
        n_carried = len(node.input) - 2
        result = []
        for i, (dt, s) in enumerate(outs[1:]):
            if i < n_carried:
                init = in_vals[2 + i] if 2 + i < len(in_vals) else None
                if init is not None and s is not None and init.shape is not None and len(s) == len(init.shape):
                    s = tuple(_join_dims(a, b) for a, b in zip(s, init.shape))
                result.append((dt, s))
            else:
                result.append((dt, None if s is None else (None, *s)))
        return result

    # ------------------------------------------------------------------ known data

    def _known_data(self, v: Value) -> TensorProto | None:
        root = self.root
        t = root._const_tensors.get(v.name)
        if t is not None and t.numel() <= _MAX_PROPAGATED_ELEMENTS:
            return _tensor_to_proto(v.name, t)
        content = root._content.get(v.name)
        if content is not None and all(isinstance(d, int) for d in content) and v.rank in (0, 1):
            arr = np.array(content, dtype=np.int64).reshape(() if v.rank == 0 else (len(content),))
            return numpy_helper.from_array(arr, v.name)
        return None

    def known_dims(self, v: Value) -> tuple[Dim, ...] | None:
        """What is known of the contents of a 1-d (or 0-d) int64 shape value: a tuple of
        int | str (symbolic dim) | None (unknown), or None when nothing is tracked."""
        return self.root._content.get(v.name) if isinstance(v, Value) else None

    def const_value(self, v: Any) -> torch.Tensor | None:
        """The tensor behind a constant made by ``const`` (never a parameter's)."""
        if not isinstance(v, Value):
            return None
        return self.root._const_tensors.get(v.name)

    def _propagate(self, node: onnx.NodeProto, ins: list[Value | None], outs: list[Value]) -> None:
        """Track contents of int64 shape values (Shape/Gather/Concat/... chains) and use
        them to name the output dims of Reshape/Expand/ConstantOfShape."""
        content = self.root._content
        op = node.op_type
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        known = [None if v is None else self._content_of(v) for v in ins]
        out = outs[0]
        new: tuple[Dim, ...] | None = None
        if op == "Shape" and ins[0].shape is not None:
            dims = ins[0].shape
            start = attrs.get("start", 0)
            end = attrs.get("end", len(dims))
            new = tuple(dims[slice(start, end)])
        elif op == "Identity" or (op == "Cast" and ins[0].dtype in (torch.int32, torch.int64) and out.dtype == torch.int64):
            new = known[0]
        elif op == "Gather" and known[0] is not None and known[1] is not None and attrs.get("axis", 0) == 0:
            idx = self._content_of(ins[1])
            if idx is not None and all(isinstance(i, int) for i in idx):
                try:
                    new = tuple(known[0][i] for i in idx)
                except IndexError:
                    new = None
        elif op == "Concat" and all(k is not None for k in known):
            new = tuple(d for k in known for d in k)
        elif op in ("Unsqueeze", "Squeeze", "Reshape") and known[0] is not None and out.rank in (0, 1):
            new = known[0]
        elif op == "Slice" and known[0] is not None and ins[0].rank == 1:
            params = [self._content_of(v) if v is not None else None for v in ins[1:]]
            if all(p is None or all(isinstance(e, int) for e in p) for p in params) and params and params[0] is not None:
                starts, ends = params[0], params[1] if len(params) > 1 else None
                steps = params[3] if len(params) > 3 and params[3] is not None else (1,)
                if ends is not None and len(starts) == 1:
                    n = len(known[0])
                    s, e, st = starts[0], ends[0], steps[0]
                    s = max(min(s, n), -n - 1) if st > 0 else s
                    e = max(min(e, n), -n - 1) if st > 0 else e
                    new = tuple(known[0][slice(s, e, st)])
        if new is not None and out.dtype == torch.int64 and out.rank in (0, 1):
            if out.rank == 0 and len(new) != 1:
                new = None
            if new is not None:
                content[out.name] = tuple(new)
        # Output shapes from known shape contents.
        improved: Shape = None
        if op == "ConstantOfShape" and known[0] is not None:
            improved = tuple(known[0])
        elif op == "Reshape" and len(known) > 1 and known[1] is not None:
            improved = _reshape_dims(ins[0].shape, known[1], attrs.get("allowzero", 0))
        elif op == "Expand" and len(known) > 1 and known[1] is not None:
            improved = _broadcast_dims(ins[0].shape, tuple(known[1]))
        if improved is not None:
            merged = _merge_shapes(out.shape, improved)
            if merged != out.shape:
                outs[0] = dataclasses.replace(out, shape=merged)
                # Values are frozen: callers get the improved one through _emit's list.

    def _content_of(self, v: Value) -> tuple[Dim, ...] | None:
        root = self.root
        if v.name in root._content:
            return root._content[v.name]
        t = root._const_tensors.get(v.name)
        if t is not None and t.dim() <= 1 and not t.dtype.is_floating_point and t.dtype != torch.bool and t.numel() <= _MAX_PROPAGATED_ELEMENTS:
            return tuple(int(e) for e in t.reshape(-1).tolist())
        return None

    # ------------------------------------------------------------------ constants

    def const(self, value: Any, dtype: torch.dtype | None = None) -> Value:
        """A constant, with ``torch.tensor(value, dtype=dtype)`` semantics for Python
        values (``1.5`` -> float32, ``2`` -> int64, ``True`` -> bool); numpy arrays and
        torch tensors keep their dtype unless ``dtype`` is given.  Deduplicated."""
        if isinstance(value, Value):
            raise GraphConstructionError(f"const() of a graph value {value!r}")
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu()
        elif isinstance(value, (np.ndarray, np.generic)):
            t = torch.from_numpy(np.ascontiguousarray(value))
        else:
            try:
                t = torch.tensor(value, dtype=dtype)
            except (TypeError, ValueError, RuntimeError, OverflowError) as e:
                raise LoweringError(f"cannot make a constant of {value!r}: {e}") from None
        if dtype is not None and t.dtype != dtype:
            t = t.to(dtype)
        onnx_dtype(t.dtype)
        root = self.root
        key = _tensor_key(t)
        if self.parent is not None and t.numel() <= _LOCAL_CONST_ELEMENTS:
            # Inside an If branch or Loop body, small constants are local Constant nodes:
            # ONNX's subgraph shape inference mis-reads outer initializers that feed shape
            # inputs (a Resize's `sizes` built by Concat is seen with 0 elements).
            hit = self._local_consts.get(key)
            if hit is not None:
                return hit
            name = self.fresh("const")
            root._const_tensors[name] = t.clone()
            v = self._emit("Constant", [], [name], {"value": _tensor_to_proto(name + "_value", t)}, "",
                           dtypes=[t.dtype], shapes=[tuple(t.shape)])[0]
            self._local_consts[key] = v
            return v
        hit = root._consts.get(key)
        if hit is not None:
            return hit
        name = self.fresh("const")
        root._initializers[name] = _tensor_to_proto(name, t)
        root._const_tensors[name] = t.clone()
        v = Value(name, t.dtype, tuple(t.shape))
        root._consts[key] = v
        return v

    def initializer(self, name: str, tensor: torch.Tensor) -> Value:
        """A parameter or buffer as an initializer that keeps ``name``; the same name
        twice gives the same Value (and must be the same tensor)."""
        root = self.root
        if name in root._init_values:
            old = root._init_tensors[name]
            same = old is tensor or (
                old.shape == tensor.shape and old.dtype == tensor.dtype and torch.equal(old, tensor.detach().cpu())
            )
            if not same:
                raise GraphConstructionError(f"initializer {name!r} defined twice with different tensors")
            return root._init_values[name]
        if not self._claim(name):
            raise GraphConstructionError(f"initializer name {name!r} is already used by another value")
        t = tensor.detach().cpu()
        root._initializers[name] = _tensor_to_proto(name, t)
        root._init_tensors[name] = t
        v = Value(name, t.dtype, tuple(t.shape))
        root._init_values[name] = v
        return v

    # ------------------------------------------------------------------ dtype promotion

    def result_type(self, *xs: Any) -> torch.dtype:
        """``torch.result_type`` over Values, tensors and Python scalars (None ignored):
        dimensioned tensors outrank 0-d tensors, which outrank Python scalars, within a
        category (bool < int < float < complex); a higher category always wins, a Python
        float becoming float32."""
        return result_type(*xs)

    def as_value(self, x: Any, like: Value | torch.dtype | None = None) -> Value:
        """``x`` as a Value.  A Python scalar becomes a constant of the dtype torch would
        give it next to ``like`` (``2`` next to float16 -> float16, ``2.5`` next to int64
        -> float32); without ``like``: bool, int64 or float32."""
        if isinstance(x, Value):
            return x
        if isinstance(x, (torch.Tensor, np.ndarray, np.generic)):
            return self.const(x)
        if isinstance(x, (bool, int, float)):
            if like is None:
                return self.const(x)
            like_dtype = like.dtype if isinstance(like, Value) else like
            return self.const(x, result_type(_DimTensor(like_dtype), x))
        raise LoweringError(f"cannot use {type(x).__name__} value {x!r} as a tensor operand")

    def promote(self, *xs: Any) -> tuple[Value, ...]:
        """Every operand as a Value of ``result_type(*xs)`` (scalars become constants)."""
        dt = result_type(*xs)
        out = []
        for x in xs:
            if isinstance(x, Value):
                out.append(self.cast(x, dt))
            else:
                out.append(self.const(x.to(dt) if isinstance(x, torch.Tensor) else x, dt))
        return tuple(out)

    def cast(self, v: Value, dtype: torch.dtype) -> Value:
        """``v`` converted to ``dtype`` (no node when it already is)."""
        if v.dtype == dtype:
            return v
        t = self.const_value(v)
        if t is not None:
            return self.const(t.to(dtype))
        return self.op("Cast", v, to=dtype)

    # ------------------------------------------------------------------ shapes

    def _lookup_shape(self, name: str) -> Value | None:
        b: GraphBuilder | None = self
        while b is not None:
            if name in b._shape_cache:
                return b._shape_cache[name]
            b = b.parent
        return None

    def shape_of(self, v: Value) -> Value:
        """The shape of ``v`` as a 1-d int64 Value (a constant when fully static)."""
        static = v.static_shape
        if static is not None:
            return self.const(list(static), torch.int64) if static else self.const(np.zeros((0,), np.int64))
        hit = self._lookup_shape(v.name)
        if hit is None:
            hit = self.op("Shape", v)
            self._shape_cache[v.name] = hit
        return hit

    def size(self, v: Value, dim: int) -> int | Value:
        """``v.shape[dim]``: an int when static, else a 0-d int64 Value."""
        rank = v.rank
        if rank is not None:
            if not -rank <= dim < max(rank, 1):
                raise LoweringError(f"dimension {dim} out of range for a tensor of rank {rank}")
            if rank == 0:
                raise LoweringError("a 0-d tensor has no dimensions")
            dim %= rank
            d = v.shape[dim]
            if isinstance(d, int):
                return d
        return self.op("Gather", self.shape_of(v), self.const(dim, torch.int64), axis=0)

    def numel(self, v: Value) -> int | Value:
        """The number of elements: an int when static, else a 0-d int64 Value."""
        static = v.static_shape
        if static is not None:
            return math.prod(static)
        return self.op("ReduceProd", self.shape_of(v), keepdims=0)

    def shape_tensor(self, dims: Iterable[int | Value]) -> Value:
        """A 1-d int64 Value from ints, 0-d int Values and 1-d int Values (for Reshape,
        Expand, ConstantOfShape, ...).  Symbolic dims stay graph values, never constants."""
        items = list(dims)
        if all(isinstance(d, int) and not isinstance(d, bool) for d in items):
            return self.const(np.array(items, dtype=np.int64).reshape(len(items)))
        pieces: list[Value] = []
        run: list[int] = []
        for d in items:
            if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
                run.append(int(d))
                continue
            if isinstance(d, torch.SymInt):  # pragma: no cover - never produced here
                raise GraphConstructionError("SymInt in shape_tensor")
            if not isinstance(d, Value):
                raise LoweringError(f"a shape entry must be an int or an integer scalar, got {d!r}")
            if d.dtype.is_floating_point or d.dtype == torch.bool:
                raise LoweringError(f"a shape entry must be an integer, got a {d.dtype} value")
            if run:
                pieces.append(self.const(np.array(run, dtype=np.int64)))
                run = []
            d = self.cast(d, torch.int64)
            if d.rank == 0:
                pieces.append(self.unsqueeze(d, [0]))
            elif d.rank == 1:
                pieces.append(d)
            else:
                raise LoweringError(f"a shape entry must be a scalar, got a rank-{d.rank} value")
        if run:
            pieces.append(self.const(np.array(run, dtype=np.int64)))
        out = pieces[0] if len(pieces) == 1 else self.op("Concat", *pieces, axis=0)
        if out.name not in self.root._content and all(isinstance(d, (int, np.integer)) or d.rank == 0 for d in items):
            # What is known of each entry (an int, a symbolic dim, None), for the shapes of
            # the ConstantOfShape / Expand / Reshape that take it.
            known = [(int(d),) if isinstance(d, (int, np.integer)) else self._content_of(d) or (None,) for d in items]
            self.root._content[out.name] = tuple(k[0] for k in known)
        return out

    def unsqueeze(self, v: Value, axes: Sequence[int]) -> Value:
        return self.op("Unsqueeze", v, self.const(list(axes), torch.int64))

    def squeeze(self, v: Value, axes: Sequence[int] | None = None) -> Value:
        return self.op("Squeeze", v, None if axes is None else self.const(list(axes), torch.int64))

    # ReduceSum takes axes as an input since opset 13, the other Reduce* since 18.
    _AXES_INPUT_SINCE = {"ReduceSum": 13}

    def reduce(self, op_type: str, x: Value, axes: Sequence[int] | None, keepdims: bool) -> Value:
        """``op_type`` (ReduceSum, ReduceMean, ReduceMax, ...) over ``axes`` (None: all),
        with axes as attribute or input as the opset requires."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.op(op_type, x, keepdims=keep)
        axes = [int(a) for a in axes]
        if self.opset >= self._AXES_INPUT_SINCE.get(op_type, 18):
            return self.op(op_type, x, self.const(axes, torch.int64), keepdims=keep)
        return self.op(op_type, x, axes=axes, keepdims=keep)

    # ------------------------------------------------------------------ subgraphs / model

    def subgraph(self, name: str | None = None) -> GraphBuilder:
        """A child builder for an If branch or Loop body.  Its nodes may read any value
        of the enclosing graphs by name; constants go to the root graph."""
        return GraphBuilder(self.opset, name=name or self.fresh("subgraph"), parent=self)

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


def model_of(graph: onnx.GraphProto, opset: int, domains: dict[str, int],
             initializers: Iterable[TensorProto]) -> onnx.ModelProto:
    """The model of a top-level graph (without its initializers) and its initializers:
    dead nodes and unused initializers removed, shapes inferred, and
    ``onnx.checker.check_model(full_check=True)`` passed."""
    read = _prune_graph(graph)  # the initializers any kept node reads among them
    ir = max(10, helper.find_min_ir_version_for([helper.make_opsetid("", opset)]))
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in domains.items()],
        ir_version=ir,
        producer_name="untrace",
    )
    kept = [init for init in initializers if init.name in read]
    return infer_and_check(model, kept)  # without shipping the weights to C++ and back


def _per_output(x: Any, n: int, what: str) -> list | None:
    if x is None:
        return None
    if n == 1:
        if what == "out_shape" and isinstance(x, tuple) and (not x or not isinstance(x[0], (tuple, list))):
            return [x]
        if what == "out_dtype" and isinstance(x, torch.dtype):
            return [x]
        if isinstance(x, list) and len(x) == 1:
            return x
        return [x]
    if not isinstance(x, (list, tuple)) or len(x) != n:
        raise GraphConstructionError(f"{what} must give one entry per output ({n})")
    return list(x)


def _reshape_dims(in_shape: Shape, target: tuple[Dim, ...], allowzero: int) -> Shape:
    dims: list[Dim] = []
    minus_one = None
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            dims.append(in_shape[i] if in_shape is not None and i < len(in_shape) else None)
        elif d == -1:
            minus_one = i
            dims.append(None)
        else:
            dims.append(d)
    if minus_one is not None and in_shape is not None:
        known_in = [d for d in in_shape]
        rest = [d for i, d in enumerate(dims) if i != minus_one]
        if all(isinstance(d, int) for d in known_in) and all(isinstance(d, int) for d in rest):
            denom = math.prod(rest)
            if denom:
                dims[minus_one] = math.prod(known_in) // denom
        elif len(rest) == len(known_in) - 1:
            # [a, b, S] -> [a, b, -1] style: the unknown dim is the one left over.
            remaining = list(known_in)
            for d in rest:
                if d in remaining:
                    remaining.remove(d)
                else:
                    remaining = None
                    break
            if remaining is not None and len(remaining) == 1:
                dims[minus_one] = remaining[0]
    return tuple(dims)


def _broadcast_dims(a: Shape, b: tuple[Dim, ...]) -> Shape:
    if a is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out: list[Dim] = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x == y:
            out.append(x)
        elif isinstance(x, int):
            out.append(x)
        elif isinstance(y, int):
            out.append(y)
        else:
            out.append(None)
    return tuple(out)


# ---------------------------------------------------------------------- result_type


class _DimTensor:
    """Stands for a dimensioned tensor of a dtype in ``result_type``."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: torch.dtype):
        self.dtype = dtype


def _promote(a: torch.dtype | None, b: torch.dtype | None) -> torch.dtype | None:
    if a is None:
        return b
    if b is None:
        return a
    return torch.promote_types(a, b)


def _combine(higher: torch.dtype | None, lower: torch.dtype | None) -> torch.dtype | None:
    # c10 combine_categories.
    if higher is not None and higher.is_complex:
        return higher
    if lower is not None and lower.is_complex:
        if higher is not None and higher.is_floating_point:
            return {torch.float64: torch.complex128}.get(higher, torch.complex64)
        return lower
    if higher is not None and higher.is_floating_point:
        return higher
    if higher == torch.bool or (lower is not None and lower.is_floating_point):
        return _promote(higher, lower)
    return higher if higher is not None else lower


def result_type(*xs: Any) -> torch.dtype:
    """torch.result_type generalised to any number of operands (see GraphBuilder)."""
    dim_t = zero_t = wrapped = None
    for x in xs:
        if x is None:
            continue
        if isinstance(x, _DimTensor):
            dim_t = _promote(dim_t, x.dtype)
        elif isinstance(x, Value):
            if x.rank == 0:
                zero_t = _promote(zero_t, x.dtype)
            else:
                dim_t = _promote(dim_t, x.dtype)
        elif isinstance(x, torch.Tensor):
            if x.dim() == 0:
                zero_t = _promote(zero_t, x.dtype)
            else:
                dim_t = _promote(dim_t, x.dtype)
        elif isinstance(x, bool):
            wrapped = _promote(wrapped, torch.bool)
        elif isinstance(x, int):
            wrapped = _promote(wrapped, torch.int64)
        elif isinstance(x, float):
            wrapped = _promote(wrapped, torch.get_default_dtype())
        elif isinstance(x, complex):
            wrapped = _promote(wrapped, torch.complex64)
        else:
            raise LoweringError(f"cannot use {type(x).__name__} value {x!r} as a tensor operand")
    out = _combine(dim_t, _combine(zero_t, wrapped))
    if out is None:
        raise LoweringError("result_type() of no tensor operands")
    return out
