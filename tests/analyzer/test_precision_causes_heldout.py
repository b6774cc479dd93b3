"""Causes of the false alarms of issue 23's first held-out measurement (seed 20261209,
now development data), each in its general form, in the form of `test_precision_causes`:
every line that must be reported ends in `# expect: UTxxx`, its true-positive neighbour
sits in the same program, and the exact set of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# Parameters, buffers and tensors built from static Python values alone are constants of
# the exported graph: their escapes decide nothing, and their rows are the model's. `w.to(x)`
# takes only dtype and device from `x`; a constant written into a copy of a buffer keeps it
# constant. The neighbours: a data-sized tensor's emptiness, a buffer copy written with
# data, and a tensor computed from the input iterated.
case("constants-of-the-graph", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("kernel", torch.ones(1, 1, 5, 5))
            self.arch = torch.ones(4, 3)
            self.weights = torch.tensor([1.0, 0.0, 2.0])

        def forward(self, x: torch.Tensor):
            taps = self.kernel.to(x)[0, 0, 2].tolist()
            for a in enumerate(self.arch[0].data):
                x = x + 1
            w = self.weights.clone()
            w[0] = 0
            n = torch.count_nonzero(w).item()
            for c in torch.as_tensor([1.0, 2.0])[1:]:
                x = x * c
            d = self.weights.clone()
            d[0] = x.sum()
            m = torch.count_nonzero(d).item()  # expect: UT201
            for r in torch.relu(x):  # expect: UT105
                x = x + r
            y = x[x > 0]
            if y.numel() > 0:  # expect: UT101
                x = x + 1
            return x * n * m * taps[0]
""")

# A grid built by `meshgrid` of ranges over sizes holds sizes: its largest value is a size.
case("meshgrid-of-sizes", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x: torch.Tensor):
            sizes = [x.shape[1], x.shape[2]]
            grid = torch.stack(torch.meshgrid(*[torch.linspace(0, s, s + 1)[:s] for s in sizes], indexing="ij"))
            n = grid.view(-1).max().item()
            scaled = torch.stack(torch.meshgrid(*[torch.arange(s) * x.sum() for s in sizes], indexing="ij"))
            m = scaled.view(-1).max().item()  # expect: UT201
            return x * n * m
""")

# The rows of `t.numpy()` are as many as the tensor's: `len(a[0])` is a size, and a
# parameter picked at a counter up to it is a constant. The values stay data.
case("numpy-rows-are-sizes", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3), requires_grad=False)

        def forward(self, x: torch.Tensor):
            d = x.cpu().float().numpy()  # expect: UT202
            out = []
            for i in range(x.shape[0]):
                for c in range(len(d[0])):
                    t = self.w[c].item()
                    if d[i][c] - t > 0:  # expect: UT101
                        out.append(c)
            return x, out
""")

# Whether a tensor was made in inference mode is a flag of the tensor, not its values.
case("inference-flag", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x: torch.Tensor):
            y = x.clone() if x.is_inference() else x.contiguous()
            z = x.clone() if x.is_nonzero() else x  # expect: UT101
            return y + z
""")

# Classes an export never enters by their own `forward`: a data-parallel wrapper, and a
# module whose `forward` requires another module (an algorithm run on a model). Modules
# taking tensors, a module with an optional module argument, and (not decided yet) a class
# of a hierarchy that is no `nn.Module`, stay entry points.
case("classes-no-export-enters", """
    from abc import ABC
    from typing import Optional
    import torch
    import torch.nn as nn

    class BaseTransform(ABC):
        def __call__(self, data):
            return self.forward(data)

    class ToGraph(BaseTransform):
        def forward(self, img: torch.Tensor):
            return img.numpy()  # expect: UT202

    class Wrapped(nn.Module):
        def forward(self, img):
            return img.numpy()  # expect: UT202

    class Parallel(nn.DataParallel):
        def forward(self, x):
            return x.tolist()

    class Explainer(nn.Module):
        def forward(self, model: torch.nn.Module, x, *, target, index: Optional[int] = None):
            return index.item()

    class Head(nn.Module):
        def forward(self, x, scale: Optional[nn.Module] = None):
            return x.item()  # expect: UT201
