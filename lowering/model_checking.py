"""Shape inference and the checker of a finished model, without shipping its weights.

`onnx.shape_inference.infer_shapes` and `onnx.checker.check_model(full_check=True)`
each serialize the whole model for C++ and (inference) parse its answer back: for a
model with 240 MB of weights that was most of the export. `infer_and_check` gives the
model those two calls give, and passes or raises as they do, while the weights' bytes
stay out of both:

- Shape inference sees each weight (a floating-point initializer of 4 KiB or more) as
  a placeholder of the same name, type and dims whose data is external. Inference reads
  an initializer's values only for the inputs that shape an output (Reshape's shape,
  Resize's scales, ...); ONNX refuses to read a placeholder's ("Cannot parse data from
  external tensors"), and then the whole model is inferred as before. When it needs none,
  the types and shapes it infers are the same, and the weights are put back in the
  placeholders' places.
- The checker checks the inferred model with the weights as graph inputs of their own
  type (its own shape inference then reads no weight either, as above), and each weight
  alone with `onnx.checker.check_tensor`, which is what it checks of an initializer.
- Anything refused on this path is decided by the whole model's inference and check,
  which then raise what they raise; so is a model of 2 GiB or more, which they refuse.
"""

from __future__ import annotations

import math

import onnx
import onnx.shape_inference
from onnx import TensorProto, helper

_WEIGHT_BYTES = 4096
_WEIGHT_TYPES = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2, TensorProto.BFLOAT16: 2, TensorProto.DOUBLE: 8}  # bytes
_PLACEHOLDER = "untrace-weight-placeholder"


def infer_and_check(model: onnx.ModelProto, initializers: list[TensorProto]) -> onnx.ModelProto:
    """`model` (a graph without initializers) with `initializers` added, shape-inferred
    and checked: what `infer_shapes(check_type=True, strict_mode=True)` and then
    `check_model(full_check=True)` of the whole model give."""
    weights = {t.name for t in initializers if _raw_bytes(t) >= _WEIGHT_BYTES}
    # (the bytes of a weight, not its ByteSize(), which costs a serialization)
    size = model.ByteSize() + sum(_raw_bytes(t) + 1024 if t.name in weights else t.ByteSize() for t in initializers)
    if weights and size < onnx.checker.MAXIMUM_PROTOBUF - 2**20:  # field tags: well below, or the whole path
        light = _without_weights(model, initializers, weights)
        if light is not None:
            return light
    model.graph.initializer.extend(initializers)
    model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def _without_weights(model, initializers, weights: set[str]) -> onnx.ModelProto | None:
    light = onnx.ModelProto()
    light.CopyFrom(model)
    for t in initializers:
        light.graph.initializer.append(_placeholder(t) if t.name in weights else t)
    try:
        inferred = onnx.shape_inference.infer_shapes(light, check_type=True, strict_mode=True)
        _check(inferred, weights)
        for t in initializers:
            if t.name in weights:
                onnx.checker.check_tensor(t)
    except Exception:  # noqa: BLE001 - the whole model decides, and raises what it raises
        return None
    real = {t.name: t for t in initializers if t.name in weights}
    for placeholder in inferred.graph.initializer:
        if placeholder.name in real:
            placeholder.CopyFrom(real[placeholder.name])
    return inferred


def _raw_bytes(t: TensorProto) -> int:
    """The length of a floating-point tensor's raw data, from its dims (reading the field
    would copy it); 0 for any other tensor."""
    itemsize = _WEIGHT_TYPES.get(t.data_type)
    if itemsize is None or not t.HasField("raw_data") or t.data_location == TensorProto.EXTERNAL:
        return 0
    return math.prod(t.dims) * itemsize


def _placeholder(t: TensorProto) -> TensorProto:
    placeholder = TensorProto(name=t.name, data_type=t.data_type, dims=t.dims, data_location=TensorProto.EXTERNAL)
    placeholder.external_data.add(key="location", value=_PLACEHOLDER)
    return placeholder


def _check(inferred: onnx.ModelProto, weights: set[str]) -> None:
    """The checker over `inferred` with its weight placeholders as graph inputs."""
    checked = onnx.ModelProto()
    checked.CopyFrom(inferred)
    kept = [t for t in checked.graph.initializer if t.name not in weights]
    moved = [t for t in checked.graph.initializer if t.name in weights]
    del checked.graph.initializer[:]
    checked.graph.initializer.extend(kept)
    checked.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in moved)
    onnx.checker.check_model(checked, full_check=True)
