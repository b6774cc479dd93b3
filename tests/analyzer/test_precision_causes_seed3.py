"""Causes of false alarms found by judging random findings on real code (issue 12,
`benchmarks/data/precision_sample_seed3.json`), in the form of `test_precision_causes`:
every line that must be reported ends in `# expect: UTxxx`, its true-positive neighbour
sits in the same program, and the exact set of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# Emptiness tests of a list the function builds: where every path before the test appends
# (the bos entry just above) the outcome is the same for every input; at the head of a
# loop whose every pass appends (an `if`/`elif` chain over `m == a`, `m == b` for
# `m = min(a, b)` has no fall-through) it is empty exactly on the first pass, `_ > 0`.
# After an append under a data-dependent `if`, and after a data loop, the length is data.
case("list-emptiness-fixed-by-position", """
    import torch
    import torch.nn as nn

    class Positions(nn.Module):
        def forward(self, input_ids, use_pairs: bool = False):
            tokens = input_ids.tolist()  # expect: UT201
            parts = []
            st = 0
            for _ in range(int((input_ids > 5).sum())):  # expect: UT201, UT102
                start = parts[-1].max() + 1 if len(parts) > 0 else 0
                ed_a = tokens.index(7, st) if 7 in tokens[st:] else len(tokens)  # expect: UT101
                ed_b = tokens.index(8, st) if 8 in tokens[st:] else len(tokens)  # expect: UT101
                first = min(ed_a, ed_b)
                if first == ed_a:  # expect: UT101
                    gap = first - st
                    if gap != 0:  # expect: UT101
                        start = parts[-1].max() + 1 if len(parts) > 0 else 0
                        parts.append(torch.arange(gap) + start)
                    start = parts[-1].max() + 1 if len(parts) > 0 else 0  # expect: UT101
                    parts.append(torch.arange(1) + start)
                    start = parts[-1].max() + 1 if len(parts) > 0 else 0
                    parts.append(torch.arange(2) + start)
                    st = first + 1
                elif first == ed_b and use_pairs:  # expect: UT101
                    parts.append(torch.arange(1))
                    st = first + 1
                elif first == ed_b and not use_pairs:  # expect: UT101
                    start = parts[-1].max() + 1 if len(parts) > 0 else 0
                    parts.append(torch.arange(1) + start)
                    if not parts:
                        parts.append(torch.arange(3))
                    st = first + 1
            if len(parts) > 0:  # expect: UT101
                start = parts[-1].max() + 1
            return torch.cat(parts)
""")

# Without the chain being exhaustive a pass may append nothing: the head test is data.
case("list-emptiness-after-a-pass-that-may-not-append", """
    import torch
    import torch.nn as nn

    class Positions(nn.Module):
        def forward(self, input_ids):
            parts = []
            for i in range(int(input_ids.sum())):  # expect: UT201, UT102
                start = parts[-1].max() + 1 if len(parts) > 0 else 0  # expect: UT101
                if input_ids.sum() > i:  # expect: UT101
                    parts.append(torch.arange(1) + start)
                elif input_ids.max() > i:  # expect: UT101
                    parts.append(torch.arange(2) + start)
            for i in range(int(input_ids.max())):  # expect: UT201, UT102
                parts.append(input_ids[:1])
                parts.pop()
                if len(parts) > 1:  # expect: UT101
                    parts.append(torch.arange(1))
            grown = []
            for i in range(int(input_ids.max())):  # expect: UT201, UT102
                alias = grown
                grown.append(input_ids[:1])
                alias.clear()
                if len(grown) > 0:  # expect: UT101
                    grown.append(torch.arange(1))
            return torch.cat(parts)
""")

# A branch whose only effect is a message: nothing the trace records depends on it. One
# that raises, or that logs and also computes, is still a branch of the graph.
case("branch-that-only-logs", """
    import logging
    import warnings

    import torch
    import torch.nn as nn

    logger = logging.getLogger(__name__)

    class Decoder(nn.Module):
        def forward(self, input_ids, position_ids):
            first = position_ids[0] == 0
            if first and input_ids.sum() > 3:
                logger.warning("the first codebook token needs the backbone state")
            elif input_ids.max() > 9:
                warnings.warn("large ids")
            if (input_ids < 0).any():
                print("negative ids")
            if input_ids.min() < -5:  # expect: UT101
                raise ValueError("ids must be non-negative")
            if input_ids.sum() > 100:  # expect: UT101
                logger.warning("long input")
                input_ids = input_ids[:100]
            return input_ids * 2
""")

# `torch.randperm(n)` / `torch.arange(n)` of an `n` the model fixes has n rows for every
# input: iterating it is no unrolling over the example's size. Of a size read from the
# input it is.
case("counted-range-of-a-model-size", """
    import torch
    import torch.nn as nn

    class RandomOrder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, x):
            for idx in torch.randperm(len(self.blocks)):
                x = x * 2
            for i in torch.arange(0, 3):
                x = x + i
            for i in torch.arange(x.shape[0]):  # expect: UT105
                x = x + i
            for row in list(torch.arange(x.shape[1])):  # expect: UT105
                x = x + row
            return x
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
