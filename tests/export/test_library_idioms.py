"""Idioms of library code that forward runs through (transformers' decorators and
helpers): builtins over tensors and objects, Python's own library run for real,
lru_cache'd helpers, parametrized modules, a forward parameter left to its default.
Each exports and matches eager on onnxruntime on several inputs."""

import functools
import re
import threading

import torch
from torch import nn
from torch.nn.utils import parametrizations

from lowering import export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "batch"}}


def _inputs(*shapes):
    return [(torch.randn(*s),) for s in shapes]


class Builtins(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        scale = 1.0
        if type(x) is torch.Tensor and callable(self.linear) and hasattr(x, "shape") and not hasattr(x, "jax"):
            scale = scale + 1
        items = iter([x, x * 2])
        return next(items) * scale + next(items)


@functools.lru_cache
def _is_available() -> bool:
    return True


@functools.lru_cache
def _scaled(x, k: int):
    return x * k


_PATTERN = re.compile(r"(\d+)\.(\d+)")
_LOCK = threading.Lock()


class PythonLibrary(nn.Module):
    def forward(self, x):
        major = int(_PATTERN.fullmatch("2.13").group(1))
        with _LOCK:
            y = x * major
        if _is_available():
            y = y + 1
        return y


class AndOfAGraphBool(nn.Module):
    """sdpa's `is_causal = q_length > 1 and attention_mask is None and is_causal`."""

    def forward(self, x, mask=None):
        causal = x.shape[0] > 1 and mask is None and False
        return x + 1 if causal else x - 1


class DefaultsThenKeywords(nn.Module):
    def forward(self, ids, cache=None, mask=None):
        assert cache is None
        return ids * mask


class Parametrized(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = parametrizations.weight_norm(nn.Conv1d(2, 3, 3), name="weight", dim=2)

    def forward(self, x):
        return self.conv(x)


class Tree(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 3)

    def forward(self, x):
        for name, child in self.named_children():
            x = child(x) if name != "b" else x + child(x)
        return x


def test_builtins_over_tensors_and_objects():
    inputs = _inputs((2, 3), (5, 3))
    export_and_compare(Builtins().eval(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


def test_pythons_library_and_cached_helpers():
    inputs = _inputs((2, 3), (5, 3))
    export_and_compare(PythonLibrary(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


def test_an_lru_cached_helper_on_tensors_is_read_from_source():
    class UsesCachedOnTensor(nn.Module):
        def forward(self, x):
            return _scaled(x, 3)

    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(UsesCachedOnTensor(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


def test_and_of_a_graph_bool_with_false_is_false():
    inputs = _inputs((2, 3), (1, 3), (4, 3))
    proto = export(AndOfAGraphBool(), inputs[0], dynamic_shapes=DYNAMIC)
    assert not [n for n in proto.graph.node if n.op_type == "If"]
    export_and_compare(AndOfAGraphBool(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


def test_a_parameter_left_to_its_default_does_not_shift_the_next():
    example = (torch.randn(2, 4),)
    kwargs = {"mask": torch.randn(2, 4)}
    proto = export(DefaultsThenKeywords(), example, kwargs=kwargs, dynamic_shapes={"ids": {0: "b"}, "mask": {0: "b"}})
    import onnxruntime as ort

    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for b in (2, 3):
        ids, mask = torch.randn(b, 4), torch.randn(b, 4)
        (got,) = session.run(None, {"ids": ids.numpy(), "mask": mask.numpy()})
        torch.testing.assert_close(torch.from_numpy(got), ids * mask)


def test_a_parametrized_module_lowers_as_the_module_it_was_made_from():
    model = Parametrized().eval()
    inputs = _inputs((2, 2, 7), (3, 2, 7))
    export_and_compare(model, inputs[0], inputs, dynamic_shapes=DYNAMIC)


def test_children_of_the_live_module_tree():
    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(Tree().eval(), inputs[0], inputs, dynamic_shapes=DYNAMIC)
