"""Causes of false alarms found by judging random findings on real code (issue 12,
`benchmarks/data/precision_sample_seed4.json`), in the form of `test_precision_causes`:
every line that must be reported ends in `# expect: UTxxx`, its true-positive neighbour
sits in the same program, and the exact set of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# The mixture-of-experts loop over the experts hit: the row indices `nonzero()` returns
# along the class axis of `one_hot(..., num_classes=self.num_experts)` are below
# `self.num_experts`, so `== self.num_experts` is never true and `!=` always is. With one
# class more (the expert-parallel sentinel) `== self.num_experts` can be true; without the
# permute that puts the class axis first the index is a token's, unbounded; the loop is a
# data loop in every form.
case("expert-index-below-the-class-count", """
    import torch
    import torch.nn as nn

    class Experts(nn.Module):
        def __init__(self, num_experts: int = 4):
            super().__init__()
            self.num_experts = num_experts

        def forward(self, hidden_states, router_indices):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(router_indices, num_classes=self.num_experts)
            expert_mask = expert_mask.permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                if expert_idx == self.num_experts:
                    continue
                if expert_idx != self.num_experts:
                    out = out + expert_idx
                if expert_idx == self.num_experts - 1:  # expect: UT101
                    out = out * 2
            return out

    class WithSentinel(nn.Module):
        def __init__(self, num_experts: int = 4):
            super().__init__()
            self.num_experts = num_experts

        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=self.num_experts + 1)
            expert_mask = expert_mask.permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                if expert_idx == self.num_experts:  # expect: UT101
                    continue
                out = out + expert_idx
            return out

    class TokenAxisFirst(nn.Module):
        def __init__(self, num_experts: int = 4):
            super().__init__()
            self.num_experts = num_experts

        def forward(self, hidden_states, router_indices):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(router_indices, num_classes=self.num_experts)
            expert_mask = expert_mask.permute(1, 2, 0)
            hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for idx in hit:  # expect: UT102
                idx = idx[0]
                if idx == self.num_experts:  # expect: UT101
                    continue
                out = out + idx
            return out

    class Shifted(nn.Module):
        def __init__(self, num_experts: int = 4):
            super().__init__()
            self.num_experts = num_experts

        def forward(self, hidden_states, router_indices):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(router_indices, num_classes=self.num_experts).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0] + 1
                if expert_idx == self.num_experts:  # expect: UT101
                    continue
                out = out + expert_idx
            return out
""")

# A position read from an arange over a size plus the cache length (a Python int): its
# `.item()` and the tests on it are known when traced, a shape matter; an arange whose
# bounds are tensor values stays data. Iterating either unrolls it (UT105).
case("position-from-an-arange-over-sizes", """
    import torch
    import torch.nn as nn

    class Positions(nn.Module):
        def forward(self, input_ids, cache=None):
            past_seen_tokens = 0 if cache is None else cache.get_seq_length()
            codebook_idx = torch.arange(input_ids.shape[1], device=input_ids.device) + past_seen_tokens
            out = []
            for position_idx in codebook_idx:  # expect: UT105
                position_idx = position_idx.item()
                if position_idx == 0:
                    out.append(input_ids[:, [position_idx]])
                else:
                    out.append(input_ids[:, [position_idx - past_seen_tokens]] + 1)
            return torch.cat(out, 1)

    class FromValues(nn.Module):
        def forward(self, input_ids):
            codebook_idx = torch.arange(input_ids[0, 0], input_ids[0, 1])
            out = []
            for position_idx in codebook_idx:  # expect: UT105
                position_idx = position_idx.item()  # expect: UT201
                if position_idx == 0:  # expect: UT101
                    out.append(input_ids[:, [position_idx]])
            return torch.cat(out, 1)
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
