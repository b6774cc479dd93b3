"""A data-dependent loop's carried set, with the interpreter's folding of static
conditions (issue 24): a name None before the loop, assigned in the body only under an
`if` on a module's flag that is False, is not changed by the loop, so nothing carries
it; with the flag True, or under an `if` on data, it is carried and refused by name.
Each model matches eager on onnxruntime on inputs that run the loop 0, 1, 2 and 5 times."""

import torch
from torch import nn

from tests.export.test_loop_python_state import INPUTS, carried, refused


class FlaggedState(nn.Module):
    """A recurrent state that only a configured variant keeps (`c` stays None otherwise)."""

    def __init__(self, mixed: bool):
        super().__init__()
        self.mixed = mixed
        self.cell = nn.Linear(2, 2)

    def forward(self, x):
        h, c = x, None
        n = x.sum()
        while n > 0:  # refused
            if self.mixed:
                h, c = self.cell(h), h
            h = torch.tanh(self.cell(h))
            n = n - 1
        return h if c is None else h + c


class StateOnData(nn.Module):
    def forward(self, x):
        c = None
        n = x.sum()
        while n > 0:
            if n > 2:  # refused
                c = x * n
            n = n - 1
        return x if c is None else c


def test_a_name_the_loop_leaves_none_under_a_false_flag_is_not_carried():
    carried(FlaggedState(mixed=False))


def test_a_name_the_loop_assigns_under_a_true_flag_or_on_data_is_refused():
    assert "`c` is None before the data-dependent loop" in refused(FlaggedState(mixed=True)).message
    # The `if` on data merges None with a tensor: refused there, by its own name.
    assert "a NoneType where the graph needs a tensor" in refused(StateOnData()).message
