"""Causes of false alarms left on the sentinel test `expert_idx == self.num_experts` of
the mixture-of-experts loops (issue 12): callers the bound of `caller_bounds` did not
reach.

- subclasses of the experts that inherit their `forward` (transformers' modular files
  derive one model's experts from another's): their constructions are callers too; a
  subclass overriding `forward` without reaching the base's is none, nor is a subclass
  of the block that replaces the experts after `super().__init__` (`caller_bounds`);
- routers sizing their tensors from configuration fields (`torch.zeros(config.n)`,
  `nn.Linear(hidden, config.n)`) beside `self.num_experts = config.n` (`config_sizes`);
- a configuration class annotated on the router's `__init__` only, naming for both the
  field an alias reads (`submodule_sizes`).

Each program is one file checked as a tree; every line that must be reported ends in
`# expect: UTxxx`, the exact set of (line, code) asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.test_precision_causes_experts import BLOCK, HEADER, INPUT_BLOCK, REPORTED, ROUTER, check_tree

ROUTED = ROUTER.format(router_size="num_local_experts")

# Experts of another model derived from these, built with a router of its own.
DERIVED = """

    class DerivedExperts(Experts):
        def __init__(self, config):
            super().__init__(config)
            self.num_experts = config.num_local_experts
            self.scale = 2.0


    class DerivedBlock(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate = Router(config)
            self.experts = DerivedExperts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""

# The derived experts built by a block that passes its own input as the indices.
DERIVED_FROM_INPUT = """

    class DerivedExperts(Experts):
        def __init__(self, config):
            super().__init__(config)
            self.num_experts = config.num_local_experts
            self.scale = 2.0


    class DerivedBlock(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.experts = DerivedExperts(config)

        def forward(self, hidden_states, indices, weights):
            return self.experts(hidden_states, indices, weights)
"""

# Experts that replace the forward: their callers never run the base's.
OVERRIDING = """

    class DenseExperts(Experts):
        def forward(self, hidden_states, top_k_index, top_k_weights):
            return hidden_states * top_k_weights.sum()


    class DenseBlock(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.experts = DenseExperts(config)

        def forward(self, hidden_states, indices, weights):
            return self.experts(hidden_states, indices, weights)
"""

# ... unless the new forward hands its own arguments to the base's.
OVERRIDING_CALLS_BASE = OVERRIDING.replace(
    "return hidden_states * top_k_weights.sum()", "return super().forward(hidden_states, top_k_index, top_k_weights)")

# A derived class nothing in the tree builds adds no caller (as a renamed one: the
# callers are the tree's constructions; transformers' modular files hold many such).
NEVER_BUILT = """

    class UnbuiltExperts(Experts):
        def extra_repr(self):
            return "unbuilt"
"""

# A subclass of the block replaces the experts with other ones, and calls them with
# its input: its instances never call these experts.
REBINDING = """

    class OtherExperts(nn.Module):
        def forward(self, hidden_states, top_k_index, top_k_weights):
            return hidden_states * top_k_weights.sum()


    class OtherBlock(Block):
        def __init__(self, config):
            super().__init__(config)
            {rebind}

        def forward(self, hidden_states, indices, weights):
            return self.experts(hidden_states, indices, weights)
"""


# Routers sizing their logits from the configuration field `self.num_experts` is read from.
FIELD_ROUTER = """

    class Router(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.num_local_experts
            self.weight = nn.Parameter(torch.empty(config.{weight_size}, config.hidden_size))
            self.bias = nn.Buffer(torch.zeros(config.{bias_size}))

        def forward(self, hidden_states):
            logits = F.linear(hidden_states, self.weight)
            scores = logits.sigmoid() + self.bias
            _, indices = torch.topk(scores, self.top_k, dim=-1)
            return logits, scores.gather(1, indices), indices
"""

LINEAR_ROUTER = """

    class Router(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.num_local_experts
            self.gate = nn.Linear(config.hidden_size, config.{width}, bias=False)

        def forward(self, hidden_states):
            logits = self.gate(hidden_states).float()
            scores = torch.softmax(logits, dim=-1)
            values, indices = torch.topk(scores, self.top_k, dim=-1)
            return logits, values, indices
"""

# The router annotates its configuration's class, whose `attribute_map` makes
# `num_local_experts` an alias of `num_experts`; the block and the experts do not.
CONFIG = """

    class Config:
        attribute_map = {aliases}

        def __init__(self, num_experts=8, num_experts_per_tok=2, hidden_size=16):
            self.num_experts = num_experts
            self.num_experts_per_tok = num_experts_per_tok
            self.hidden_size = hidden_size
"""

ANNOTATED_ROUTER = """

    class Router(nn.Module):
        def __init__(self, config: Config):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.num_experts
            self.weight = nn.Parameter(torch.zeros(self.num_experts, config.hidden_size))

        def forward(self, hidden_states):
            logits = F.linear(hidden_states, self.weight)
            values, indices = torch.topk(logits, self.top_k, dim=-1)
            return logits, values, indices
"""

CASES = {
    "derived-experts-built-with-the-router": HEADER.format(sentinel="") + ROUTED + BLOCK + DERIVED,
    "derived-experts-given-an-input": HEADER.format(sentinel=REPORTED) + ROUTED + BLOCK + DERIVED_FROM_INPUT,
    "overriding-experts-are-no-caller": HEADER.format(sentinel="") + ROUTED + BLOCK + OVERRIDING,
    "overriding-experts-calling-the-base": HEADER.format(sentinel=REPORTED) + ROUTED + BLOCK + OVERRIDING_CALLS_BASE,
    "derived-experts-never-built": HEADER.format(sentinel="") + ROUTED + BLOCK + NEVER_BUILT,
    "block-subclass-replaces-the-experts": HEADER.format(sentinel="") + ROUTED + BLOCK + REBINDING.format(
        rebind="self.experts = OtherExperts()"),
    # Replaced only for some configurations: the others keep these experts.
    "block-subclass-may-keep-the-experts": HEADER.format(sentinel=REPORTED) + ROUTED + BLOCK + REBINDING.format(
        rebind="if config.dense:\n                self.experts = OtherExperts()"),
    "router-sized-by-the-field": HEADER.format(sentinel="") + FIELD_ROUTER.format(
        weight_size="num_local_experts", bias_size="num_local_experts") + BLOCK,
    "router-weight-of-another-field": HEADER.format(sentinel=REPORTED) + FIELD_ROUTER.format(
        weight_size="num_routed", bias_size="num_local_experts") + BLOCK,
    # A bias of another length would broadcast the logits' axis to its own.
    "router-bias-of-another-field": HEADER.format(sentinel=REPORTED) + FIELD_ROUTER.format(
        weight_size="num_local_experts", bias_size="num_routed") + BLOCK,
    "linear-router-of-the-field": HEADER.format(sentinel="") + LINEAR_ROUTER.format(width="num_local_experts") + BLOCK,
    "linear-router-of-another-field": HEADER.format(sentinel=REPORTED) + LINEAR_ROUTER.format(width="num_routed") + BLOCK,
    "linear-router-one-caller-passes-its-input": HEADER.format(sentinel=REPORTED) + LINEAR_ROUTER.format(
        width="num_local_experts") + BLOCK + INPUT_BLOCK,
    "alias-known-from-the-router-annotation": HEADER.format(sentinel="") + CONFIG.format(
        aliases='{"num_local_experts": "num_experts"}') + ANNOTATED_ROUTER + BLOCK,
    "no-alias-in-the-annotated-configuration": HEADER.format(sentinel=REPORTED) + CONFIG.format(
        aliases="{}") + ANNOTATED_ROUTER + BLOCK,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cause(name, tmp_path, monkeypatch):
    check_tree(CASES[name], tmp_path, monkeypatch)
