"""A training target known by what is computed from it (issue 12, preview sample:
Wav2Vec2ForPreTraining's `if neg_is_pos.any():`, under `if sampled_negative_indices is not
None:`): the sampled negatives index features into logits, a test on them masks some
logits, and only the contrastive loss reads the logits, so the parameter is a training
target and what its None test guards is training-only code. In the form of
`test_precision_causes`: every line that must be reported ends in `# expect: UTxxx`, its
true-positive neighbours sit in the same program, and the exact set of (line, code) is
asserted, with the training-only hazards under `--extend-select UT106`."""

from __future__ import annotations

import re

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


LOSS_FLOW = """
    import torch
    import torch.nn as nn

    class PreTraining(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x, mask_time_indices=None, sampled_negative_indices=None):
            feats = self.proj(x)
            loss = None
            if sampled_negative_indices is not None:
                neg = feats.view(-1, 4)[sampled_negative_indices.long().view(-1)]
                logits = torch.cosine_similarity(feats, neg.view_as(feats), dim=-1)
                neg_is_pos = (feats == neg.view_as(feats)).all(-1)
                if neg_is_pos.any():  # expect-training: UT101
                    logits[neg_is_pos] = float("-inf")
                contrastive_loss = nn.functional.cross_entropy(logits, mask_time_indices)
                loss = contrastive_loss
            return feats, loss

    class ReturnsWhatItPicks(nn.Module):
        def forward(self, x, sampled_negative_indices=None):
            out = x
            loss = None
            if sampled_negative_indices is not None:
                picked = x[sampled_negative_indices]
                if picked.sum() > 0:  # expect: UT101
                    out = picked
                loss = picked.mean()
            return out, loss

    class StoresWhatItPicks(nn.Module):
        def __init__(self):
            super().__init__()
            self.seen = []

        def forward(self, x, sampled_negative_indices=None):
            loss = None
            if sampled_negative_indices is not None:
                picked = x[sampled_negative_indices]
                if picked.sum() > 0:  # expect: UT101
                    self.seen.append(picked)
                loss = picked.mean()
            return x, loss
"""
case("computed-from-a-training-target", re.sub(r"  # expect-training: UT\d{3}", "", LOSS_FLOW))
case("computed-from-a-training-target-reported",
     re.sub(r"# expect-training: UT\d{3}", "# expect: UT106", LOSS_FLOW), extend_select=["UT106"])


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
