"""Causes of false alarms found by judging random findings on real code (issue 12,
`benchmarks/data/precision_sample_seed5.json`), in the form of `test_precision_causes`:
every line that must be reported ends in `# expect: UTxxx`, its true-positive neighbour
sits in the same program, and the exact set of (line, code) is asserted."""

from __future__ import annotations

import re

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# OneFormer's encoder layer: `self.is_training = config.is_training`, a configuration
# field declared `= False`, is the dropout's training mode; what `if self.is_training:`
# guards is training-only code (UT106 reports it). A flag the class never passes as a
# `training=` argument, one defaulting to True, one the configuration does not declare
# False, one set outside `__init__` or a module-level name decide nothing.
TRAINING_FLAGS = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class LayerConfig:
        is_training: bool = False
        train_mode: bool = False
        starts_training: bool = True


    class Layer(nn.Module):
        def __init__(self, config: LayerConfig, keep: bool = False):
            super().__init__()
            self.is_training = config.is_training
            self.train_mode = config.train_mode
            self.starts_training = config.starts_training
            self.keep = keep

        def forward(self, h):
            h = F.dropout(h, p=0.1, training=self.is_training)
            h = F.dropout(h, p=0.1, training=self.starts_training)
            h = F.dropout(h, p=0.1, training=self.keep)
            if self.is_training:
                if not torch.isfinite(h).all():  # expect-training: UT101
                    h = h.clamp(-1e4, 1e4)
            if self.keep and h.sum() > 0:  # expect-training: UT101
                h = h * 2
            if self.train_mode:
                if h.max() > 1:  # expect: UT101
                    h = h / 2
            if self.starts_training:
                if h.min() < 0:  # expect: UT101
                    h = -h
            return h


    class Unannotated(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.is_training = config.is_training

        def forward(self, h):
            h = F.dropout(h, p=0.1, training=self.is_training)
            if self.is_training:
                if h.sum() > 0:  # expect: UT101
                    h = h * 2
            return h


    class Rebound(nn.Module):
        def __init__(self, config: LayerConfig):
            super().__init__()
            self.is_training = config.is_training

        def forward(self, h):
            self.is_training = h.sum() > 0
            h = F.dropout(h, p=0.1, training=self.is_training)
            if self.is_training:
                if h.sum() > 0:  # expect: UT101
                    h = h * 2
            return h
"""
case("config-training-flag", re.sub(r"  # expect-training: UT\d{3}", "", TRAINING_FLAGS))
case("config-training-flag-reported", re.sub(r"# expect-training: UT\d{3}", "# expect: UT106", TRAINING_FLAGS),
     extend_select=["UT106"])


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
