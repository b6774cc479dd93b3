"""Python iteration over `.tolist()` of a tensor whose length is dynamic (issue 24): the
`for` (or `enumerate`, `zip`, a comprehension) is an ONNX Loop over the elements, each a
Python number in eager and a 0-d graph value gathered per iteration. Each model matches
eager on onnxruntime for 0, 1 and several items; the uses that cannot be a loop
(`torch.split(h, lengths.tolist())`, `sum(...)`, `[0]`, `torch.tensor(...)`) are refused."""

import re

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

t = torch.tensor
X = torch.arange(6.0)


class ForWithIf(nn.Module):
    def forward(self, x, lengths):
        total = x.new_zeros(())
        count = 0
        for n in lengths.tolist():
            if n > 0:
                total = total + x[:n].sum()
                count += n
        return total, count


class EnumerateCounts(nn.Module):
    def forward(self, x, counts):
        acc = torch.zeros_like(x)
        for i, c in enumerate(counts.tolist()):
            acc = acc + x * c * i
        return acc, len(counts.tolist())


class FloatAccumulator(nn.Module):
    def forward(self, x, weights):
        scale = 0.0
        for w in weights.tolist():
            scale += w * 0.5
        return x * scale


class ComprehensionOfSums(nn.Module):
    def forward(self, x, lengths):
        sums = [x[:n].sum() * 2 for n in lengths.tolist()]
        return torch.stack(sums)


class ZipWithRows(nn.Module):
    def forward(self, lengths, rows):
        acc = rows.new_zeros(())
        for n, row in zip(lengths.tolist(), rows):
            acc = acc + row.sum() * n
        return acc


class NestedRange(nn.Module):
    def forward(self, x, lengths):
        acc = x.new_zeros(())
        for n in lengths.tolist():
            for j in range(n):
                acc = acc + x[j]
        return acc


class TruthAndLength(nn.Module):
    def forward(self, x, lengths):
        items = lengths.tolist()
        if items:
            return x + len(items)
        return x - 1


def _lengths(*lists, dtype=torch.int64):
    return [t(v, dtype=dtype) for v in lists]


LENGTHS = _lengths([2, 0, 3], [], [4], [0, 0, 1, 5, -1])  # several, none, one; some skipped by the `if`
WEIGHTS = _lengths([2.0, 0.25, 3.0], [], [4.0], dtype=torch.float32)


@pytest.mark.parametrize("model, inputs, dynamic", [
    (ForWithIf(), [(X, n) for n in LENGTHS], {"lengths": {0: "n"}}),
    (EnumerateCounts(), [(X, w) for w in WEIGHTS], {"counts": {0: "n"}}),
    (FloatAccumulator(), [(X, w) for w in WEIGHTS], {"weights": {0: "n"}}),
    (ComprehensionOfSums(), [(X, n) for n in _lengths([2, 0, 3], [4])], {"lengths": {0: "n"}}),
    (ZipWithRows(), [(n, torch.randn(r, 3)) for n, r in zip(_lengths([2, 0, 3], [4], []), (2, 3, 3))],
     {"lengths": {0: "n"}, "rows": {0: "m"}}),
    (NestedRange(), [(X, n) for n in _lengths([2, 0, 3], [4], [])], {"lengths": {0: "n"}}),
    (TruthAndLength(), [(X, n) for n in _lengths([2, 0, 3], [])], {"lengths": {0: "n"}}),
], ids=["for-if", "enumerate", "float-number", "comprehension", "zip", "nested-range", "truth-len"])
def test_iteration_over_tolist_of_a_dynamic_length_is_a_loop(model, inputs, dynamic):
    proto = export(model, inputs[0], dynamic_shapes=dynamic)
    assert any(n.op_type == "Loop" for n in proto.graph.node) or isinstance(model, TruthAndLength)
    export_and_compare(model, inputs[0], inputs, dynamic_shapes=dynamic)


class UsesTolist(nn.Module):
    def __init__(self, use):
        super().__init__()
        self.use = use

    def forward(self, h, lengths):
        return self.use(h, lengths.tolist())


def _split(h, items):
    return torch.stack([p.sum(0) for p in torch.split(h, items)])


@pytest.mark.parametrize("use, what", [
    (_split, "passing to an operation"),
    (lambda h, items: h * sum(items), "iterating over"),
    (lambda h, items: h * max(items), "iterating over"),
    (lambda h, items: h * items[0], "`[0]`"),
    (lambda h, items: h * items[-1], "`[-1]`"),
    (lambda h, items: h * torch.tensor(items), "`torch.tensor`"),
    (lambda h, items: h * next(iter(items)), "iter()"),
], ids=["split", "sum", "max", "first", "last", "tensor", "iter"])
def test_uses_of_tolist_that_cannot_be_a_loop_are_refused(use, what):
    with pytest.raises(LoweringError) as info:
        export(UsesTolist(use), (torch.randn(6, 2), t([2, 4])), dynamic_shapes={"lengths": {0: "n"}, "h": {0: "m"}})
    err = info.value
    assert err.construct == "tolist" and err.path.endswith("test_tolist_loops.py") and err.line
    assert re.match(rf"{re.escape(what)}: `.tolist\(\)` of a tensor whose number of items is not known", err.message)
    assert "for n in t.tolist()" in err.hint and "segment reduction" in err.hint


class TolistOfAMatrix(nn.Module):
    def forward(self, boxes):
        total = boxes.new_zeros(())
        for x0, y0 in boxes.tolist():
            total = total + x0 * y0
        return total


def test_tolist_of_a_dynamic_matrix_is_refused():
    with pytest.raises(LoweringError, match="`.tolist\\(\\)` of a tensor whose shape is not known") as info:
        export(TolistOfAMatrix(), (torch.randn(3, 2),), dynamic_shapes={"boxes": {0: "n"}})
    assert info.value.construct == "tolist" and info.value.path.endswith("test_tolist_loops.py")
