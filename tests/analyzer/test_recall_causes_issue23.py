"""Hazards missed of issue 23, each in its general form (the semantics of Python and
PyTorch, not an idiom of one library), in the form of `test_recall_causes`: every line
that must be reported ends in `# expect: UTxxx`, the neighbour that must stay quiet sits
unmarked in the same program, and the exact multiset of (line, code) is asserted.
Checked with every rule (`--select ALL`) unless a case says otherwise."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()


def case(name: str, source: str, **options) -> None:
    CASES.add(name, source, **({"select": ["ALL"]} | options))


# An attribute whose value is not known (the result of a helper that returns either the
# value or a pair of it, a None-default constructor parameter) may be a size: a test of a
# shape against it, or against arithmetic on it (`math.ceil(H / ph)`), is a shape test.
# Unknown stays unknown: alone, it decides nothing.
case("unknown-attribute-against-a-shape", """
    import collections.abc
    import math
    from itertools import repeat

    import torch
    import torch.nn as nn

    def _ntuple(n):
        def parse(x):
            if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
                return tuple(x)
            return tuple(repeat(x, n))
        return parse

    to_2tuple = _ntuple(2)

    def pair(x):
        return x if isinstance(x, collections.abc.Iterable) else (x, x)

    class Patches(nn.Module):
        def __init__(self, patch_size=2, window=None):
            super().__init__()
            self.patch_size = to_2tuple(patch_size)
            self.stride = pair(patch_size)
            self.window = window

        def forward(self, x):
            B, C, H, W = x.shape
            ph, pw = self.patch_size
            new_h = math.ceil(H / ph) * ph
            if new_h != H:  # expect: UT103
                x = x[:, :, :new_h]
            sh, sw = self.stride
            if W % sw:  # expect: UT103
                x = x + 1
            if self.window is not None and H > self.window:  # expect: UT103
                x = x * 2
            if self.window is not None and self.window > 4:
                x = x - 1
            if ph > 1:
                x = x / 2
            return x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.small = Patches(window=7)
            self.plain = Patches()

        def forward(self, x):
            return self.small(x) + self.plain(x)
""")

# Tuples and lists of sizes are sizes: compared, tested for membership, or used as a key.
# A tuple of constants stays static.
case("sizes-in-containers", """
    import torch
    import torch.nn as nn

    class Cached(nn.Module):
        def __init__(self):
            super().__init__()
            self.cache = {}
            self.size = [8, 8]
            self.kernel = (3, 3)

        def forward(self, x):
            h, w = x.shape[-2:]
            if [h, w] != self.size:  # expect: UT103
                x = x + 1
            if (h, w) == (4, 4):  # expect: UT103
                x = x * 2
            key = (h, w)
            if key not in self.cache:  # expect: UT103
                self.cache[key] = torch.zeros(h, w)
            sizes = (x.shape[2], x.shape[3])
            if sizes == (1, 1):  # expect: UT103
                x = x - 1
            if self.kernel == (3, 3):
                x = x / 2
            if "a" in ("a", "b"):
                x = x + 3
            return x + self.cache[key]
""")

# Values that escaped into Python keep their data level through tuples, membership tests,
# dict keys (`setdefault`, `dict(zip(...))`), `list.index`, `groupby` and `sorted`.
case("escaped-values-in-containers", """
    import itertools

    import somelib
    import torch
    import torch.nn as nn

    class Buckets(nn.Module):
        def forward(self, x, ids):
            a = ids[0].item()  # expect: UT201
            t = (a, 3)
            if t == (1, 3):  # expect: UT101
                x = x + 1
            vals = ids.tolist()  # expect: UT201
            if 3 in vals:  # expect: UT101
                x = x + 1
            if 4 not in vals:  # expect: UT101
                x = x + 2
            d = {}
            for v in vals:  # expect: UT104
                d.setdefault(v, []).append(1)
            if len(d) > 2:  # expect: UT101
                x = x + 3
            pos = dict(zip(vals, range(len(vals))))
            if 5 in pos:  # expect: UT101
                x = x + 4
            if vals.index(2) > 0:  # expect: UT101
                x = x + 5
            runs = [k for k, g in itertools.groupby(vals)]
            if len(runs) > 1:  # expect: UT101
                x = x + 6
            ordered = sorted(vals)
            if ordered[0] > 0:  # expect: UT101
                x = x + 7
            names = ["a", "b"]
            if names.index("b") == 1:
                x = x + 8
            opts = dict(a=1)
            if "a" in opts:
                x = x + 9
            out = somelib.run(x.sum())  # not resolved: what it holds decides nothing
            if "a" in out[1]:
                x = x + 10
            return x
