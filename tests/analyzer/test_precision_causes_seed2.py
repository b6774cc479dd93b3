"""More causes of false alarms found by judging random findings on real code (issue 12,
`benchmarks/data/precision_sample_seed2.json` and what the earlier samples still showed),
in the form of `test_precision_causes`: every line that must be reported ends in
`# expect: UTxxx`, its true-positive neighbour sits in the same program, and the exact set
of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# An item picked from a Python list by a data index: what it holds is data, but when every
# item has the same length (every policy is a pair) a loop over it runs that many times.
case("picked-item-of-known-length", """
    import torch
    import torch.nn as nn

    class PolicyAugment(nn.Module):
        def __init__(self, policy):
            super().__init__()
            self._policies = self._get_policies(policy)
            self.groups = [(1, 2), (3, 4, 5)]
            self.magnitudes = torch.linspace(0.0, 1.0, 10)
            self.space = {"a": (torch.linspace(0.0, 0.3, 10), True), "b": (torch.linspace(0.0, 0.9, 10), False)}

        def _get_policies(self, policy):
            if policy == "one":
                return [(("a", 0.4, 8), ("b", 0.6, 9)), (("b", 0.8, 8), ("a", 0.6, None))]
            elif policy == "two":
                return [(("a", 0.1, 2), ("a", 0.2, 3)), (("b", 0.3, 4), ("b", 0.2, 1)), (("a", 0.3, 4), ("b", 0.2, 1))]
            raise ValueError(policy)

        def forward(self, x):
            policy = self._policies[int(torch.randint(len(self._policies), ()))]  # expect: UT201
            for name, probability, level in policy:
                if not torch.rand(()) <= probability:  # expect: UT101
                    continue
                if level is not None:
                    x = x * float(self.magnitudes[level].item())  # expect: UT201
            group = self.groups[int(x.argmax())]  # expect: UT201
            for g in group:  # expect: UT102
                x = x + g
            op = list(self.space.keys())[int(torch.randint(2, (1,)))]  # expect: UT201
            magnitudes, signed = self.space[op]
            return x * float(magnitudes[3].item()) + float(self.magnitudes[3].item())  # expect: UT201
""")

# Unpacking into a fixed number of names, through a comprehension: eager accepts only a
# `grid_hw` of two rows, so the unrolled iteration is right for every input it accepts
# (the escapes are the findings). A starred target or a filter keeps the iteration.
case("fixed-arity-through-comprehension", """
    import torch
    import torch.nn as nn

    class Rope(nn.Module):
        def positions(self, grid_hw):
            grid_h, grid_w = (int(value) for value in grid_hw)  # expect: UT201
            return torch.arange(grid_h * grid_w)

        def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
            pos = self.positions(grid_thw[0, 1:])
            h, w = [v * 2 for v in grid_thw[0, 1:]]
            first, *rest = (v + 1 for v in grid_thw[0])  # expect: UT105
            a, b = [v for v in x if v.sum() > 0]  # expect: UT105, UT101
            return pos, h * w, first, a + b
""")

# A write through a view of a temporary that nothing reads again (only what is computed
# from the view is returned): the trace records the write on the view, and no later use
# of the base can miss it. Checked on onnxruntime against eager (tests/analyzer/
# test_view_writes_traced.py). A base read after the write, or aliased, keeps UT301.
case("view-of-unread-base", """
    import torch
    import torch.nn as nn

    class Rotary(nn.Module):
        mrope_section = [4, 2, 2]

        def forward(self, x):
            freqs = x[None].expand(3, -1, -1, -1).float() * 1.5
            sin = self.recompose(freqs.sin())
            base = x * 2
            v = base[0]
            v[:, :2] = 7.0  # expect: UT301
            kept = x * 3
            alias = kept
            w = kept[0]
            w.add_(1.0)  # expect: UT301
            return sin, base.sum(0) + v, alias + w

        def recompose(self, freq):
            freqs_thw = freq[0]
            for dim, offset in enumerate((1, 2), start=1):
                length = self.mrope_section[dim] * 3
                idx = slice(offset, length, 3)
                freqs_thw[..., idx] = freq[dim, ..., idx]
            return torch.cat((freqs_thw, freqs_thw), dim=-1)
