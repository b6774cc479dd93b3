"""Causes of false alarms left on the sentinel test `expert_idx == self.num_experts` of
the mixture-of-experts loops (issue 12): a block subclass that builds experts of its own
in place of its base's (`super().__init__(config)` then `self.experts = Other(config)`,
as transformers' modular files derive one model's block from another's).

Its instances hold only the new experts, so its `forward` calls them with the router's
indices: the write replaces the attribute's value (`init_writes`), where a write under
an `if` (or in an `__init__` that may return first) joins with it.

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

CASES = {
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