""")

# Random fills are drawn at run time: the values of `torch.empty(n).uniform_()`, and of
# every tensor filled so in place, are data, whatever the tensor held. A constant fill
# (`fill_`) of a tensor of known sizes is still known when traced (a shape matter).
case("random-fills", """
    import torch
    import torch.nn as nn

    class Noise(nn.Module):
        def forward(self, x):
            r = torch.empty(1).uniform_(0, 1)
            if r < 0.5:  # expect: UT101
                x = x + 1
            if torch.empty(1).normal_().item() > 0:  # expect: UT101, UT201
                x = x + 2
            keep = torch.empty(4).bernoulli_(0.5)
            if keep.sum() > 0:  # expect: UT101
                x = x * 2
            v = torch.empty(()).random_(0, 10).item()  # expect: UT201
            e = torch.empty(3)
            e.exponential_()
            if e.max() > 1:  # expect: UT101
                x = x + 1
            z = torch.zeros(x.shape[0])
            z.fill_(2.0)
            if z.sum() > 0:  # expect: UT103
                x = x + 1
            return x, v
""", select=["UT1", "UT2"])  # no UT302: `untrace export` has no lowering of random fills

# A call with `*args` / `**kwargs` is followed as any other: the parameters it does not
# name take what the mapping may hold, or their defaults.
case("star-arguments-followed", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def scaled(self, x, scale=1.0, **kwargs):
            if x.sum() > 0:  # expect: UT101
                x = x * scale
            return x

        def masked(self, x, mask=None, **kwargs):
            if mask is not None:
                x = x * mask
            return x

        def spread(self, *tensors):
            total = tensors[0]
            if total.mean() > 0:  # expect: UT101
                total = total + 1
            return total

        def forward(self, x, *args, **kwargs):
            x = self.scaled(x, scale=2.0, **kwargs)
            x = self.masked(x, **kwargs)
            return self.spread(x, *args)
""")

# Annotations never override what the code does: a parameter annotated as a dict and
# used as only a tensor is used is a tensor; one used as a dict stays quiet.
case("annotation-against-use", """
    from typing import Any

    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x, batch: dict[str, Any], opts: dict[str, Any] = None, n: int = 3):
            if batch.sum() > 0:  # expect: UT101
                x = x + 1
            if opts is not None and opts.get("flag"):
                x = x + 2
            if n > 2:
                x = x * 2
            return x
""")

# A write through a boolean mask of fewer dimensions than its target, the mask first, of a
# value that does not hold the masked rows (a number, a vector), is a graph onnxruntime
# rejects (benchmarks/data/mask_writes.md): UT301 even into a tensor made here. The rank
# is what the code fixes: a factory's sizes, an embedding of ids, an unpacked shape,
# `torch.cat` with a padding of known rank (on either side of an `if`), and the ranks a
# helper returns relative to its arguments (of the items of a tuple of tensors, here). Full-rank masks, the masked rows written
# back, augmented writes and a slice before the mask stay UT304.
MASKS = """
    from __future__ import annotations

    import torch
    import torch.nn as nn

    class Prompt(nn.Module):
        def __init__(self, size, dim=8, scale=None):
            super().__init__()
            if scale is None or scale <= 0.0:
                scale = 1.0
            self.register_buffer("gauss", scale * torch.randn((2, dim // 2)))
            self.embed = nn.Embedding(100, dim)
            self.eoi = nn.Parameter(torch.zeros(8))
            self.sized = nn.Parameter(torch.zeros(size))  # a name may hold a tuple: rank not known
            self.not_a_point = nn.Embedding(1, dim)

        def encode(self, coords):
            coords = coords @ self.gauss
            return torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)

        def points(self, points, labels, pad: bool):
            if pad:
                padding_point = torch.zeros((points.shape[0], 1, 2))
                padding_label = -torch.ones((labels.shape[0], 1))
                points = torch.cat([points, padding_point], dim=1)
                labels = torch.cat([labels, padding_label], dim=1)
            emb = self.encode(points.clone())
            emb[labels == -1] = 0.0  # expect: UT301
            emb[labels == -1] += self.not_a_point.weight  # expect-local: UT304
            return emb

        def forward(self, prompts: tuple[torch.Tensor, torch.Tensor] | None, ids, x, flag: bool):
            points, labels = prompts
            e = self.points(points, labels, flag)
            h = self.embed(ids)
            h[ids == 3] = self.eoi  # expect: UT301
            h[ids == 4] = self.sized  # expect-local: UT304
            y = x.clone()
            y[y > 0] = 0.0  # expect-local: UT304
            m = y[:, 0] > 0
            y[m] = 1.0  # expect: UT301
            y[m, :] = 2.0  # expect: UT301
            y[m] = x[m]  # expect-local: UT304
            y[:, m] = 0.0  # expect-local: UT304
            y.index_put_((m,), torch.tensor(0.0))  # expect: UT301
            b, n, c = x.shape
            z = torch.zeros(b, n)
            z[z > 1] = 2.0  # expect-local: UT304
            w = torch.zeros(b, n, c)
            w[z > 1] = 3.0  # expect: UT301
            w[torch.arange(b) < 2] = 4.0  # expect: UT301
            return e, h, y, w
"""
case("lower-rank-mask-writes", MASKS.replace("# expect-local:", "# expect:"))
case("lower-rank-mask-writes-default", MASKS.replace("  # expect-local: UT304", ""), select=None)

