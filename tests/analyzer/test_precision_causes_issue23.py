"""Causes of false alarms of issue 23, each in its general form (the semantics of Python
and PyTorch, not an idiom of one library), in the form of `test_precision_causes`: every
line that must be reported ends in `# expect: UTxxx`, its true-positive neighbour sits in
the same program, and the exact set of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add


# A constant every call passes decides the callee's test: `True`/`False` are known flags,
# and a helper runs once per such value. The neighbour passes a flag it was not given.
case("flag-every-call-passes", """
    import torch
    import torch.nn as nn

    def check(x, validate=True):
        if validate and x.sum() > 0:
            raise ValueError("negative")
        return x

    def check_both(x, validate=True):
        if validate and x.sum() > 0:  # expect: UT101
            raise ValueError("negative")
        return x

    class Net(nn.Module):
        def forward(self, x, strict: bool = True):
            x = check(x, validate=False)
            x = check(x, False)
            return check_both(x, validate=strict)
""")

# A flag stored on `self` is no call-site constant: the class's default (`inplace=False`)
# is not what every construction passes, so the write under `Swish(inplace=True)` stays.
case("flag-on-self-is-no-call-site-constant", """
    import torch
    import torch.nn as nn

    def swish(x, inplace: bool = False):
        return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())  # expect: UT301

    class Swish(nn.Module):
        def __init__(self, inplace: bool = False):
            super().__init__()
            self.inplace = inplace

        def forward(self, x):
            return swish(x, self.inplace)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = Swish(inplace=True)

        def forward(self, x):
            return swish(self.act(x), inplace=False)
""")

# A helper that returns a constant under a tracing guard decides its callers' tests as the
# guard itself would. The neighbour returns a data-dependent answer when traced.
case("tracing-guard-through-a-helper", """
    import torch
    import torch.nn as nn

    def exporting():
        if torch.jit.is_tracing() or torch.onnx.is_in_onnx_export():
            return True
        return False

    def small(x):
        if torch.jit.is_tracing():
            return x.sum() < 1
        return False

    class Net(nn.Module):
        def _eager(self):
            return not exporting()

        def forward(self, x):
            if not exporting() and x.sum() > 0:
                x = x + 1
            if self._eager() and x.mean() > 0:
                x = x * 2
            if small(x):  # expect: UT101
                x = x - 1
            return x
""")

# A conditional expression that only picks the text of an error or a warning changes
# nothing a trace records; one that picks a value does.
case("ternary-only-picks-message-text", """
    import warnings
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x):
            if x.shape[0] == 0:
                raise ValueError(f"empty input ({'all' if x.sum() > 0 else 'none'} positive)")
            msg = "positive" if x.sum() > 0 else "negative"
            msg = msg + " input"
            warnings.warn(msg)
            scale = 2 if x.sum() > 0 else 3  # expect: UT101
            return x * scale
""")

# A loss is no entry point of an export: known by PyTorch's base class or naming
# convention, or by a forward that takes a training target and returns a reduction. What
# a model's forward reaches of it is checked along that call path (here under `labels is
# not None`: training-only), and a module that takes a `target` but returns features is
# no loss (the neighbour).
case("losses-are-no-export-entry", """
    import torch
    import torch.nn as nn
    from torch.nn.modules.loss import _Loss

    class Weighted(_Loss):
        def forward(self, input, target):
            if target.sum() > 0:
                return (input - target).abs().mean()
            return input.sum()

    class FocalLoss(nn.Module):
        def forward(self, pred, gt):
            for layer_out in pred:
                if layer_out.max() > 1:
                    pred = pred * 2
            return pred.sum()

    class DistillHead(nn.Module):
        def forward(self, student, targets):
            loss = (student - targets).pow(2)
            if loss.max() > 10:
                loss = loss.clamp(max=10)
            return loss.mean()

    class Aligner(nn.Module):
        def forward(self, x, target):
            if target.sum() > 0:  # expect: UT101
                x = x + target
            return x

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.loss_fct = FocalLoss()

        def forward(self, x, labels=None):
            if x.sum() > 0:  # expect: UT101
                x = x * 2
            if labels is not None:
                return self.loss_fct(x, labels)
            return x
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
