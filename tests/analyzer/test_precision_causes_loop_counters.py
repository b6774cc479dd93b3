"""A loop counter tested against the length of what its loop walks (issue 12, seed 5:
ESMFold2's `if i < len(chain_ids) - 1` inside `for i, chain_id in enumerate(chain_ids)`):
in the form of `test_precision_causes`, every line that must be reported ends in
`# expect: UTxxx`, its true-positive neighbour sits in the same program, and the exact set
of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# The test is True on every pass but the last: fixed by the pass and the number of passes,
# the loop's own finding (UT102). Against the length of another sequence, or of the walked
# one rebound in the loop, it is a test of data.
case("counter-against-the-walked-length", """
    import torch
    import torch.nn as nn

    class Chains(nn.Module):
        def forward(self, asym, ids):
            chain_ids = torch.unique(asym)
            parts = []
            for i, chain_id in enumerate(chain_ids):  # expect: UT102
                parts.append(ids[asym == chain_id])
                if i < len(chain_ids) - 1:
                    parts.append(ids[:1])
                if i + 1 == len(chain_ids):
                    parts.append(ids[:2])
            for j in range(len(chain_ids)):  # expect: UT102
                if j >= len(chain_ids) - 2:
                    parts.append(ids[:1])
            return torch.cat(parts)

    class Neighbours(nn.Module):
        def forward(self, asym, ids):
            chain_ids = torch.unique(asym)
            others = torch.unique(ids)
            parts = []
            for i, chain_id in enumerate(chain_ids):  # expect: UT102
                if i < len(others) - 1:  # expect: UT101
                    parts.append(ids[:1])
            for i, chain_id in enumerate(chain_ids):  # expect: UT102
                if i < len(chain_ids) - 1:  # expect: UT101
                    parts.append(ids[:1])
                chain_ids = chain_ids[1:]
            return torch.cat(parts)
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
