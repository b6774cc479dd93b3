"""Emptiness tests of a local list after a loop (issue 12, the `get_rope_index` of
Qwen2.5-Omni / Qwen3-Omni): in the form of `test_precision_causes`, every line that must be
reported ends in `# expect: UTxxx`, its true-positive neighbour sits in the same program,
and the exact set of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# After a loop every pass of which appends, the list is empty exactly when the loop never
# ran: the test is decided by the trip count, which is the loop's own finding (UT102), as
# at the loop's head (`_ > 0`). So after an inner loop every pass of which appends, on every
# pass of the outer one, and after a loop left by a `break` before its first append (where
# it leaves is the loop's finding and the `break`'s UT101). A trace of such a loop agrees
# with eager on every input with the example's trip count.
case("list-emptiness-after-a-loop-every-pass-of-which-appends", """
    import torch
    import torch.nn as nn

    class Positions(nn.Module):
        def forward(self, input_ids, lengths):
            tokens = input_ids.tolist()  # expect: UT201
            parts = []
            st = 0
            for _ in range(int((input_ids > 5).sum())):  # expect: UT201, UT102
                start = parts[-1].max() + 1 if len(parts) > 0 else 0
                ed = tokens.index(7, st) if 7 in tokens[st:] else len(tokens)  # expect: UT101
                parts.append(torch.arange(1) + start)
                st = ed + 1
            if st < len(tokens):  # expect: UT101
                start = parts[-1].max() + 1 if len(parts) > 0 else 0
                parts.append(torch.arange(len(tokens) - st) + start)
            pieces = []
            for n in lengths.tolist():  # expect: UT201
                for k in range(n):  # expect: UT102
                    pieces.append(torch.arange(k))
                last = pieces[-1] if pieces else input_ids[:0]
            total = torch.cat(pieces).sum() if len(pieces) > 0 else input_ids.sum()
            stopped = []
            for i in range(int(input_ids.max())):  # expect: UT201, UT102
                if input_ids.sum() < i:  # expect: UT101
                    break
                stopped.append(input_ids[i])
            first = stopped[0] if stopped else input_ids[0]
            return torch.cat(parts) + total + last.sum() + first
""")

# The true-positive neighbours: an append under a data-dependent `if`, a list from
# `.tolist()` of a masked tensor, a list extended by such a list in every pass (the
# extension may be empty), one loop or another by a data-dependent `if` (the two loops'
# trip counts are not the same count), a `pop` before the `break`.
case("list-emptiness-after-a-loop-that-may-not-grow-it", """
    import torch
    import torch.nn as nn

    class Samples(nn.Module):
        def forward(self, input_ids):
            kept = []
            for i in range(int(input_ids.sum())):  # expect: UT201, UT102
                if input_ids.sum() > i:  # expect: UT101
                    kept.append(input_ids[i])
            first = kept[0] if len(kept) > 0 else input_ids[0]  # expect: UT101
            values = input_ids[input_ids > 0].tolist()  # expect: UT201
            if len(values) > 0:  # expect: UT101
                first = first + 1
            found = []
            for i in range(int(input_ids.max())):  # expect: UT201, UT102
                found.extend(input_ids[input_ids > i].tolist())  # expect: UT201
            if found:  # expect: UT101
                first = first + 2
            either = []
            if input_ids.sum() > 0:  # expect: UT101
                for i in range(int(input_ids.max())):  # expect: UT201, UT102
                    either.append(i)
            else:
                for i in range(int(input_ids.min())):  # expect: UT201, UT102
                    either.append(i)
            if either:  # expect: UT101
                first = first + 3
            stopped = []
            for i in range(int(input_ids.max())):  # expect: UT201, UT102
                stopped.append(input_ids[i])
                if input_ids.sum() < i:  # expect: UT101
                    stopped.pop()
                    break
            if stopped:  # expect: UT101
                first = first + 4
            return first
""")

# The loops those tests rest on: `range(n)` of a 0-d tensor reads it through `__index__`
# (a trace bakes the example's count in without a warning: eager 10, trace 6 for a count
# of positives 4 -> 3), so it is an escape (UT201) and a data loop (UT102), as
# `range(int(n))` is. A shape bound, or a tensor of constants, is neither.
case("range-of-a-tensor-count", """
    import torch
    import torch.nn as nn

    class Items(nn.Module):
        def forward(self, input_ids, grid):
            parts = []
            count = (input_ids == 5).sum()
            for _ in range(count):  # expect: UT201, UT102
                parts.append(input_ids[:1])
            if len(parts) > 0:
                parts.append(input_ids[:2])
            for _ in range(grid.shape[0]):
                parts.append(input_ids[:1])
            for _ in range(torch.tensor(3)):
                parts.append(input_ids[:1])
            for _ in range(0, count, 2):  # expect: UT201, UT102
                parts.append(input_ids[:1])
            return torch.cat(parts)
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