""")

# A conditional expression passed where the callee only builds a message (`check(ok,
# "a" if ok else f"got {t}")`) picks text, not a computation. The neighbour passes the
# choice to a parameter the callee computes with; the check's own test stays a branch.
case("message-argument-choice", """
    import torch
    import torch.nn as nn

    def check(condition, msg=None, raises=True):
        if not condition:  # expect: UT101
            if raises:
                msg = resolve(msg)
                error = "failed" if msg is None else msg
                raise ValueError(error)
            return False
        return True

    def apply(x, mode):
        return x * 2 if mode == "a" else x  # expect: UT101

    class Net(nn.Module):
        def forward(self, x: torch.Tensor, sigma: torch.Tensor):
            positive = bool((sigma > 0).all())  # expect: UT201
            check(positive, "sigma must be positive" if positive else f"got {sigma}")
            return apply(x, "a" if positive else "b")  # expect: UT101
""")

# An `if` whose body raises, followed by nothing but other such `if`s and a `raise`, only
# picks which error is raised. The neighbour's `if` raises or goes on.
case("if-only-picks-the-error", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, src: torch.Tensor, index: torch.Tensor):
            try:
                return self.checked(src, index).index_select(0, index)
            except (IndexError, RuntimeError) as e:
                if index.numel() > 0 and index.min() < 0:
                    raise IndexError("negative") from e
                if index.max() >= src.size(0):
                    raise IndexError("too large") from e
                raise e

        def checked(self, src, index):
            if index.max() >= src.size(0):  # expect: UT101
                raise IndexError("too large")
            return src
""")

# `int(t.max()) + 1 if t.numel() > 0 else 0`: the emptiness test only keeps the escape
# (reported) from failing. A test of emptiness choosing a computation stays.
case("emptiness-guard-of-an-escape", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x: torch.Tensor, index: torch.Tensor):
            index = index[index > 0]
            size = int(index.max()) + 1 if index.numel() > 0 else 0  # expect: UT201
            n = index.sum() if index.numel() > 0 else 0  # expect: UT101
            return x[:size] * n
""")

# Rows of one scratch tensor at distinct constants (`past = pe[0]; future = pe[1]`) share
# no element: writes through each are traced right when the base is read nowhere else. Two
# views of the same row stay a hazard.
case("disjoint-rows-of-a-scratch-tensor", """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x: torch.Tensor):
            n = x.shape[1]
            pos = torch.arange(0, n).unsqueeze(-1).float()
            tot = torch.empty((2, n, 4))
            past = tot[0]
            future = tot[1]
            past[:, 0::2] = torch.sin(pos)
            future[:, 0::2] = torch.cos(pos)
            both = torch.empty((2, n, 4))
            first = both[0]
            again = both[0]
            first[:, 0::2] = torch.sin(pos)  # expect: UT301
            return torch.cat([past, future, again], dim=0)
""")

# A forward parameter annotated as a sequence of Python numbers holds constants the caller
# fixes: a tensor built from it is a constant of the graph. An input tensor stays data.
case("sequence-of-numbers-parameter", """
    from typing import Optional, Sequence
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x: torch.Tensor, label_set: Optional[Sequence[int]] = None):
            if label_set is not None:
                prompt = torch.tensor(label_set).unsqueeze(-1)
                if prompt[0].item() == 0:
                    x = x + 1
            if x[0, 0].item() == 0:  # expect: UT101, UT201
                x = x * 2
            return x
""")


# A helper that returns a constant under a tracing guard decides its callers' choices: the
# rounds to check are `()` when traced, and membership in them is never true, so the data
# test after `and` never runs in the trace. The neighbour checks rounds that exist.
case("empty-when-traced-membership", """
    import torch
    import torch.nn as nn

    def can_stop(image):
        if torch.jit.is_scripting():
            return False
        if torch.jit.is_tracing():
            return False
        return not image.requires_grad

    def rounds(n):
        return tuple(range(1, n, 4))

    class Net(nn.Module):
        def forward(self, x: torch.Tensor):
            n = 12
            checks = rounds(n) if can_stop(x) else ()
            every = rounds(n)
            for i in range(n):
                x = torch.relu(x - 1)
                if i + 1 in checks and not bool((x > 0).any()):
                    break
            for i in range(n):  # expect: UT102
                x = torch.relu(x - 1)
                if i + 1 in every and not bool((x > 0).any()):  # expect: UT101
                    break
            return x
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
