"""`lowering.model_checking.infer_and_check`: shape inference and the checker without
the weights' bytes give exactly the model, and the refusals, of the whole model's."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from lowering import export
from lowering.model_checking import _without_weights, infer_and_check


def whole_path(model, initializers):
    model.graph.initializer.extend(initializers)
    model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def matmul_reshape(weight_shape=(64, 32), shape=(-1,)):
    """A model without initializers, and its initializers: a weight and a shape."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Reshape", ["y", "shape"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    rng = np.random.default_rng(0)
    return model, [numpy_helper.from_array(rng.standard_normal(weight_shape).astype(np.float32), "w"),
                   numpy_helper.from_array(np.array(shape, np.int64), "shape")]


def copies(model, initializers):
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy, [TensorProto.FromString(t.SerializeToString()) for t in initializers]


def test_the_model_is_the_whole_paths_byte_for_byte():
    model, initializers = matmul_reshape()
    want = whole_path(*copies(model, initializers)).SerializeToString()
    assert _without_weights(*copies(model, initializers), {"w"}) is not None  # the light path is the one taken
    assert infer_and_check(*copies(model, initializers)).SerializeToString() == want


def test_an_initializer_whose_values_inference_reads_sends_it_to_the_whole_path():
    model, initializers = matmul_reshape()
    # Reshape's shape, as a placeholder: ONNX refuses to read it, and the whole model decides.
    assert _without_weights(*copies(model, initializers), {"shape"}) is None


def test_an_ill_typed_model_raises_what_the_whole_path_raises():
    model, initializers = matmul_reshape(weight_shape=(48, 32))  # x is [batch, 64]
    with pytest.raises(onnx.shape_inference.InferenceError) as whole:
        whole_path(*copies(model, initializers))
    with pytest.raises(onnx.shape_inference.InferenceError) as light:
        infer_and_check(*copies(model, initializers))
    assert str(light.value) == str(whole.value)


def test_an_export_with_weights_matches_eager():
    import onnxruntime as ort

    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8)).eval()
    proto = export(net, (torch.randn(2, 64),), dynamic_shapes={"input": {0: "batch"}})
    assert {t.name for t in proto.graph.initializer} == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert all(t.data_location == TensorProto.DEFAULT and t.raw_data for t in proto.graph.initializer)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 5):
        x = torch.randn(batch, 64)
        (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
        np.testing.assert_allclose(got, net(x).detach().numpy(), rtol=1e-5, atol=1e-5)
