"""Causes of false alarms found after the seed-1 sample of real findings (issue 12): values
the trace knows (fixed-arity unpacking, parameters and buffers, flags with constant
defaults), None tests written as truth tests, tensor/NumPy dispatch, the rows of
`t.numpy()`, and the sizes of a tensor sized by data. Each is a small program checked as
in `test_precision_causes` (`tests.analyzer.marked_cases`), with the default rules unless
a case says otherwise."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# A fixed-arity unpacking of a tensor is no hazard: any input eager accepts has exactly
# that many rows, and the trace's selections are right for all of them (checked by
# tracing `a, b = shapes.amax(0)` on (N, 2) inputs of other N). A starred one is.
case("fixed-unpack", """
    import torch
    import torch.nn as nn

    class Patches(nn.Module):
        def forward(self, x, shapes: torch.Tensor):
            h, w = shapes.amax(0)
            top, bottom = torch.relu(x).max(dim=0).values[:2]
            head, *tail = torch.relu(x)  # expect: UT105
            return x[:, :2] * h * w + top + bottom + head
""")

# Parameters and buffers are fixed in the exported model: a decision on their values, or
# an escape of them, is the same for every input (but not once mixed with the input).
case("param-valued", """
    import torch
    import torch.nn as nn

    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.ones(3))
            self.alpha = nn.Parameter(torch.zeros(1))
            self.proj = nn.Linear(3, 3)

        def forward(self, x):
            if self.scale.sum() > 0:
                x = x * 2
            if self.alpha.item() > 0.5 and bool((self.proj.weight.abs() < 1).all()):
                x = x + 1
            if (self.scale * x).sum() > 0:  # expect: UT101
                x = x - 1
            return x
""")

# The truth test of a tensor-or-None (`if mlm_targets:`) is written as a None test; the
# truth test of a plain tensor is a data branch.
case("optional-tensor-truth", """
    import torch
    import torch.nn as nn

    class Head(nn.Module):
        def forward(self, x: torch.Tensor, masking_pattern=None):
            if masking_pattern is not None:
                targets = x * masking_pattern
            else:
                targets = None
            if targets:
                x = x + 1
            t = torch.relu(x)
            if t:  # expect: UT101
                x = x + 2
            return x
""")

# (6) A dispatch on `is_torch_tensor(x)` / `isinstance(x, torch.Tensor)` of a value known to
# be a tensor runs the tensor side: the NumPy side is not traced.
case("tensor-dispatch", """
    import numpy as np
    import torch
    import torch.nn as nn

    def is_torch_tensor(x):
        return isinstance(x, torch.Tensor)

    def _numpy_variant(b):  # reported through `unsure` only: `maybe` is not known to be a tensor
        for r in b:  # expect: UT102
            if r.sum() > 0:  # expect: UT101
                return r
        return b

    def convert(b):
        if is_torch_tensor(b):
            return b * 2
        elif isinstance(b, np.ndarray):
            return _numpy_variant(b)
        raise ValueError(type(b))

    def scale(b):
        if not isinstance(b, torch.Tensor):
            return _numpy_variant(b)
        return b / 2

    def unsure(b):
        if is_torch_tensor(b):
            return b
        return _numpy_variant(b)

    class Boxes(nn.Module):
        def forward(self, x: torch.Tensor, maybe):
            return convert(torch.relu(x)) + scale(torch.relu(x)) + unsure(maybe)
""")

# The rows of `t.numpy()` are as many as the tensor's rows: the escape is the finding, the
# loop over them is a shape loop (UT104, off by default), not a data loop.
case("numpy-rows", """
    import numpy as np
    import torch
    import torch.nn as nn

    class Post(nn.Module):
        def forward(self, x: torch.Tensor):
            out = []
            for row in torch.relu(x).numpy():  # expect: UT202
                out.append(row.sum())
            m = np.percentile(torch.relu(x).numpy(), 50)  # expect: UT202
            if m > 0:  # expect: UT101
                x = x + 1
            return x, out
""")


# A tensor sized by data has data only in its first dimension: `.shape[-1]` / `.size(1)`
# of a boolean-mask selection are the feature sizes; `len(t.shape)` is the rank; and
# `repeat_interleave` by a Python count is sized by shapes.
case("data-sized-dims", """
    import torch
    import torch.nn as nn

    class Select(nn.Module):
        def forward(self, x: torch.Tensor, scores: torch.Tensor):
            picked = x[scores > 0]
            assert picked.shape[-1] == 4 and picked.size(1) == 4  # expect: UT103
            if len(picked.shape) == 2:
                picked = picked * 2
            if picked.shape[0] > 3:  # expect: UT101
                picked = picked[:3]
            up = torch.repeat_interleave(x, repeats=2, dim=1)
            if up.shape[1] > 8:  # expect: UT103
                up = up[:, :8]
            return picked, up
""", extend_select=["UT103"])


# A parameter whose default is a Python constant is a flag, whatever its annotation says
# (`output_attentions: torch.Tensor | None = False`); zipping a tensor with the layers of a
# ModuleList runs once per layer, a count the model fixes.
case("flag-defaults-and-layer-zip", """
    import torch
    import torch.nn as nn

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.norms = nn.ModuleList([nn.LayerNorm(4) for _ in range(3)])

        def forward(self, x: torch.Tensor, stacked: torch.Tensor, output_attentions: torch.Tensor | None = False):
            if not output_attentions:
                x = x * 2
            outs = [norm(h) for h, norm in zip(torch.relu(stacked), self.norms)]
            rows = [r for r, k in zip(torch.relu(stacked), [1, 2, 3])]  # expect: UT105
            return x, outs, rows
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
