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



# Pocket TTS hands `create_causal_mask` embeddings written from latents picked by a
# boolean mask: `masked_scatter` (as `masked_fill`, `index_put`, `scatter`, `index_copy`)
# has the receiver's shape whatever the number of values written, and a `torch.where`
# inside `if latent_embeds.shape[:2] == inputs_embeds.shape[:2]:` broadcasts tensors of one
# first size: `batch_size != position_ids.shape[0]` compares two shapes. The same `where`
# without that test, a test of another size, a test whose tensor the body rebinds, or a
# mask sized by data still size the result by data.
PREPARE = """
    import torch
    import torch.nn as nn


    def prepare(inputs_embeds, position_ids):
        batch_size = inputs_embeds.shape[0]
        if batch_size != position_ids.shape[0]:{expect}
            position_ids = position_ids.expand(batch_size, -1)
        return position_ids


    class Embed(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(16, 8)
            self.proj = nn.Linear(4, 8)

        def forward(self, input_ids, latents, latents_mask):
            inputs_embeds = self.embed_tokens(input_ids)
            latent_embeds = self.proj(latents[latents_mask.bool()])
            token_mask = (input_ids == 3).unsqueeze(-1)
{body}
            position_ids = torch.arange(inputs_embeds.shape[1]).unsqueeze(0)
            return prepare(inputs_embeds, position_ids)
"""
BRANCH = "  # expect: UT101"
for name, body, expect in [
    ("masked-write-of-data-sized-values", """
            inputs_embeds = inputs_embeds.masked_scatter(token_mask, latent_embeds)
            inputs_embeds = inputs_embeds.index_put((input_ids[:, 0],), latent_embeds[0])""", ""),
    ("where-under-a-first-size-test", f"""
            if latent_embeds.shape[:2] == inputs_embeds.shape[:2]:{BRANCH}
                inputs_embeds = torch.where(token_mask, latent_embeds, inputs_embeds)
            if latent_embeds.size(0) == inputs_embeds.size(0):{BRANCH}
                inputs_embeds = inputs_embeds + latent_embeds""", ""),
    ("where-with-data-sized-operand", """
            inputs_embeds = torch.where(token_mask, latent_embeds, inputs_embeds)""", BRANCH),
    ("where-under-another-size-test", f"""
            if latent_embeds.shape[1] == inputs_embeds.shape[1]:
                inputs_embeds = torch.where(token_mask, latent_embeds, inputs_embeds)""", BRANCH),
    ("where-after-the-tested-tensor-is-rebound", f"""
            if latent_embeds.shape[:2] == inputs_embeds.shape[:2]:{BRANCH}
                latent_embeds = latent_embeds[latent_embeds.sum(-1) > 0]
                inputs_embeds = torch.where(token_mask, latent_embeds, inputs_embeds)""", BRANCH),
    ("masked-write-by-a-data-sized-mask", """
            inputs_embeds = inputs_embeds.masked_fill(token_mask[latents_mask.bool()], 0.0)""", BRANCH),
]:
    case(name, PREPARE.replace("{expect}", expect).replace("{body}", body.strip("\n")))

@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
