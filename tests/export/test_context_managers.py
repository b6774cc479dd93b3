"""`with` statements in forward (issue 24): torch's grad-mode managers, autocast that
changes nothing on the CPU, library managers, and user classes whose `__enter__` /
`__exit__` are interpreted as Python runs them, with `as` targets bound; nested, under a
data-dependent `if` and inside a data-dependent loop. Each exports and matches eager on
onnxruntime with a dynamic batch, or is refused with a message that says what to do."""

import contextlib
import threading

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "batch"}}
# Row sums of both signs: the data-dependent `if`s take both sides, the loops run 0+ times.
INPUTS = [(torch.tensor([[1.0, 2.0], [0.5, -0.25]]),), (torch.tensor([[-1.0, -2.0], [-0.5, 0.25], [3.0, 1.0]]),),
          (torch.tensor([[0.1, -0.3]]),)]


class GradModes(nn.Module):
    def forward(self, x):
        with torch.no_grad():
            y = x * 2
        with torch.enable_grad():
            y = y + 1
        with torch.set_grad_enabled(False):
            y = y - x
        with torch.inference_mode():
            y = y * 3
        with torch.autocast("cpu", enabled=False), torch.autocast(device_type="cuda"):
            y = y.relu()
        return y


class Scale:
    """A user context manager: a scale set for the block, put back after; `as` binds it."""

    def __init__(self, owner, value):
        self.owner, self.value = owner, value

    def __enter__(self):
        self.saved = self.owner.scale
        self.owner.scale = self.value
        return self

    def __exit__(self, *exc_info):
        self.owner.scale = self.saved
        return False


class UserManager(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0

    def forward(self, x):
        with Scale(self, 3.0) as ctx:
            y = x * self.scale + ctx.value
            with Scale(self, 0.5):
                y = y * self.scale
        return y * self.scale


class OffsetTensor:
    """`__enter__` returns a graph value; `__exit__` reads it."""

    def __init__(self, x):
        self.x = x

    def __enter__(self):
        return self.x.mean(dim=0, keepdim=True)

    def __exit__(self, kind, value, traceback):
        return None


class EnterReturnsATensor(nn.Module):
    def forward(self, x):
        with OffsetTensor(x) as centre:
            return x - centre


class Factor:
    """A user manager whose state is its own (made in forward): allowed in graph regions."""

    def __init__(self, value):
        self.value = value
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        return self.value * self.depth

    def __exit__(self, *exc_info):
        self.depth -= 1


class UnderADataIf(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            with torch.no_grad(), Factor(2.0) as k:
                y = x * k
        else:
            with Factor(-1.0) as k:
                with torch.autocast("cpu", enabled=False):
                    y = x * k + 1
        return y


class InsideADataLoop(nn.Module):
    def forward(self, x):
        total = x[0] * 0
        for row in x:
            with torch.set_grad_enabled(False), Factor(2.0) as k:
                if row.sum() > 0:
                    total = total + row * k
                else:
                    total = total - row
        return total


class LibraryManagers(nn.Module):
    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def forward(self, x):
        with self.lock, contextlib.nullcontext(2.0) as k, contextlib.suppress(KeyError):
            y = x * k + 1
        return y


@pytest.mark.parametrize("model", [GradModes(), UserManager(), EnterReturnsATensor(), UnderADataIf(),
                                   InsideADataLoop(), LibraryManagers()], ids=lambda m: type(m).__name__)
def test_with_statements_match_eager(model):
    grad = torch.is_grad_enabled()
    export_and_compare(model, INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)
    assert torch.is_grad_enabled() == grad  # every manager was left
    assert getattr(model, "scale", 1.0) == 1.0  # the user manager put the scale back


class Suppresses:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return kind is KeyError


class SuppressedException(nn.Module):
    def forward(self, x):
        y = x + 1
        with Suppresses():
            y = y * 2
            raise KeyError("stop here")
        return y


def test_an_exit_that_suppresses_the_exception_goes_on_after_the_with():
    export_and_compare(SuppressedException(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


class CpuAutocast(nn.Module):
    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return x @ x.T


class NotAManager(nn.Module):
    def forward(self, x):
        with x:
            return x


class ModuleStateUnderADataIf(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0

    def forward(self, x):
        if x.sum() > 0:
            with Scale(self, 2.0):
                x = x * self.scale
        return x


@pytest.mark.parametrize("model, message", [
    (CpuAutocast(), "`with torch.autocast('cpu', dtype=torch.bfloat16)` computes the body's ops in "
                    "torch.bfloat16 on the CPU"),
    (NotAManager(), "`with x`: a tensor is not a context manager"),
    # A manager that sets the module's state, inside a data-dependent branch: the state
    # rule of every graph region (set and put back in one branch is not told apart).
    (ModuleStateUnderADataIf(), "`self.owner.scale` (the module's state) is changed inside a data-dependent branch"),
], ids=["cpu-autocast", "tensor", "module-state-in-branch"])
def test_refused_with_statements_say_why(model, message):
    with pytest.raises(LoweringError) as info:
        export(model, INPUTS[0])
    assert message in str(info.value)
    assert info.value.hint
