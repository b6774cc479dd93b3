"""Caches that outlive the call, filled by forward with values computed from parameters
only (timm's `attention_bias_cache`): every call would compute the same value, so the
graph computes it afresh and the live dict is left as it was. A cached value that
depends on the inputs, other reads of such a cache, and in-place updates of a cached
tensor are refused."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class CachesItsBias(nn.Module):
    """timm's LeViT / TinyViT attention-bias cache, keyed by device."""

    def __init__(self):
        super().__init__()
        self.biases = nn.Parameter(torch.randn(2, 5))
        self.register_buffer("idxs", torch.tensor([[0, 4, 2], [1, 1, 3], [4, 0, 0]]), persistent=False)
        self.cache = {}

    def get_biases(self, device):
        key = str(device)
        if key not in self.cache:
            self.cache[key] = self.biases[:, self.idxs]
        return self.cache[key]

    def forward(self, x):
        return x @ self.get_biases(x.device) + self.get_biases(x.device).sum()


def _inputs():
    return [(torch.randn(b, 2, 4, 3),) for b in (2, 1, 3)]


def test_cache_of_a_value_computed_from_parameters():
    model = CachesItsBias().eval()
    export_and_compare(model, _inputs()[0], _inputs(), dynamic_shapes={"x": {0: "b"}})
    fresh = CachesItsBias().eval()
    export(fresh, _inputs()[0])
    assert fresh.cache == {}  # the live cache is left as it was


def test_cache_that_eager_filled_before_the_export():
    model = CachesItsBias().eval()
    with torch.no_grad():
        model(*_inputs()[0])
    assert list(model.cache) == ["cpu"]
    export_and_compare(model, _inputs()[0], _inputs(), dynamic_shapes={"x": {0: "b"}})


class CachesItsInput(CachesItsBias):
    def forward(self, x):
        if "x" not in self.cache:
            self.cache["x"] = x * 2
        return self.cache["x"]


class CountsItsCache(CachesItsBias):
    def forward(self, x):
        return x @ self.get_biases(x.device) * len(self.cache)


class UpdatesTheCachedTensor(CachesItsBias):
    def forward(self, x):
        bias = self.get_biases(x.device)
        bias.mul_(2)
        return x @ bias


@pytest.mark.parametrize("model, message, hint", [
    (CachesItsInput(), ("`index assignment` changes `self.cache` (a dict that outlives the call): eager PyTorch keeps "
                       "the change for the next call, which an exported graph cannot"),
     "keep per-call state in a local variable (`items = list(self.cache)` first, then change `items`)"),
    (CountsItsCache(), "len() of a dict that forward filled as a cache: only `key in cache` and `cache[key]` read it",
     "read the cache by key"),
    (UpdatesTheCachedTensor(), ("in-place update of a tensor that forward cached in a dict that outlives the call: "
                               "eager PyTorch would keep the update for the next call"),
     "update a copy (`.clone()`) or out of place"),
])
def test_cache_refusals(model, message, hint):
    with pytest.raises(LoweringError) as info:
        export(model.eval(), _inputs()[0])
    assert (info.value.message, info.value.hint) == (message, hint)
    assert info.value.path == __file__
