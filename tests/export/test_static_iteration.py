"""Python iteration helpers and legacy constructors over static data (issue 24):
`itertools.zip_longest` of ranges, tuples and ModuleLists pairs them as Python does (the
fill value where one runs out); over the rows of a dynamic axis, where the lengths are the
run time's, it is refused. `torch.FloatTensor([0.5])` and its kin of Python data are
constants of their dtype; given sizes (uninitialised memory) they are refused. Each model
matches eager on onnxruntime."""

from itertools import zip_longest

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class Stages(nn.Module):
    """Fewer position tables than stages: the missing ones are None (the fill value)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
        self.pos = (torch.ones(3), torch.arange(3.0))

    def forward(self, x):
        outs = []
        for i, pos, layer in zip_longest(range(3), reversed(self.pos), self.layers):
            h = layer(x) * (i + 1)
            outs.append(h if pos is None else h + pos)
        for a, b in zip_longest(x, (1.0,), fillvalue=-2.0):  # rows of a static axis
            outs.append(x * (a.sum() * b))
        return torch.stack(outs)


class DynamicRows(nn.Module):
    def forward(self, x):
        return torch.stack([a * b for a, b in zip_longest(x, (1.0, 2.0), fillvalue=0.0)])


def test_zip_longest_of_static_sequences_pairs_as_python():
    export_and_compare(Stages().eval(), (torch.randn(2, 3),), [(torch.randn(2, 3),), (torch.randn(2, 3),)])


def test_zip_longest_over_the_rows_of_a_dynamic_axis_is_refused():
    with pytest.raises(LoweringError, match="zip_longest"):
        export(DynamicRows(), (torch.randn(3, 2),), dynamic_shapes={"x": {0: torch.export.Dim("n", min=1)}})


class LegacyConstructors(nn.Module):
    """`torch.FloatTensor([0.5])` and its kin of Python data: a constant of that dtype."""

    def forward(self, x):
        scale = torch.sqrt(torch.FloatTensor([0.5]).to(x.device))
        index = torch.LongTensor([[1, 0], [0, 1]])
        flags = torch.BoolTensor([True, False])
        return x * scale, index + x.shape[0], flags, torch.IntTensor((1.7, 2)), torch.DoubleTensor([1, 2]) * 3


class UninitialisedLegacy(nn.Module):
    def forward(self, x):
        return x + torch.FloatTensor(2, 3)  # sizes: uninitialised memory


def test_legacy_typed_constructors_of_python_data_are_constants_of_their_dtype():
    export_and_compare(LegacyConstructors().eval(), (torch.randn(2),), [(torch.randn(2),), (torch.randn(2),)])


def test_a_legacy_constructor_given_sizes_is_refused():
    with pytest.raises(LoweringError, match="legacy typed constructor"):
        export(UninitialisedLegacy(), (torch.randn(2, 3),))
