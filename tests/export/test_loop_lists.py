"""Python lists a data-dependent loop or `if` changes (issue 24), beyond the appends of
`test_loop_python_state.py`: a per-layer cache whose items a `while` loop on data sets
(`cache[i] = torch.cat([cache[i], k])`) keeps its length, so its items are carried by the
Loop; the truth value and `len` of a list a data-dependent `if` appended to on one side
are the graph's. Each model matches eager on onnxruntime on inputs that run the loop 0,
1, 2 and 5 times and take both sides of each `if`, or is refused by name."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare
from tests.export.test_loop_python_state import INPUTS, carried


class LayerCache(nn.Module):
    """A KV cache: one growing tensor per layer, set by index in a `while` on data."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])

    def forward(self, x):
        cache = [x.new_zeros(0, 2) for _ in self.layers]
        h = x[None]
        s = x.sum()
        while s > 0:
            for i, layer in enumerate(self.layers):
                h = layer(h)
                cache[i] = torch.cat([cache[i], h], 0)
            s = s - 1
        return cache[0], cache[1].sum(0), len(cache)


class CacheOfPairs(nn.Module):
    def forward(self, x):
        cache = [(x[None], x[None] * 2), (x[None], x[None])]
        s = x.sum()
        while s > 0:
            for i in range(len(cache)):
                k, v = cache[i]
                cache[i] = (torch.cat([k, k[-1:] + 1]), v + k.sum())
            s = s - 1
        return cache


class CacheOverDynamicRows(nn.Module):
    def forward(self, x, rows):
        cache = [x, x * 2]
        for r in rows:
            cache[0] = cache[0] + r
            cache[1] = cache[1] * r
        return cache


class LengthOfAppendedAndCounted(nn.Module):
    def forward(self, x):
        cache = []
        s = x.sum()
        while len(cache) < 3 and s > 0:
            cache.append(x * len(cache))
            s = s - 1
        return torch.stack(cache) if cache else x[None], len(cache)


class TruthOfListAppendedOnOneSide(nn.Module):
    def forward(self, x):
        out = []
        if x.sum() > 1:
            out.append(x * 2)
        if out:
            x = x + len(out)
        return x, len(out) * 3, bool(out), not out


@pytest.mark.parametrize("model", [LayerCache(), CacheOfPairs(), LengthOfAppendedAndCounted(),
                                   TruthOfListAppendedOnOneSide()],
                         ids=["layer-cache", "cache-of-pairs", "len-in-condition", "truth-after-if"])
def test_lists_changed_by_data_dependent_regions_match_eager(model):
    carried(model)


def test_a_cache_set_in_a_loop_over_dynamic_rows_matches_eager():
    inputs = [(torch.ones(2), torch.randn(n, 2)) for n in (3, 0, 1)]
    export_and_compare(CacheOverDynamicRows(), inputs[0], inputs, dynamic_shapes={"rows": {0: "n"}})


def test_the_items_of_a_cache_are_loop_carried_values():
    proto = export(LayerCache().eval(), INPUTS[2])
    (loop,) = [n for n in proto.graph.node if n.op_type == "Loop"]
    assert len(loop.input) >= 2 + 2 + 2  # trip count, condition, `s`, `h` and both cache items


class CacheOfNones(nn.Module):
    def forward(self, x):
        cache = [None, None]
        s = x.sum()
        while s > 0:
            cache[0] = x + s
            s = s - 1
        return x


def _grow(items, x):
    items.append(x)


class CacheGrownByHelper(nn.Module):
    def forward(self, x):
        cache = [x]
        s = x.sum()
        while s > 0:
            cache[0] = x + 1
            _grow(cache, x)
            s = s - 1
        return cache[0]


class CacheUnderAnotherName(nn.Module):
    def forward(self, x):
        cache = [x, x * 2]
        alias = cache
        s = x.sum()
        while s > 0:
            cache[0] = cache[0] + 1
            s = s - 1
        return alias[0]


@pytest.mark.parametrize("model, words, hint", [
    (CacheOfNones(), "holds values other than tensors and numbers", "give every item of `cache` a tensor"),
    (CacheGrownByHelper(), "`cache` changes structure inside the data-dependent loop", "before the loop"),
    (CacheUnderAnotherName(), "also reachable as `alias`", "use one name"),
], ids=["none-items", "grown-by-helper", "aliased"])
def test_lists_a_loop_cannot_carry_are_refused(model, words, hint):
    with pytest.raises(LoweringError) as info:
        export(model.eval(), INPUTS[2])
    err = info.value
    assert err.path.endswith("test_loop_lists.py") and err.line and err.construct == "loop"
    assert words in err.message and hint in err.hint
