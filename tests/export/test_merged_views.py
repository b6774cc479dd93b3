"""Views chosen by tensor data, then updated in place.

`f = x[0] if x.sum() > 0 else x[1]` is, in eager PyTorch, row 0 or row 1 of `x` itself, so
`f += 1` changes `x` in the row the data chose. The value a data-dependent region merges
(a ternary, an `if` statement's result, a loop-carried name) may share memory with
whatever any of its sides shares memory with (`lowering.aliasing`, `Aliases.merge`):

- where every side of an `if` is a view of one base by basic indexing, an update of the
  merged view is written back by an If that assigns into the base the region each side
  chose, and the base exports updated;
- otherwise (a view on one side only, views of two bases, a loop-carried view, an inner
  `if` whose condition is computed on one side), reading the base after the update, or
  the view after an update of its base, is refused, naming the view, the region that chose
  it and a way out.

Each model returns `x` (a local copy or the input itself), so a lost update shows.
"""

import inspect

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

X = torch.randn(4, 4, generator=torch.Generator().manual_seed(3))
# Every side of every `if` below: the sign of the sum, and of x[0, 0].
INPUTS = [(X,), (-X,), (X - X[0, 0] + 0.1,), (X - X[0, 0] - 0.1,), (-X - X[0, 0] - 0.1,)]


def _line(cls, text: str) -> int:
    lines, start = inspect.getsourcelines(cls)
    return start + next(i for i, line in enumerate(lines) if text in line)


# ---------------------------------------------------------------- written back


class TernaryIadd(nn.Module):
    def forward(self, x):
        f = x[0] if x.sum() > 0 else x[1]
        f += 1
        return x


class TernaryOfACopyIadd(nn.Module):
    def forward(self, x):
        x = x * 2
        f = x[0] if x.sum() > 0 else x[3]
        f += 1
        return x, f


