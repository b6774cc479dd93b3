"""tensor_split / hsplit / vsplit / dsplit in a model's forward, exported with a dynamic
axis and compared with eager on onnxruntime at several sizes (sections that do not
divide the axis, more sections than elements, indices that clamp, overlap or are
computed from the shape), and the refusals."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class Sections(nn.Module):
    def forward(self, x):
        a, b, c = torch.tensor_split(x, 3, dim=1)
        p = x.tensor_split(5)  # more pieces than rows at n=3: the last ones are empty
        return a * 2, b, c.sum(1), *p


class Indices(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        head, mid, tail = x.tensor_split([1, n - 1])
        left, right = x.tensor_split(torch.tensor([2]), dim=-1)
        lo, empty, hi = x.tensor_split([3, 1], dim=1)  # overlapping pieces, one empty
        return head, mid, tail, left, right, lo, empty, hi


class IndexTensor(nn.Module):
    def forward(self, x, idx):
        return x.tensor_split(idx, dim=1)


class HVD(nn.Module):
    def forward(self, x):
        h1, h2 = torch.hsplit(x, [2])
        v = torch.vsplit(x, 2)
        d1, d2 = torch.dsplit(x, [1])
        return h1, h2, *v, d1, d2


def _x(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("rows", [3, 7, 8])
def test_sections_on_a_dynamic_axis(rows):
    inputs = [(_x(n, 5, seed=n),) for n in (rows, 1, 10)]
    export_and_compare(Sections(), inputs[0], inputs, dynamic_shapes={"x": {0: "n", 1: "m"}})


def test_indices_from_the_shape_and_a_constant_tensor():
    inputs = [(_x(n, 4, seed=n),) for n in (5, 2, 9)]
    export_and_compare(Indices(), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}})


def test_a_graph_index_tensor():
    x = _x(3, 9)
    inputs = [(x, torch.tensor([2, 5, 7])), (x, torch.tensor([-3, 1, 20])), (x, torch.tensor([6, 2, 4]))]
    export_and_compare(IndexTensor(), inputs[0], inputs)


def test_hsplit_vsplit_dsplit():
    export_and_compare(HVD(), (_x(4, 5, 3),))


class GraphSections(nn.Module):
    def forward(self, x, k):
        return x.tensor_split(k)


class DynamicIndexCount(nn.Module):
    def forward(self, x, idx):
        return x.tensor_split(idx)


@pytest.mark.parametrize("model, args, dynamic, message", [
    (GraphSections(), (_x(6, 2), torch.tensor(2)), None, "a 0-d tensor of sections computed in the graph"),
    (DynamicIndexCount(), (_x(6, 2), torch.tensor([1, 2])), {"idx": {0: "k"}}, "the number of indices"),
    (IndexTensor(), (_x(6, 2), torch.tensor([1], dtype=torch.int32)), None, "to have dtype of long"),
])
def test_refusals(model, args, dynamic, message):
    with pytest.raises(LoweringError, match=message):
        export(model, args, dynamic_shapes=dynamic)
