"""A cache on self rebuilt when its key changes (issue 24; ESM's rotary embedding):
`if seq_len != self._seq_len_cached: self._seq_len_cached = seq_len; self._cos = f(seq_len)`.
Exported from a module whose cache is empty, the graph always rebuilds; eager rebuilds or
reuses what an earlier call built from the same key, which is the same value when what is
stored depends on the inputs through the key only. Each model is compared with eager over
a run of sizes that repeats some (eager's cache hits) and changes others (rebuilds)."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

SEQ = {"x": {0: "batch", 1: "n"}}
RUN = [(torch.randn(b, n, 4, generator=torch.Generator().manual_seed(10 * b + n)),)
       for b, n in ((2, 8), (2, 8), (1, 5), (3, 12), (1, 5), (2, 8))]


class Rotary(nn.Module):
    """esm/rotary_embedding.py's tables, cached by length."""

    def __init__(self, dim=4):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
        self._seq_len_cached = None
        self._cos_cached = None
        self._sin_cached = None

    def _update_tables(self, x, seq_dimension=1):
        seq_len = x.shape[seq_dimension]
        if seq_len != self._seq_len_cached or self._cos_cached.device != x.device:
            self._seq_len_cached = seq_len
            t = torch.arange(x.shape[seq_dimension], device=x.device).type_as(self.inv_freq)
            freqs = torch.einsum("i,j->ij", t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1).to(x.device)
            self._cos_cached = emb.cos()[None, :, :]
            self._sin_cached = emb.sin()[None, :, :]
        return self._cos_cached, self._sin_cached

    def forward(self, x):
        cos, sin = self._update_tables(x)
        return x * cos + torch.cat((-x[..., 2:], x[..., :2]), dim=-1) * sin


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Rotary(), Rotary()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x) + 1
        return x


@pytest.mark.parametrize("model", [Rotary(), TwoLayers()], ids=["rotary", "two-layers"])
def test_a_cache_rebuilt_when_its_key_changes_matches_eager(model):
    export_and_compare(model, RUN[0], RUN, dynamic_shapes=SEQ)


def test_a_cache_keyed_by_a_static_size_matches_eager():
    same = [RUN[0], RUN[1], (RUN[0][0] * 2,)]
    export_and_compare(Rotary(), RUN[0], same)


class KeyedByLengthOnly(nn.Module):
    """The table depends on the width too, but only the length is compared: a cache hit with
    another width would reuse a stale table."""

    def __init__(self):
        super().__init__()
        self._len = None
        self._table = None

    def forward(self, x):
        n = x.shape[1]
        if n != self._len:
            self._len = n
            self._table = torch.arange(n * x.shape[2]).float().reshape(n, -1)
        return x + self._table


class StoresValues(nn.Module):
    def __init__(self):
        super().__init__()
        self._len = None
        self._mean = None

    def forward(self, x):
        n = x.shape[1]
        if n != self._len:
            self._len = n
            self._mean = x.mean(0)
        return x - self._mean


class OnlyWhenEmpty(nn.Module):
    """Built once, never checked against the length: eager's next call reuses it whatever its length."""

    def __init__(self):
        super().__init__()
        self._table = None

    def forward(self, x):
        if self._table is None:
            self._table = torch.arange(x.shape[1]).float()
        return x + self._table[:, None]


class CountsMisses(nn.Module):
    """A hit does something a rebuild does not: not a cache."""

    def __init__(self):
        super().__init__()
        self._len = None
        self._table = None

    def forward(self, x):
        n = x.shape[1]
        if n != self._len:
            self._len = n
            self._table = torch.arange(n).float()
        else:
            self._table = self._table + 1
        return x + self._table[:, None]


@pytest.mark.parametrize("model, message", [
    (KeyedByLengthOnly(), "`self._table` is stored when `KeyedByLengthOnly._len` changes"),
    (StoresValues(), "`self._mean` is stored when `StoresValues._len` changes"),
    (OnlyWhenEmpty(), "`self._table` is read before forward assigns it"),
    (CountsMisses(), "`self._len` is read before forward assigns it"),
], ids=["depends-on-more-than-the-key", "stores-input-values", "never-compared", "has-an-else"])
def test_state_that_is_not_a_cache_of_its_key_is_refused(model, message):
    with pytest.raises(LoweringError) as info:
        export(model, RUN[0], dynamic_shapes={"x": {0: "batch", 1: "n", 2: "width"}})
    assert message in str(info.value)


class NumpyNames(nn.Module):
    def forward(self, x):
        return x.sum(axis=1, keepdims=True) + torch.mean(x, axis=0, keepdims=True).amax(axis=-1, keepdims=True)


def test_numpy_argument_names_of_torch_functions_match_eager():
    export_and_compare(NumpyNames(), RUN[0], RUN, dynamic_shapes=SEQ)