class StatementAdd_(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            f = x[0]
        else:
            f = x[1]
        f.add_(1)
        return x, f


class StatementOneSideRebinds(nn.Module):
    """The else side keeps the view made before the `if`."""

    def forward(self, x):
        f = x[2]
        if x.sum() > 0:
            f = x[0]
        f.mul_(3)
        return x, f


class SubscriptAssignment(nn.Module):
    def forward(self, x):
        f = x[0] if x.sum() > 0 else x[2]
        f[1] = 5.0
        return x, f


class CopyInto(nn.Module):
    def forward(self, x):
        f = x[:, 1:3] if x.sum() > 0 else x[:, :2]
        f.copy_(torch.ones(4, 2))
        return x


class MaskedFill(nn.Module):
    def forward(self, x):
        f = x[1:3] if x.sum() > 0 else x[2:]
        f.masked_fill_(f > 0, 0.0)
        return x


class NestedWithConditionsBefore(nn.Module):
    def forward(self, x):
        c1 = x.sum() > 0
        c2 = x[0, 0] > 0
        if c1:
            f = x[0]
        elif c2:
            f = x[1]
        else:
            f = x[2]
        f += 1
        f += 1  # written back again: still a view of the updated base
        return x, f


class IndexTensor(nn.Module):
    """The way out the refusals propose: index the base by the choice."""

    def forward(self, x):
        idx = torch.where(x.sum() > 0, 0, 1)
        x[idx] += 1
        return x


@pytest.mark.parametrize("model", [TernaryIadd(), TernaryOfACopyIadd(), StatementAdd_(), StatementOneSideRebinds(),
                                   SubscriptAssignment(), CopyInto(), MaskedFill(), NestedWithConditionsBefore(),
                                   IndexTensor()], ids=lambda m: type(m).__name__)
def test_an_update_of_a_view_chosen_by_data_is_written_back(model):
    export_and_compare(model, (X,), INPUTS)


def test_a_write_back_with_a_dynamic_axis_matches_eager():
    y = torch.randn(6, 3, generator=torch.Generator().manual_seed(4))
    export_and_compare(StatementAdd_(), (X,), [*INPUTS, (y,), (-y,)],
                       dynamic_shapes={"x": {0: "n", 1: "m"}})


def test_the_write_back_is_an_if_on_the_same_condition():
    proto = export(TernaryIadd(), (X,))
    assert [n.op_type for n in proto.graph.node].count("If") == 2  # the ternary, and the write-back


# ---------------------------------------------------------------- refused


class OneSideIsACopy(nn.Module):
    def forward(self, x):
        f = x[0] if x.sum() > 0 else x[1] * 2
        f += 1
        return x, f


class ViewsOfTwoBases(nn.Module):
    def forward(self, x):
        y = x * 2
        f = x[0] if x.sum() > 0 else y[0]
        f.add_(1)
        return x, y


class NestedTernary(nn.Module):
    """The inner condition is computed on one side of the outer `if`: not there to write back."""

    def forward(self, x):
        f = x[0] if x.sum() > 0 else (x[1] if x[0, 0] > 0 else x[2])
        f += 1
        return x


class LoopCarriedView(nn.Module):
    def forward(self, x):
        f = x[3] * 1
        s = x.sum()
        while s > 0:
            f = x[0]
            s = s - 1
        f += 1
        return x, f


class LoopCarriedViewUpdatedInTheBody(nn.Module):
    """A copy on the first iteration, row 0 of `z` from the second on: the update of `f` changes `z` then."""

    def forward(self, x):
        z = x * 1
        row = z[0]
        f = z[3] * 1
        s = x.sum()
        while s > 0:
            f += 1
            f = row
            s = s - 1
        return z


class BaseUpdatedWhileChosenViewLive(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            f = x[0]
        else:
            f = x[1]
        x += 1
        return f


class UpdateInsideABranch(nn.Module):
    def forward(self, x):
        f = x[0] if x.sum() > 0 else x[1]
        if x[0, 0] > 0:
            f += 1
        return x


@pytest.mark.parametrize("model, updated, name, chooser", [
    (OneSideIsACopy(), "f += 1", "x", "f = x[0] if"),
    (ViewsOfTwoBases(), "f.add_(1)", "x", "f = x[0] if"),
    (NestedTernary(), "f += 1", "x", "f = x[0] if"),
    (LoopCarriedView(), "f += 1", "x", "while s > 0"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_reading_the_base_after_an_update_of_a_chosen_view_is_refused(model, updated, name, chooser):
    cls = type(model)
    at, chosen_at = _line(cls, updated), _line(cls, chooser)
    region = "loop" if "while" in chooser else "ternary"
    model(X.clone())  # eager accepts it
    with pytest.raises(LoweringError) as info:
        export(model, (X,))
    message = str(info.value)
    assert (f"in-place update of `f` at line {at} while `{name}` is live (`f` may be a view of `{name}` chosen by the "
            f"data-dependent {region} at line {chosen_at}): eager PyTorch updates `{name}` only where the data "
            "chose that view, which untrace does not lower") in message
    assert "idx = torch.where(cond, i, j); base[idx] += ..." in message


class WalrusOnTheRightOfAnd(nn.Module):
    """`f` is rebound on the right of `and`, which eager runs only where the left holds."""

    def forward(self, x):
        x = x * 1
        f = x * 3
        if x.sum() > 0 and (f := x[0]).sum() > 0:
            x = x + 1
        f += 1
        return x


def test_a_view_bound_on_the_right_of_a_data_dependent_and_is_a_merge():
    with pytest.raises(LoweringError, match=r"in-place update of `f` .* chosen by the right side of this `and`"):
        export(WalrusOnTheRightOfAnd(), (X,))


class PythonMaxOfViews(nn.Module):
    def forward(self, x):
        f = max(x[0, 0], x[1, 1])
        f += 1
        return x


def test_python_max_of_views_is_a_merge():
    with pytest.raises(LoweringError, match=r"in-place update of `f` .* chosen by `max\(\)` at line"):
        export(PythonMaxOfViews(), (X,))


def test_an_update_in_the_body_of_a_view_an_earlier_iteration_left_is_refused():
    cls = LoopCarriedViewUpdatedInTheBody
    with pytest.raises(LoweringError) as info:
        export(cls(), (X,))
    assert (f"in-place update of `f` at line {_line(cls, 'f += 1')} while `row` is live (`f`, chosen by the "
            f"data-dependent loop at line {_line(cls, 'while s > 0')}, may share memory with `row`)") in str(info.value)


def test_reading_a_chosen_view_after_its_base_is_updated_is_refused():
    cls = BaseUpdatedWhileChosenViewLive
    with pytest.raises(LoweringError) as info:
        export(cls(), (X,))
    assert (f"in-place update of `x` at line {_line(cls, 'x += 1')} while `f` is live (`f` may be a view of it, "
            f"chosen by the data-dependent `if` at line {_line(cls, 'if x.sum() > 0')})") in str(info.value)


def test_an_update_of_a_chosen_view_inside_a_branch_is_refused():
    with pytest.raises(LoweringError, match=r"in-place update through `f`, a view of `x`, inside a data-dependent "
                                            r"branch or loop"):
        export(UpdateInsideABranch(), (X,))


# ---------------------------------------------------------------- what keeps exporting


class MergedCopies(nn.Module):
    def forward(self, x):
        f = x * 2 if x.sum() > 0 else x * 3
        f += 1
        return x, f


class MergedViewNeverWritten(nn.Module):
    def forward(self, x):
        f = x[0] if x.sum() > 0 else x[1]
        g = f * 2
        x += 1
        return x, g


class MergedViewReadOnly(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            f = x[0]
        else:
            f = x[1]
        return x, f * 2


class LoopCarriedCopy(nn.Module):
    def forward(self, x):
        f = x[0] * 1
        s = x.sum()
        while s > 0:
            f = f + x[1]
            s = s - 1
        f += 1
        return x, f


@pytest.mark.parametrize("model", [MergedCopies(), MergedViewNeverWritten(), MergedViewReadOnly(), LoopCarriedCopy()],
                         ids=lambda m: type(m).__name__)
def test_merges_that_do_not_alias_an_updated_tensor_export(model):
    export_and_compare(model, (X,), INPUTS)
