"""Causes of false alarms left on the sentinel test `expert_idx == self.num_experts` of
the mixture-of-experts loops (issue 12): a block subclass that builds experts of its own
in place of its base's (`super().__init__(config)` then `self.experts = Other(config)`,
as transformers' modular files derive one model's block from another's).

Its instances hold only the new experts, so its `forward` calls them with the router's
indices: the write replaces the attribute's value (`init_writes`), where a write under
an `if` (or in an `__init__` that may return first) joins with it.

A block that builds its router and experts only for some configurations (`if
config.moe:`, as Gemma 4's decoder layer) is their caller all the same: where the
submodules exist, they are the ones built there (`submodule_sizes.single_write`).

A router that keeps its configuration (`self.config = config`) and sizes its gate from it
(`nn.Linear(h, config.num_experts)`) without an attribute of its own for that number
returns logits whose last axis is `self.config.num_experts` (`submodule_sizes`).

Each program is one file checked as a tree; every line that must be reported ends in
`# expect: UTxxx`, the exact set of (line, code) asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.test_precision_causes_experts import BLOCK, HEADER, REPORTED, ROUTER, check_tree

ROUTED = ROUTER.format(router_size="num_local_experts")

# Experts derived from these, built only by a subclass of the block, in place of the
# base's experts; `{forward}` is the subclass block's own forward, if any.
REBUILT = """

    class DerivedExperts(Experts):
        pass


    class DerivedBlock(Block):
        def __init__(self, config):
            super().__init__(config)
            {write}
{forward}
"""

INPUT_FORWARD = """
        def forward(self, hidden_states, indices, weights):
            return self.experts(hidden_states, indices, weights)
"""

# The router and the experts built only when the configuration asks for them.
CONDITIONAL_BLOCK = """

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.moe = config.moe
            if self.moe:
                {router}
                self.experts = Experts(config)

        def forward(self, hidden_states):
            if self.moe:
                _, weights, indices = self.gate(hidden_states)
                hidden_states = self.experts(hidden_states, indices, weights)
            return hidden_states
"""

OTHER_ROUTER = """

    class OtherRouter(Router):
        def __init__(self, config):
            super().__init__(config)
            self.num_experts = config.num_routed
            self.weight = nn.Parameter(torch.zeros(self.num_experts, config.hidden_size))
"""

# Gemma 4's router: no `num_experts` attribute, the configuration kept whole.
CONFIG_ROUTER = """

    class Router(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.proj = nn.Linear(config.hidden_size, config.{width}, bias=False)

        def forward(self, hidden_states):
            probs = F.softmax(self.proj(hidden_states), dim=-1, dtype=torch.float32)
            values, indices = torch.topk(probs, k=self.config.top_k, dim=-1)
            return probs, values, indices
"""

CASES = {
    "router-sized-through-its-configuration": HEADER.format(sentinel="") + CONFIG_ROUTER.format(
        width="num_local_experts") + BLOCK,
    "router-configuration-of-another-field": HEADER.format(sentinel=REPORTED) + CONFIG_ROUTER.format(
        width="num_routed") + BLOCK,

    "experts-built-for-some-configurations": HEADER.format(sentinel="") + ROUTED + CONDITIONAL_BLOCK.format(
        router="self.gate = Router(config)"),
    # Another configuration routes over another number of experts: no one bound.
    "router-of-another-size-on-another-branch": HEADER.format(sentinel=REPORTED) + ROUTED + OTHER_ROUTER
    + CONDITIONAL_BLOCK.format(router="""if config.wide:
                    self.gate = OtherRouter(config)
                else:
                    self.gate = Router(config)"""),

    "subclass-block-rebuilds-the-experts": HEADER.format(sentinel="") + ROUTED + BLOCK + REBUILT.format(
        write="self.experts = DerivedExperts(config)", forward=""),
    # The rebuilt experts are given the subclass block's own input: they may hold the sentinel.
    "rebuilt-experts-given-an-input": HEADER.format(sentinel=REPORTED) + ROUTED + BLOCK + REBUILT.format(
        write="self.experts = DerivedExperts(config)", forward=INPUT_FORWARD),
    # Written only for some configurations: the attribute may hold either; the run of the
    # subclass's forward calls a join it cannot follow, so no bound is proved.
    "experts-rebuilt-under-a-condition": HEADER.format(sentinel=REPORTED) + ROUTED + BLOCK + REBUILT.format(
        write="if config.other:\n                self.experts = DerivedExperts(config)", forward=""),
    # An `__init__` that may return before the write leaves some instances with the base's.
    "init-may-return-before-the-write": HEADER.format(sentinel=REPORTED) + ROUTED + BLOCK + REBUILT.format(
        write="if config.other:\n                return\n            self.experts = DerivedExperts(config)",
        forward=""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cause(name, tmp_path, monkeypatch):
    check_tree(CASES[name], tmp_path, monkeypatch)
