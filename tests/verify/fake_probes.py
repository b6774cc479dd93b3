"""Hand-built ONNX models with probe outputs, as ``lowering.export(probes=True)`` makes
them, so that coverage counting is tested independently of the lowering.

``branch_and_loop_model()``: input x: float[4]; outputs
  y                                  = x * 2 if sum(x) > 0 else x + 1
  probe|toy.py|3|if|branch           = [sum(x) > 0]                  (1-d, 1 or 0)
  probe|toy.py|7|while|trips         = [clip(round(max(x)), 0, 5)]   (a trip count)
  probe|toy.py|9|if|branch           = [-1] if sum(x) <= 0 else [x[0] > 0, x[1] > 0] (in a loop; -1 not reached)
"""

import numpy as np
import onnx
from onnx import TensorProto, helper

BRANCH = "probe|toy.py|3|if|branch"
TRIPS = "probe|toy.py|7|while|trips"
INNER = "probe|toy.py|9|if|branch"


def branch_and_loop_model() -> onnx.ModelProto:
    def const(name, value, dtype=np.int64):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(
            name + "_t", TensorProto.INT64 if dtype == np.int64 else TensorProto.FLOAT,
            np.shape(value), np.asarray(value, dtype).ravel().tolist()))

    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        const("zero", 0.0, np.float32),
        helper.make_node("Greater", ["s", "zero"], ["cond"]),
        helper.make_node("Cast", ["cond"], ["cond_i"], to=TensorProto.INT64),
        const("one_shape", [1]),
        helper.make_node("Reshape", ["cond_i", "one_shape"], [BRANCH]),
        const("two", 2.0, np.float32),
        const("onef", 1.0, np.float32),
        helper.make_node("Mul", ["x", "two"], ["doubled"]),
        helper.make_node("Add", ["x", "onef"], ["plus"]),
        helper.make_node("Where", ["cond", "doubled", "plus"], ["y"]),
        helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
        helper.make_node("Round", ["mx"], ["mr"]),
        const("lo", 0.0, np.float32),
        const("hi", 5.0, np.float32),
        helper.make_node("Clip", ["mr", "lo", "hi"], ["mc"]),
        helper.make_node("Cast", ["mc"], ["trips_s"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["trips_s", "one_shape"], [TRIPS]),
        # the inner probe: two iterations when reached, [-1] otherwise
        const("idx", [0, 1]),
        helper.make_node("Gather", ["x", "idx"], ["x01"]),
        helper.make_node("Greater", ["x01", "lo"], ["inner_c"]),
        helper.make_node("Cast", ["inner_c"], ["inner_i"], to=TensorProto.INT64),
        const("minus1", [-1]),
        helper.make_node("If", ["cond"], [INNER],
                         then_branch=helper.make_graph(
                             [helper.make_node("Identity", ["inner_i"], ["t_out"])], "then", [],
                             [helper.make_tensor_value_info("t_out", TensorProto.INT64, [None])]),
                         else_branch=helper.make_graph(
                             [helper.make_node("Identity", ["minus1"], ["e_out"])], "else", [],
                             [helper.make_tensor_value_info("e_out", TensorProto.INT64, [None])])),
    ]
    graph = helper.make_graph(
        nodes, "fake_probes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info(BRANCH, TensorProto.INT64, [None]),
         helper.make_tensor_value_info(TRIPS, TensorProto.INT64, [None]),
         helper.make_tensor_value_info(INNER, TensorProto.INT64, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


class FakeEquivalent:
    """The eager module the fake model computes (for verify with onnx_model=...)."""

    @staticmethod
    def build():
        import torch

        class Equivalent(torch.nn.Module):
            def forward(self, x):
                return torch.where(x.sum() > 0, x * 2, x + 1)

        return Equivalent()
