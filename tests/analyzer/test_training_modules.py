"""Modules only training runs -- a loss, and the matchers and assigners only a loss calls --
are recognised by their name or their bases' (`torch_api.TRAINING_MODULE_SUFFIXES`): no
eval-mode export runs their forward, so its hazards are UT106 (off by default), like the
code under `if self.training:`."""

from __future__ import annotations

import re

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()

SOURCE = """
    import torch
    import torch.nn as nn

    class HungarianMatcher(nn.Module):
        def forward(self, logits, targets):
            out = []
            for t in targets:
                if t["labels"].numel() == 0:
                    continue
                out.append(logits[:, t["labels"]].argmax(0).tolist())  # expect-training: UT201
            return out

    class DetectionLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.matcher = HungarianMatcher()

        def forward(self, logits, boxes):
            num = boxes.shape[0]
            if boxes.sum() > 0:  # expect-training: UT101
                num = num + 1
            return logits.sum() / num

    class FocalLoss(nn.modules.loss._Loss):
        def forward(self, x):
            return x.mean().item()  # expect-training: UT201

    class Head(nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # expect: UT101
                x = x * 2
            return x
"""

CASES.add("training-modules", re.sub(r"  # expect-training: UT\d{3}", "", SOURCE))
CASES.add("training-modules-reported", re.sub(r"# expect-training: UT\d{3}", "# expect: UT106", SOURCE),
          extend_select=["UT106"])


@pytest.mark.parametrize("name", CASES.names())
def test_training_module(name):
    CASES.check(name)
