"""A data-dependent loop's carried set, with the interpreter's folding of static
conditions (issue 24): a name None before the loop, assigned in the body only under an
`if` on a module's flag that is False, is not changed by the loop, so nothing carries
it; with the flag True, or under an `if` on data, it is carried and refused by name.
A tensor first bound in the body and read after the loop is the last iteration's; read
in the body before it is bound, or a Python number, it stays refused. Each model matches
eager on onnxruntime on inputs that run the loop 0 (where eager can), 1, 2 and 5 times."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare
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


class LastOutput(nn.Module):
    """`out` is first bound in the loop and read after it: the last iteration's value."""

    def __init__(self):
        super().__init__()
        self.cell, self.fc = nn.Linear(2, 2), nn.Linear(2, 3)

    def forward(self, x):
        h = x
        for t in range(x.shape[0]):
            out, h = torch.relu(self.cell(h + x[t])), torch.tanh(h)
        return self.fc(out), h


class ReadBeforeBound(nn.Module):
    def forward(self, x):
        h = x
        for t in range(x.shape[0]):
            if t > 0:
                h = h + prev  # refused
            prev = h * 2
        return prev


class LastNumber(nn.Module):
    def forward(self, x):
        for t in range(x.shape[0]):
            k = 2
        return x * k  # refused


SEQUENCES = [(torch.randn(n, 2),) for n in (1, 2, 5)]
DYNAMIC = {"x": {0: torch.export.Dim("n", min=1)}}


def test_a_tensor_first_bound_in_a_data_loop_is_the_last_iterations_after_it():
    export_and_compare(LastOutput().eval(), SEQUENCES[1], SEQUENCES, dynamic_shapes=DYNAMIC)


def test_a_read_before_the_body_binds_it_or_a_number_first_bound_stays_refused():
    for model in (ReadBeforeBound(), LastNumber()):
        with pytest.raises(LoweringError, match="not defined"):
            export(model, SEQUENCES[1], dynamic_shapes=DYNAMIC)
