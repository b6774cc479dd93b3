"""The causes of false alarms found by judging random findings on real code (issue 12,
`benchmarks/data/precision_sample_*.json`), each as small programs in the style of the
corpora: every line that must be reported ends in `# expect: UTxxx`, and the lines that
must not be reported sit in the same program. The exact set of (line, code) is asserted,
each reported once, with the default rules unless a case says otherwise."""

from __future__ import annotations

import re
import textwrap
from collections import Counter

import pytest

from analyzer import check_source

EXPECT = re.compile(r"#\s*expect:\s*(UT\d{3}(?:\s*,\s*UT\d{3})*)")


def expected(source: str) -> set[tuple[int, str]]:
    out = set()
    for lineno, line in enumerate(source.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, c.strip()) for c in m.group(1).split(",")}
    return out


CASES: dict[str, tuple[str, dict]] = {}


def case(name: str, source: str, **options) -> None:
    CASES[name] = (textwrap.dedent(source).lstrip("\n"), options)


# (1) An `is None` test is never data: the branch that decided None-ness is the finding.
case("is-none", """
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def forward(self, x, attention_mask=None, bias=None):
            if x.sum() > 0:  # expect: UT101
                bias = x.mean()
            if attention_mask is None:
                attention_mask = torch.ones_like(x)
            if bias is not None and attention_mask is not None:
                x = x + bias
            mask = attention_mask if attention_mask is not None else x
            return x * mask
""")

# (8) The rank is static: `ndim` / `dim()` of any tensor, even one sized by data.
case("rank-is-static", """
    import torch
    import torch.nn as nn

    class Norm(nn.Module):
        def forward(self, x):
            if x.ndim < 3:
                raise ValueError("expected (N, C, H, W)")
            idx = torch.nonzero(x > 0)
            if idx.dim() == 2 and x.ndimension() == 4:
                x = x * 2
            if idx.shape[0] > 0:  # expect: UT101
                x = x + 1
            return x
""")

# `enumerate(t)` yields (index, row) pairs: unpacking one is no tensor unpacking (the
# iteration over the tensor is the finding, once).
case("enumerate-pairs", """
    import torch
    import torch.nn as nn

    class Pool(nn.Module):
        def forward(self, x, lengths: torch.Tensor):
            out = []
            for i, n in enumerate(lengths):  # expect: UT105
                out.append(x[i, :n].mean(0))
            return torch.stack(out)
""")


@pytest.mark.parametrize("name", sorted(CASES))
def test_cause(name):
    source, options = CASES[name]
    got = Counter((d.line, d.code) for d in check_source(source, path=f"{name}.py", **options))
    want = Counter(expected(source))
    assert sorted((got - want).elements()) == [], "reported but not marked (or reported twice)"
    assert sorted((want - got).elements()) == [], "marked but not reported"
