"""Issue 23, false-alarm cause 6: invariants of ops, as value ranges.

The indices `topk` / `argmax` / `sort` return along an axis of size N are below N, so a
test that one equals N is never true. What makes it hard is knowing that two texts are
one N: the width of a layer built in `__init__` from a configuration field, or from a
constructor argument, and the attribute another module tests against, written from the
same field. Sizes are named by where they came from at construction
(`symbolic_sizes`: `@config.num_experts`), the same name in every module built from that
object, and translated into and out of submodules through their constructions.

Each program is one file checked as a tree (`test_precision_causes_experts.check_tree`):
the sentinel test `expert_idx == self.num_experts` stays quiet where the indices are
proved below the experts' number, and is reported (`REPORTED`) where they are not; the
test against `self.num_experts - 1` beside it is always reported."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases
from tests.analyzer.test_precision_causes_experts import HEADER, REPORTED, check_tree

# The router adds a bias its block hands it; the block sized the bias from a field of
# the configuration, with no attribute of its own for that number.
BIAS_ROUTER = """

    class Router(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.num_local_experts
            self.weight = nn.Parameter(torch.empty(self.num_experts, config.hidden_size))

        def forward(self, hidden_states, correction):
            logits = F.linear(hidden_states, self.weight)
            scores = torch.sigmoid(logits.float()) + correction
            _, indices = torch.topk(scores, self.top_k, dim=-1)
            return logits, scores.gather(1, indices), indices


    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate = Router(config)
            self.experts = Experts(config)
            self.correction = nn.Buffer(torch.zeros(config.{bias_size}))

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states, self.correction)
            return self.experts(hidden_states, indices, weights)
"""

# The router is given its sizes as constructor arguments, read from the configuration by
# the block that builds it, and sizes its layer with them (no attribute of its own).
ARGUMENT_ROUTER = """

    class Router(nn.Module):
        def __init__(self, hidden, experts, k):
            super().__init__()
            self.k = k
            self.proj = nn.Linear(hidden, experts, bias=False)

        def forward(self, hidden_states):
            logits = self.proj(hidden_states)
            values, indices = torch.topk(logits.softmax(dim=-1), self.k, dim=-1)
            return logits, values, indices


    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate = Router(config.hidden_size, {width}, config.num_experts_per_tok)
            self.experts = Experts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""

# The router's layer is sized from the configuration directly, the router keeping neither
# the configuration nor an attribute for the number; `argmax` rather than `topk`.
ARGMAX_ROUTER = """

    class Router(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.proj = nn.Linear(config.hidden_size, config.{width})

        def forward(self, hidden_states):
            logits = self.proj(hidden_states)
            indices = logits.argmax(dim=-1, keepdim=True)
            return logits, logits.softmax(-1), indices


    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate = Router(config)
            self.experts = Experts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""

# The router annotates its configuration with a class that makes its field an alias of
# another; the block annotates the same object with another class. The router and the
# experts spell the field alike: one spelling of one object's field is one number,
# whichever class an annotation names.
TWO_ANNOTATIONS = """

    class TextConfig:
        attribute_map = {{"num_local_experts": "n_routed"}}


    class OuterConfig:
        pass


    class Router(nn.Module):
        def __init__(self, config: TextConfig):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.{router_size}
            self.weight = nn.Parameter(torch.zeros(self.num_experts, config.hidden_size))

        def forward(self, hidden_states):
            logits = F.linear(hidden_states, self.weight)
            values, indices = torch.topk(logits, self.top_k, dim=-1)
            return logits, values, indices


    class Block(nn.Module):
        def __init__(self, config: OuterConfig):
            super().__init__()
            self.gate = Router(config)
            self.experts = Experts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""

CASES = {
    "one-spelling-under-two-annotations": HEADER.format(sentinel="") + TWO_ANNOTATIONS.format(
        router_size="num_local_experts"),
    # `n_routed` is `num_local_experts` only if the object is a `TextConfig`, which the
    # block's annotation contradicts: unsure, reported.
    "alias-under-contradicting-annotations": HEADER.format(sentinel=REPORTED) + TWO_ANNOTATIONS.format(
        router_size="n_routed"),
    "bias-sized-by-the-same-field": HEADER.format(sentinel="") + BIAS_ROUTER.format(bias_size="num_local_experts"),
    # A bias of another length broadcasts the logits' axis to its own.
    "bias-sized-by-another-field": HEADER.format(sentinel=REPORTED) + BIAS_ROUTER.format(bias_size="num_routed"),
    "layer-width-from-a-constructor-argument": HEADER.format(sentinel="") + ARGUMENT_ROUTER.format(
        width="config.num_local_experts"),
    "layer-width-from-another-field": HEADER.format(sentinel=REPORTED) + ARGUMENT_ROUTER.format(
        width="config.num_routed"),
    # One more logit than experts: an index may equal the experts' number.
    "layer-width-one-more": HEADER.format(sentinel=REPORTED) + ARGUMENT_ROUTER.format(
        width="config.num_local_experts + 1"),
    "argmax-over-the-fields-width": HEADER.format(sentinel="") + ARGMAX_ROUTER.format(width="num_local_experts"),
    "argmax-over-another-width": HEADER.format(sentinel=REPORTED) + ARGMAX_ROUTER.format(width="num_routed"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cause(name, tmp_path, monkeypatch):
    check_tree(CASES[name], tmp_path, monkeypatch)


# A slice `x[s:s + k]` inside `for s in range(0, len(x), k)` is never empty: s < len(x)
# and the step is at least 1 on every pass. Its emptiness along that axis is decided by
# the iteration; `numel()` (another axis may be empty), the slice's full width (the last
# one may be short), a slice of another tensor, and a bound not tied to the sliced tensor
# stay reported.
SLICES = MarkedCases()
SLICES.add("slice-of-a-range-loop-is-never-empty", """
    import torch
    import torch.nn as nn

    class Chunked(nn.Module):
        def forward(self, x, mask, k: int = 4):
            rows = x[mask > 0]
            out = []
            for s in range(0, len(rows), k):  # expect: UT102
                chunk = rows[s:s + k]
                if chunk.shape[0] == 0:
                    continue
                if len(chunk) < 1:
                    continue
                if chunk.size(0) > 0:
                    out.append(chunk.sum(0))
                if chunk.numel() == 0:  # expect: UT101
                    continue
                if chunk.shape[0] == k:  # expect: UT101
                    out.append(chunk)
            n = rows.shape[0]
            for s in range(0, n, 8):  # expect: UT102
                tail = rows[s:]
                if len(tail) == 0:
                    break
            return out

    class Columns(nn.Module):
        def forward(self, x, y, lengths):
            for s in range(0, x.shape[-1], 16):  # expect: UT104
                piece = x[..., s:s + 16]
                if piece.shape[-1] == 0:
                    continue
                other = y[..., s:s + 16]
                if other.shape[-1] == 0:  # expect: UT103
                    continue
            n = int(lengths.max())  # expect: UT201
            for s in range(0, n, 8):  # expect: UT102
                part = x[s:s + 8]
                if part.shape[0] == 0:  # expect: UT101
                    continue
            return x
""", select=["ALL"])


@pytest.mark.parametrize("name", SLICES.names())
def test_slice(name):
    SLICES.check(name)
