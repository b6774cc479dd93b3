"""More causes of false alarms found by judging random findings on real code (issue 12,
`benchmarks/data/precision_sample_seed2.json` and what the earlier samples still showed),
in the form of `test_precision_causes`: every line that must be reported ends in
`# expect: UTxxx`, its true-positive neighbour sits in the same program, and the exact set
of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# An item picked from a Python list by a data index: what it holds is data, but when every
# item has the same length (every policy is a pair) a loop over it runs that many times.
case("picked-item-of-known-length", """
    import torch
    import torch.nn as nn

    class PolicyAugment(nn.Module):
        def __init__(self, policy):
            super().__init__()
            self._policies = self._get_policies(policy)
            self.groups = [(1, 2), (3, 4, 5)]

        def _get_policies(self, policy):
            if policy == "one":
                return [(("a", 0.4, 8), ("b", 0.6, 9)), (("b", 0.8, 8), ("a", 0.6, None))]
            elif policy == "two":
                return [(("a", 0.1, 2), ("a", 0.2, 3)), (("b", 0.3, 4), ("b", 0.2, 1)), (("a", 0.3, 4), ("b", 0.2, 1))]
            raise ValueError(policy)

        def forward(self, x):
            policy = self._policies[int(torch.randint(len(self._policies), ()))]  # expect: UT201
            for name, probability, level in policy:
                if not torch.rand(()) <= probability:  # expect: UT101
                    continue
                if level is not None:
                    x = x * level
            group = self.groups[int(x.argmax())]  # expect: UT201
            for g in group:  # expect: UT102
                x = x + g
            return x
""")

# Unpacking into a fixed number of names, through a comprehension: eager accepts only a
# `grid_hw` of two rows, so the unrolled iteration is right for every input it accepts
# (the escapes are the findings). A starred target or a filter keeps the iteration.
case("fixed-arity-through-comprehension", """
    import torch
    import torch.nn as nn

    class Rope(nn.Module):
        def positions(self, grid_hw):
            grid_h, grid_w = (int(value) for value in grid_hw)  # expect: UT201
            return torch.arange(grid_h * grid_w)

        def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
            pos = self.positions(grid_thw[0, 1:])
            h, w = [v * 2 for v in grid_thw[0, 1:]]
            first, *rest = (v + 1 for v in grid_thw[0])  # expect: UT105
            a, b = [v for v in x if v.sum() > 0]  # expect: UT105, UT101
            return pos, h * w, first, a + b
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