# Ranks do not cross calls, but an argument a helper returns as it was passed is still the
# caller's very value: a training target at its default None stays so through a transform
# (its `if targets is not None:` is training-only code, UT106).
case("argument-returned-as-passed", """
    import torch
    import torch.nn as nn

    class Transform(nn.Module):
        def forward(self, images, targets=None):
            images = images * 2
            return images, targets

    class Det(nn.Module):
        def __init__(self):
            super().__init__()
            self.transform = Transform()

        def forward(self, images, targets=None):
            images, targets = self.transform(images, targets)
            if targets is not None:
                if targets.sum() > 0:  # expect: UT106
                    images = images + 1
            return images
""")

# Ranks through the ops: a reduction over a named dimension drops it (not with keepdim),
# `unsqueeze` adds one, `flatten(1)` leaves two, a linear layer keeps its input's, a
# `view` has as many as its sizes, an integer index drops one, None adds one. Where the
# code does not fix a rank (`view(*shape)`, a reduction over a computed dimension), the
# write stays UT304.
case("ranks-through-ops", """
    import torch
    import torch.nn as nn

    class Ranks(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x, shape, d: int):
            y = self.proj(x).clone()
            y[x.sum(-1) > 0] = 0.0  # expect: UT301
            y[x.mean(-1, keepdim=True) > 0] = 0.0  # expect: UT304
            y[x.amax(dim=(1, 2)) > 0] = 0.0  # expect: UT301
            y[x.sum(d) > 0] = 0.0  # expect: UT304
            f = x.flatten(1).clone()
            f[f[:, 0] > 0] = 1.0  # expect: UT301
            v = x.view(2, -1).clone()
            v[v > 0] = 1.0  # expect: UT304
            v[v[:, None, 0] > 0] = 1.0  # expect: UT304
            v[v[:, 0] > 0] = 1.0  # expect: UT301
            u = x.view(*shape).clone()
            u[u[:, 0] > 0] = 1.0  # expect: UT304
            e = x[:, 0].unsqueeze(-1).clone()
            e[e > 0] = 2.0  # expect: UT304
            return y, f, v, u, e
""")

# An annotation of a tuple or list of tensors says what its items are: unpacked, each is
# an assumed tensor, as an item of `*args` is. A tuple of other things stays unknown.
case("annotated-tuple-of-tensors", """
    from typing import List, Optional, Tuple

    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x, pair: Optional[Tuple[torch.Tensor, torch.Tensor]], feats: list[torch.Tensor],
                    sizes: Tuple[int, int], names: List[str]):
            a, b = pair
            if a.sum() > b.sum():  # expect: UT101
                x = x + 1
            for f in feats:
                if f.mean() > 0:  # expect: UT101
                    x = x * 2
            h, w = sizes
            if h > w:
                x = x - 1
            for n in names:
                x = x + len(n)
            return x
""")

