"""Hazards missed of issue 23, each in its general form (the semantics of Python and
PyTorch, not an idiom of one library), in the form of `test_recall_causes`: every line
that must be reported ends in `# expect: UTxxx`, the neighbour that must stay quiet sits
unmarked in the same program, and the exact multiset of (line, code) is asserted.
Checked with every rule (`--select ALL`) unless a case says otherwise."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()


def case(name: str, source: str, **options) -> None:
    CASES.add(name, source, **({"select": ["ALL"]} | options))


# An attribute whose value is not known (the result of a helper that returns either the
# value or a pair of it, a None-default constructor parameter) may be a size: a test of a
# shape against it, or against arithmetic on it (`math.ceil(H / ph)`), is a shape test.
# Unknown stays unknown: alone, it decides nothing.
case("unknown-attribute-against-a-shape", """
    import collections.abc
    import math
    from itertools import repeat

    import torch
    import torch.nn as nn

    def _ntuple(n):
        def parse(x):
            if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
                return tuple(x)
            return tuple(repeat(x, n))
        return parse

    to_2tuple = _ntuple(2)

    def pair(x):
        return x if isinstance(x, collections.abc.Iterable) else (x, x)

    class Patches(nn.Module):
        def __init__(self, patch_size=2, window=None):
            super().__init__()
            self.patch_size = to_2tuple(patch_size)
            self.stride = pair(patch_size)
            self.window = window

        def forward(self, x):
            B, C, H, W = x.shape
            ph, pw = self.patch_size
            new_h = math.ceil(H / ph) * ph
            if new_h != H:  # expect: UT103
                x = x[:, :, :new_h]
            sh, sw = self.stride
            if W % sw:  # expect: UT103
                x = x + 1
            if self.window is not None and H > self.window:  # expect: UT103
                x = x * 2
            if self.window is not None and self.window > 4:
                x = x - 1
            if ph > 1:
                x = x / 2
            return x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.small = Patches(window=7)
            self.plain = Patches()

        def forward(self, x):
            return self.small(x) + self.plain(x)
""")


@pytest.mark.parametrize("name", CASES.names())
def test_recall(name):
    CASES.check(name)