""")

# A parameter of a module built in this very call is a tensor this code made, not module
# state: writing into it is a local write (UT304, off by default). Module state, and a
# module built in `__init__` (held in a ModuleList too), stays UT301.
case("parameter-of-a-module-built-here", """
    import torch
    import torch.nn as nn

    class RelativeBias(nn.Module):
        def __init__(self, buckets=4, heads=2):
            super().__init__()
            self.buckets = buckets
            self.bias = nn.Embedding(buckets, heads)
            self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
            self.expand = True

        def forward(self, idx):
            if self.expand:
                new_bias = nn.Embedding(self.buckets + 2, 2)
                new_bias.weight.data[: self.buckets] = self.bias.weight.data
                new_bias.weight.data[self.buckets :] = 0.1
                self.bias = new_bias
            norm = nn.LayerNorm(2)
            with torch.no_grad():
                norm.weight[:1] = 2.0
            self.bias.weight.data[0] = 1.0  # expect: UT301
            for layer in self.layers:
                layer.weight[0] = 0.0  # expect: UT301
            return norm(self.bias(idx))
""")

# A loop over submodules whose classes are not known (`self.model` copied from another
# model) yields submodules: what they hold (`m.stride`, a buffer) is module state, fixed
# in the exported model, and so are the items of a tensor computed from it and constants.
# Mixed with tensor values it is data again.
case("state-of-submodules-of-unknown-class", """
    import torch
    import torch.nn as nn

    def make_anchors(feats, strides, offset=0.5):
        points = []
        for i in range(len(feats)):
            stride = strides[i]
            h, w = int(feats[i][0]), int(feats[i][1])
            points.append(torch.arange(h * w) * stride + offset)
        return torch.cat(points)

    class FXModel(nn.Module):
        def __init__(self, model, imgsz=(640, 640)):
            super().__init__()
            self.model = model.model
            self.imgsz = imgsz

        def forward(self, x):
            y = []
            for m in self.model:
                if m.f != -1:
                    x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]
                m.anchors = make_anchors(torch.cat([s / m.stride.unsqueeze(-1) for s in self.imgsz], dim=1), m.stride)
                scale = int(torch.cat([x.mean(0) / m.stride for s in self.imgsz])[0])  # expect: UT201
                x = m(x) * scale
                y.append(x)
            return x
""")

# A type test the analysis can decide runs only the side the value takes, in a ternary as
# in an `if`: `isinstance(feats, list)` of a list the code built is True (the escapes on
# the other side are not run), of a tensor False (they are: the next case).
ANCHORS = """
    import torch
    import torch.nn as nn

    def make_anchors(feats, strides):
        points = []
        for i in range(len(feats)):
            h, w = feats[i].shape[2:] if isinstance(feats, list) else (int(feats[i][0]),  {expect}
                                                                        int(feats[i][1]))  {expect}
            points.append(torch.arange(h * w) * strides[i])
        return torch.cat(points)
"""
case("type-test-of-a-built-list", ANCHORS.format(expect="") + """
    class Backend(nn.Module):
        def forward(self, *outputs):
            maps = [torch.as_tensor(x).permute(0, 3, 1, 2) for x in outputs]
            return make_anchors(maps, [640 / m.shape[2] for m in maps])
""")
case("type-test-of-a-tensor", ANCHORS.format(expect="# expect: UT201") + """
    class Sizes(nn.Module):
        def forward(self, sizes: torch.Tensor):
            return make_anchors(sizes.abs() * 8, [8, 16, 32])
""")
# Under the tracer a size computed through a tracing guard is a traced shape: a decision
# on it is a shape branch (UT103, off by default), also when a factor is a configuration
# value the analysis cannot resolve. A decision on tensor values stays UT101, also on the
# output of a module the analysis cannot resolve.
SIZES = """
    import math

    import torch
    import torch.nn as nn

    def torch_int(x):
        return x.to(torch.int64) if torch.jit.is_tracing() and isinstance(x, torch.Tensor) else int(x)

    class Unfold(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.patch_width = config.patch_size
            self.attention = config.attention_class(config)

        def forward(self, features: torch.Tensor):
            orig_width = features.shape[-1]
            new_width = (
                torch_int(torch.ceil(orig_width / self.patch_width) * self.patch_width)
                if torch.jit.is_tracing()
                else int(math.ceil(orig_width / self.patch_width) * self.patch_width)
            )
            if new_width != orig_width:  {expect}
                features = nn.functional.interpolate(features, size=(new_width,))
            if features.mean() > 0:  # expect: UT101
                features = -features
            hidden = self.attention(features)[0]
            if hidden.dtype == torch.float16 and torch.isinf(hidden).any():  # expect: UT101
                hidden = torch.clamp(hidden, min=-1000.0, max=1000.0)
            return features + hidden
"""
case("traced-size-through-a-guard", SIZES.format(expect=""))
case("traced-size-through-a-guard-is-a-shape", SIZES.format(expect="# expect: UT103"), extend_select=["UT103"])


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