# What the code does wins over the annotation there too: after `isinstance(h, tuple) and`
# the operands that follow see a tuple (its length is static); before the test, `h` is
# what the annotation says.
case("type-test-in-and", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, hidden_states: list[torch.Tensor], x):
            out = []
            for h in hidden_states:
                if isinstance(h, (tuple, list)) and len(h) == 2:
                    h = h[0]
                if len(h) > 2 and isinstance(h, tuple):  # expect: UT103
                    h = h[1]
                out.append(h)
            if isinstance(x, dict) and len(x) > 3:
                x = x["a"]
            return out, x
""")

# `super().__init__(*args, **kwargs)` runs the base's constructor: the submodules it
# builds are the subclass's, so `self.lin(x)` returns a tensor and `self.inner(...)` is
# followed into.
case("super-init-with-star-arguments", """
    import torch
    import torch.nn as nn

    class Inner(nn.Module):
        def forward(self, x, n):
            for i in range(n):  # expect: UT104
                x = x + 1
            return x

    class Base(nn.Module):
        def __init__(self, dim, hidden=4):
            super().__init__()
            self.lin = nn.Linear(dim, hidden)
            self.inner = Inner()

    class Child(Base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

        def forward(self, x):
            y = self.lin(x)
            if y.sum() > 0:  # expect: UT101
                y = y + 1
            return self.inner(y, 2) + self.inner(y, y.shape[0])
""")

# What an object of a plain class holds (a model output built from tensors) is not
# followed: it is what an unresolved call returns, not a static value, whether the call
# that returns it is followed (`self.encoder(x, **kwargs)`) or not. A configuration
# object built from constants stays static.
case("object-holding-tensors", """
    from dataclasses import dataclass

    import torch
    import torch.nn as nn

    @dataclass
    class Output:
        last_hidden_state: torch.Tensor

    @dataclass
    class Settings:
        depth: int

    class Encoder(nn.Module):
        def forward(self, x, **kwargs):
            return Output(x * 2)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x, **kwargs):
            hidden = self.encoder(x, **kwargs)[0]
            n, length = hidden.shape[:2]
            if length > 4:  # expect: UT103
                hidden = hidden[:, :4]
            settings = Settings(2)
            if settings.depth > 1:
                hidden = hidden * 2
            return hidden
""")

# In-place methods that write at positions (`index_add_`, `scatter_`, `masked_fill_`,
# `copy_`) are index writes: into a tensor made here they are UT304 (off by default), as
# `t[idx] = v` is; arithmetic in place (`add_`) on such a tensor is not.
IN_PLACE = """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x, idx, src, mask):
            out = torch.zeros(10, 4)
            out.index_add_(0, idx, src)  # expect-local: UT304
            s = torch.zeros(10, 4)
            s.scatter_(0, idx.unsqueeze(1).expand(-1, 4), src)  # expect-local: UT304
            m = x.clone()
            m.masked_fill_(mask, 0.0)  # expect-local: UT304
            c = torch.empty(3)
            c.copy_(x[:3])  # expect-local: UT304
            w = torch.zeros(10, 4)
            w[idx] = src  # expect-local: UT304
            w.add_(1)
            x.masked_fill_(mask, 1.0)  # expect: UT301
            return out, s, m, c, w
"""
case("position-writes-local", IN_PLACE.replace("# expect-local:", "# expect:"))
case("position-writes-default", IN_PLACE.replace("  # expect-local: UT304", ""), select=None)

# An `if` on a value of its own that leaves a loop (`n` of `for n in t.tolist()`, an
# escape computed in the body) is UT101 at its line, besides the loop's UT102; a counter
# of the loop's own passes is data only because the loop is, and stays quiet.
case("loop-exit-on-own-value", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x, lens):
            total = 0
            for n in lens.tolist():  # expect: UT102, UT201
                if n == 0:  # expect: UT101
                    break
                total += n
            for i in range(4):  # expect: UT102
                v = x[i].sum().item()  # expect: UT201
                if v > 0:  # expect: UT101
                    break
            steps = 0
            while x.norm() > 1:  # expect: UT102
                steps += 1
                if steps == 10:
                    break
                x = x / 2
            return x[:total]
""")


@pytest.mark.parametrize("name", CASES.names())
def test_recall(name):
    CASES.check(name)
