"""Causes of false alarms in the mixture-of-experts loops of the judged samples (issue 12):
the sentinel test `expert_idx == self.num_experts` next to
`one_hot(top_k_index, num_classes=self.num_experts + 1)`, decided by the bound the
in-tree callers pass (`caller_bounds`: the router's `topk` over `num_experts` logits).

Every line that must be reported ends in `# expect: UTxxx`; each program is written to a
directory of its own and checked as a tree (the callers are found in the tree), the exact
set of (line, code) asserted."""

from __future__ import annotations

import textwrap
from collections import Counter

import pytest

from analyzer import check_paths
from tests.analyzer.marked_cases import MarkedCases, expected, package_findings

HEADER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Experts(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.num_experts = config.num_local_experts

        def forward(self, hidden_states, top_k_index, top_k_weights):
            out = torch.zeros_like(hidden_states)
            with torch.no_grad():
                mask = F.one_hot(top_k_index, num_classes=self.num_experts + 1).permute(2, 1, 0)
                hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in hit:  # expect: UT102
                expert_idx = expert_idx[0]
                if expert_idx == self.num_experts:{sentinel}
                    continue
                if expert_idx == self.num_experts - 1:  # expect: UT101
                    out = out * 2
                out = out + top_k_weights[0, 0]
            return out
"""

ROUTER = """

    class Router(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.{router_size}
            self.weight = nn.Parameter(torch.zeros(self.num_experts, config.hidden_size))

        def forward(self, hidden_states):
            logits = F.linear(hidden_states, self.weight)
            probs = F.softmax(logits.float(), dim=-1)
            values, indices = torch.topk(probs, self.top_k, dim=-1)
            return logits, values, indices
"""

# The group-limited router of DeepSeek-V3 and its copies: a bias buffer, a mask of the
# kept groups reshaped to the experts' axis, `masked_fill`, then the top-k.
GROUP_ROUTER = """

    class Router(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.num_local_experts
            self.num_group = config.n_group
            self.weight = nn.Parameter(torch.zeros(self.num_experts, config.hidden_size, dtype=torch.float32))
            self.bias = nn.Buffer(torch.zeros((self.num_experts), dtype=torch.float32))

        def forward(self, hidden_states):
            logits = F.linear(hidden_states.type(torch.float32), self.weight.type(torch.float32))
            scores = logits.sigmoid()
            choice = scores + self.bias
            group_scores = choice.view(-1, self.num_group, self.num_experts // self.num_group).topk(2, dim=-1)[0].sum(dim=-1)
            group_idx = torch.topk(group_scores, k=1, dim=-1, sorted=False)[1]
            group_mask = torch.zeros_like(group_scores)
            group_mask.scatter_(1, group_idx, 1)
            score_mask = group_mask.unsqueeze(-1).expand(-1, self.num_group, self.num_experts // self.num_group).reshape(-1, self.num_experts)
            choice = choice.masked_fill(~score_mask.bool(), float("-inf"))
            indices = torch.topk(choice, k=self.top_k, dim=-1, sorted=False)[1]
            return logits, scores.gather(1, indices), indices
"""

BLOCK = """

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate = Router(config)
            self.experts = Experts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""

# A caller that passes its own input as the indices: they may hold `num_experts`.
INPUT_BLOCK = """

    class RoutedBlock(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.experts = Experts(config)

        def forward(self, hidden_states, indices, weights):
            return self.experts(hidden_states, indices, weights)
"""

# Built somewhere not as a submodule of a forward's class: its user may pass anything.
FACTORY = """

    def make_experts(config):
        return Experts(config)
"""

# A subclass of the block inherits the construction and calls the experts its own way
# (with `*args`, a call the analysis does not follow: only the subclass test sees it).
SUBCLASS = """

    class PassThroughBlock(Block):
        def forward(self, *args):
            return self.experts(*args)
"""

# Another module reaches into a block's experts with its own input (a block it is
# handed, so the call is not followed: only the test for such calls sees it).
REACHING_IN = """

    class Layer(nn.Module):
        def forward(self, hidden_states, indices, weights, block):
            return block.experts(hidden_states, indices, weights)
"""

# The experts under another name (a subclass that only renames them), built by blocks
# of their own: the router's indices, or arguments the analysis does not follow.
RENAMED = """

    class OtherExperts(Experts):
        \"\"\"The experts under another name.\"\"\"


    class OtherBlock(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate = Router(config)
            self.experts = OtherExperts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""

RENAMED_PASSED_ON = """

    class OtherExperts(Experts):
        pass


    class OtherBlock(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.experts = OtherExperts(config)

        def forward(self, *args):
            return self.experts(*args)
"""

# A subclass that changes the experts (another number of them), built with the router:
# its instances run the same forward, and the router's bound is not below their number.
CHANGED = """

    class MoreExperts(Experts):
        def __init__(self, config):
            super().__init__(config)
            self.num_experts = config.num_local_experts + 1


    class MoreBlock(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate = Router(config)
            self.experts = MoreExperts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""

# The configuration maps an alias to the attribute it stores (transformers'
# `attribute_map`): a router reading `config.num_experts` and experts reading
# `config.num_local_experts` read one number. The experts and the renamed experts of
# another model are built by blocks of their own; each block's run covers its own.
ALIASED = """

    class Config:
        attribute_map = {aliases}

        def __init__(self, num_experts=8, num_experts_per_tok=2, hidden_size=16):
            self.num_experts = num_experts
            self.num_experts_per_tok = num_experts_per_tok
            self.hidden_size = hidden_size


    class AliasRouter(nn.Module):
        def __init__(self, config: Config):
            super().__init__()
            self.top_k = config.num_experts_per_tok
            self.num_experts = config.num_experts
            self.weight = nn.Parameter(torch.zeros(self.num_experts, config.hidden_size))

        def forward(self, hidden_states):
            logits = F.linear(hidden_states, self.weight)
            values, indices = torch.topk(logits, self.top_k, dim=-1)
            return logits, values, indices


    class AliasExperts(Experts):
        pass


    class AliasBlock(nn.Module):
        def __init__(self, config: Config):
            super().__init__()
            self.gate = AliasRouter(config)
            self.experts = AliasExperts(config)

        def forward(self, hidden_states):
            _, weights, indices = self.gate(hidden_states)
            return self.experts(hidden_states, indices, weights)
"""


def annotated(source: str) -> str:
    return source.replace("def __init__(self, config):", "def __init__(self, config: Config):")

REPORTED = "  # expect: UT101"

CASES = {
    # Every caller passes the router's top-k over `num_local_experts` logits.
    "router-topk-below-the-experts": (HEADER.format(sentinel="") + ROUTER.format(router_size="num_local_experts") + BLOCK),
    "group-limited-router": (HEADER.format(sentinel="") + GROUP_ROUTER + BLOCK),
    # The router ranks another number of logits: its indices may reach `num_experts`.
    "router-over-another-size": (HEADER.format(sentinel=REPORTED) + ROUTER.format(router_size="num_routed") + BLOCK),
    # One caller of two passes indices from its input.
    "one-caller-passes-its-input": (HEADER.format(sentinel=REPORTED) + ROUTER.format(router_size="num_local_experts")
                                    + BLOCK + INPUT_BLOCK),
    "built-outside-a-module": (HEADER.format(sentinel=REPORTED) + ROUTER.format(router_size="num_local_experts")
                               + BLOCK + FACTORY),
    "caller-is-subclassed": (HEADER.format(sentinel=REPORTED) + ROUTER.format(router_size="num_local_experts")
                             + BLOCK + SUBCLASS),
    "called-through-another-module": (HEADER.format(sentinel=REPORTED) + ROUTER.format(router_size="num_local_experts")
                                      + BLOCK + REACHING_IN),
    "renamed-experts-built-with-the-router": (HEADER.format(sentinel="") + ROUTER.format(router_size="num_local_experts")
                                              + BLOCK + RENAMED),
    "renamed-experts-passed-other-arguments": (HEADER.format(sentinel=REPORTED)
                                               + ROUTER.format(router_size="num_local_experts") + BLOCK + RENAMED_PASSED_ON),
    "experts-subclass-changes-them": (HEADER.format(sentinel=REPORTED) + ROUTER.format(router_size="num_local_experts")
                                      + BLOCK + CHANGED),
    "renamed-experts-with-a-router-reading-an-alias": annotated(
        HEADER.format(sentinel="") + ROUTER.format(router_size="num_local_experts") + BLOCK
        + ALIASED.format(aliases='{"num_local_experts": "num_experts"}')),
    # A configuration without that alias: two fields, maybe two numbers.
    "router-reading-a-field-no-alias-joins": annotated(
        HEADER.format(sentinel=REPORTED) + ROUTER.format(router_size="num_local_experts") + BLOCK
        + ALIASED.format(aliases="{}")),
    # No caller in the tree: the indices are whatever its user passes.
    "no-caller": HEADER.format(sentinel=REPORTED),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cause(name, tmp_path, monkeypatch):
    check_tree(CASES[name], tmp_path, monkeypatch)


def check_tree(program: str, tmp_path, monkeypatch) -> None:
    """Checks ``program`` as a tree of one file: exactly its marked lines are reported."""
    source = textwrap.dedent(program).lstrip("\n")
    (tmp_path / "moe.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    got = Counter((d.line, d.code) for d in check_paths(["moe.py"], use_cache=False, jobs=1))
    want = Counter(expected(source))
    assert sorted((got - want).elements()) == [], "reported but not marked (or reported twice)"
    assert sorted((want - got).elements()) == [], "marked but not reported"


# The emptiness test on the nonzeros of an expert the loop visits because it was hit:
# its mask row sums to more than 0, so `torch.where` of it is never empty. A mask row not
# tied to that hit test (another mask, a mask written into, a sum a zero passes) stays.
HITS = MarkedCases()
HITS.add("hit-expert-is-never-empty", """
    import torch
    import torch.nn as nn

    class Experts(nn.Module):
        def __init__(self, num_experts: int = 4):
            super().__init__()
            self.num_experts = num_experts

        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            with torch.no_grad():
                expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=self.num_experts)
                expert_mask = expert_mask.permute(2, 1, 0)
                expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero().squeeze(-1)
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx.item()  # expect: UT201
                top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
                if token_idx.numel() == 0:
                    continue
                out = out + token_idx.sum()
            return out

    class RowsAsTensors(nn.Module):
        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero(as_tuple=False)
            for expert_idx_tensor in expert_hit:  # expect: UT102
                expert_idx = int(expert_idx_tensor.item())  # expect: UT201
                selection_idx, token_idx = torch.where(expert_mask[expert_idx].squeeze(0))
                if token_idx.numel() == 0:
                    continue
                out = out + token_idx.sum()
            return out

    class RowsThroughSymInt(nn.Module):
        # `torch.sym_int`, what `--fix` writes for `int(t.item())`, picks the same row.
        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero(as_tuple=False)
            for expert_idx_tensor in expert_hit:  # expect: UT102
                expert_idx = torch.sym_int(expert_idx_tensor.item())  # expect: UT201
                selection_idx, token_idx = torch.where(expert_mask[expert_idx].squeeze(0))
                if token_idx.numel() == 0:
                    continue
                out = out + token_idx.sum()
            return out

    class RowsThroughSymMax(nn.Module):
        # Another symbolic function of the row's number is not the row: the test stays.
        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero(as_tuple=False)
            for expert_idx_tensor in expert_hit:  # expect: UT102
                expert_idx = torch.sym_max(expert_idx_tensor.item(), 1)  # expect: UT201
                selection_idx, token_idx = torch.where(expert_mask[expert_idx].squeeze(0))
                if token_idx.numel() == 0:  # expect: UT101
                    continue
                out = out + token_idx.sum()
            return out

    class AnotherMask(nn.Module):
        def forward(self, hidden_states, top_k_index, other):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                top_k_pos, token_idx = torch.where(other[expert_idx])
                if token_idx.numel() == 0:  # expect: UT101
                    continue
                out = out + token_idx.sum()
            return out

    class MaskWrittenInto(nn.Module):
        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            expert_mask[0] = 0
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
                if token_idx.numel() == 0:  # expect: UT101
                    continue
                out = out + token_idx.sum()
            return out

    class ZeroPassesTheTest(nn.Module):
        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater_equal(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
                if token_idx.numel() == 0:  # expect: UT101
                    continue
                out = out + token_idx.sum()
            return out

    class WrittenThroughAView(nn.Module):
        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            encoded = torch.nn.functional.one_hot(top_k_index, num_classes=8)
            expert_mask = encoded.permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            encoded.zero_()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
                if token_idx.numel() == 0:  # expect: UT101
                    continue
                out = out + token_idx.sum()
            return out

    class ReboundInABranch(nn.Module):
        def forward(self, hidden_states, top_k_index, other):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
                if hidden_states.shape[0] > 2:
                    token_idx = other
                if token_idx.numel() == 0:  # expect: UT101
                    continue
                out = out + token_idx.sum()
            return out

    class NotEverySummedAxis(nn.Module):
        def forward(self, hidden_states, top_k_index):
            out = torch.zeros_like(hidden_states)
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=8).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=-1), 0).nonzero()
            for expert_idx in expert_hit:  # expect: UT102
                expert_idx = expert_idx[0]
                top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
                if token_idx.numel() == 0:  # expect: UT101
                    continue
                out = out + token_idx.sum()
            return out
""")


@pytest.mark.parametrize("name", HITS.names())
def test_hit_rows(name):
    HITS.check(name)


def test_caller_bounds_follow_the_tree_through_the_cache(tmp_path, monkeypatch, capsys):
    """A module reaching into a block's experts, added after a cached run, leaves the
    experts' indices free (the sentinel test is reported again) once its file names the
    block; its removal decides it again: the cached run prints what an uncached one does."""
    from analyzer.cli import main

    source = textwrap.dedent(HEADER.format(sentinel="") + ROUTER.format(router_size="num_local_experts")
                             + BLOCK).lstrip("\n")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "expert_idx == self.num_experts:" in text)
    sentinel = [f"pkg/moe.py:{line}:13:", "UT101"]
    package_findings(tmp_path, monkeypatch, {"moe.py": source})
    cache = str(tmp_path / "cache")

    def lines(*options):
        main(["check", "pkg", "--output-format", "concise", *options])
        return [text.split(" ", 2)[:2] for text in capsys.readouterr().out.splitlines() if " UT" in text]

    assert sentinel not in lines("--cache-dir", cache)
    # A file naming neither the block nor the experts gets its `block` from elsewhere (a
    # generic factory, its own caller): no instance of ours, the bound stays.
    (tmp_path / "pkg" / "layer.py").write_text("import torch.nn as nn\n" + textwrap.dedent(REACHING_IN))
    cached = lines("--cache-dir", cache)
    assert sentinel not in cached and cached == lines("--no-cache")
    # Naming the block, it may hold one of ours.
    (tmp_path / "pkg" / "layer.py").write_text("import torch.nn as nn\nfrom pkg.moe import Block\n"
                                               + textwrap.dedent(REACHING_IN))
    cached = lines("--cache-dir", cache)
    assert sentinel in cached and cached == lines("--no-cache")
    (tmp_path / "pkg" / "layer.py").unlink()
    assert sentinel not in lines("--cache-dir", cache)
