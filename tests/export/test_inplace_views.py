"""In-place updates and the values that share memory with the updated tensor.

A view (`x[0]`, `x.view(...)`, `x.t()`, ...) sees every in-place update of its base, and
its base sees every update made through it. untrace does not re-derive views, so it
refuses to read a view (or base) after such an update, naming both lines
(`lowering.aliasing`); what does not alias (copies, out-of-place results, views that are
dead after the update, views made after it) exports and matches eager PyTorch. An update
through a view made by basic indexing is written back into its base (`x[i] = y_new`), so
the base stays readable; its other views are still stale.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

X = torch.randn(4, 4, generator=torch.Generator().manual_seed(3))

# Each takes x (4x4) and returns a view of it.
def view_getitem_int(x):
    return x[0]


def view_getitem_slice(x):
    return x[:, 1:3]


def view_getitem_none_ellipsis(x):
    return x[None, ..., 0]


def view_view(x):
    return x.view(-1)


def view_reshape(x):
    return x.reshape(2, 8)


def view_flatten(x):
    return x.flatten()


def view_transpose(x):
    return x.transpose(0, 1)


def view_t(x):
    return x.t()


def view_T(x):
    return x.T


def view_permute(x):
    return x.permute(1, 0)


def view_narrow(x):
    return x.narrow(0, 1, 2)


def view_select(x):
    return x.select(1, 2)


def view_unsqueeze(x):
    return x.unsqueeze(0)


def view_squeeze(x):
    return x.unsqueeze(0).squeeze(0)


def view_expand(x):
    return x[:1].expand(3, 4)


def view_unbind(x):
    return x.unbind(0)[1]


def view_chunk(x):
    return x.chunk(2)[1]


def view_split(x):
    return torch.split(x, 1)[2]


def view_movedim(x):
    return torch.movedim(x, 0, 1)


def view_contiguous(x):
    return x.t().contiguous()


VIEWS = {"getitem-int": view_getitem_int, "getitem-slice": view_getitem_slice, "getitem-none-ellipsis": view_getitem_none_ellipsis, "view": view_view, "reshape": view_reshape, "flatten": view_flatten, "transpose": view_transpose, "t": view_t, "T": view_T, "permute": view_permute, "narrow": view_narrow, "select": view_select, "unsqueeze": view_unsqueeze, "squeeze": view_squeeze, "expand": view_expand, "unbind": view_unbind, "chunk": view_chunk, "split": view_split, "movedim": view_movedim, "contiguous": view_contiguous}


# Each updates x in place (`x += 1`, mask and index assignment are spelled out in _make).
def update_add_(x):
    x.add_(1.0)


def update_mul_(x):
    x.mul_(2.0)


def update_copy_(x):
    x.copy_(torch.ones_like(x))


def update_clamp_(x):
    x.clamp_(min=0.0)


def update_zero_(x):
    x.zero_()


def update_torch_relu_(x):
    torch.relu_(x)


def update_F_relu_inplace(x):
    F.relu(x, inplace=True)


UPDATES = {"iadd": None, "mask-assign": None, "index-assign": None, "add_": update_add_, "mul_": update_mul_, "copy_": update_copy_, "clamp_": update_clamp_, "zero_": update_zero_, "torch.relu_": update_torch_relu_, "F.relu-inplace": update_F_relu_inplace}


def _make(view_name: str, update_name: str, through_view: bool = False) -> nn.Module:
    """A module whose forward takes a view, updates in place, then reads the other side."""
    make_view = VIEWS[view_name]
    update = UPDATES[update_name]

    class ViewThenUpdate(nn.Module):
        def forward(self, x):
            x = x * 1.0
            y = make_view(x)
            if update_name == "iadd":
                if through_view:
                    y += 1.0
                else:
                    x += 1.0
            elif update_name == "mask-assign":
                if through_view:
                    y[y > 0] = 0.0
                else:
                    x[x > 0] = 0.0
            elif update_name == "index-assign":
                if through_view:
                    y[0] = 5.0
                else:
                    x[0] = 5.0
            else:
                update(y if through_view else x)
            return x if through_view else y

    return ViewThenUpdate()


@pytest.mark.parametrize("update_name", list(UPDATES))
@pytest.mark.parametrize("view_name", list(VIEWS))
def test_reading_a_view_after_its_base_is_updated_is_refused(view_name, update_name):
    model = _make(view_name, update_name)
    model(X.clone())  # eager accepts it
    with pytest.raises(LoweringError, match=r"in-place update of .* while `y` is live") as info:
        export(model, (X,))
    assert info.value.path.endswith("test_inplace_views.py") and info.value.line


@pytest.mark.parametrize("update_name", ["iadd", "add_", "mask-assign", "index-assign", "copy_", "clamp_"])
@pytest.mark.parametrize("view_name", ["getitem-int", "getitem-slice", "getitem-none-ellipsis"])
def test_an_update_through_an_indexed_view_is_written_back_into_its_base(view_name, update_name):
    """`y = x[i]; y += 1` is also `x[i] = y`: the base is updated, and reading it exports."""
    export_and_compare(_make(view_name, update_name, through_view=True), (X,), [(X,), (-X,), (X / 10,)])


@pytest.mark.parametrize("update_name", ["iadd", "add_", "mask-assign", "index-assign", "copy_", "clamp_"])
@pytest.mark.parametrize("view_name", ["view", "transpose", "narrow", "unsqueeze"])
def test_reading_a_base_after_an_update_through_its_view_is_refused(view_name, update_name):
    model = _make(view_name, update_name, through_view=True)
    with pytest.raises(LoweringError, match=r"in-place update of `\w+` .* while `x` is live \(the update went through a view"):
        export(model, (X,))


class InputView(nn.Module):
    def forward(self, x):
        y = x[0]
        x.add_(1)
        return y


class ViewInBranch(nn.Module):
    def forward(self, x):
        y = x[0]
        if x.sum() > 0:
            x += 1
        return y


class ViewReadInLoopBeforeUpdate(nn.Module):
    def forward(self, x):
        y = x[0]
        s = torch.zeros(4)
        while s.sum() < 20:
            s = s + y.abs() + 1
            x += 1
        return s, x


class ListHoldsTensor(nn.Module):
    def forward(self, x):
        x = x * 1
        kept = [x]
        x += 1
        return kept[0]


class ParameterUpdate(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x):
        w = self.w
        w.data.mul_(0.5)
        return x * w


class HelperUpdatesArgument(nn.Module):
    def forward(self, x):
        y = x[:2]
        bump(x)
        return y


def bump(t):
    t.add_(1)


class StaleViewAsLoopStart(nn.Module):
    def forward(self, x):
        x = x * 1
        y = x[0]
        x += 1
        while y.sum() < 10:
            y = y + 1
        return y


class UpdateInLoopBaseReadInALaterBranch(nn.Module):
    """The loop body and the If after it are sibling regions: the If sees the loop's update."""

    def forward(self, x):
        z = x * 1
        v = z[0]
        s = x.sum()
        while s > 0:
            v += 1
            s = s - 1
        if x[0, 0] > 0:
            z = z * 2
        return z


@pytest.mark.parametrize("model, message", [
    (InputView(), "while `y` is live"),
    (StaleViewAsLoopStart(), "while `y` is live"),
    (ViewInBranch(), "while `y` is live"),
    (ViewReadInLoopBeforeUpdate(), "read earlier in the loop body"),
    (ListHoldsTensor(), "`kept` holds a tensor that shares its memory"),
    (ParameterUpdate(), "a parameter or buffer"),
    (HelperUpdatesArgument(), "while `y` is live"),
    (UpdateInLoopBaseReadInALaterBranch(), r"in-place update of `v` at line \d+ while `z` is live \(the update went"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_other_stale_reads_are_refused(model, message):
    with pytest.raises(LoweringError, match=message):
        export(model, (X,))


# ---------------------------------------------------------------- what does not alias


class CloneThenUpdate(nn.Module):
    def forward(self, x):
        y = x.clone()
        x += 1
        return y, x


class OutOfPlaceThenUpdate(nn.Module):
    def forward(self, x):
        y = x + 0
        z = x.relu()
        x.add_(1)
        return y, z, x


class DeadView(nn.Module):
    def forward(self, x):
        y = x[0]
        z = y * 2
        x += 1
        return z, x


class ViewAfterUpdate(nn.Module):
    def forward(self, x):
        x = x * 1
        x += 1
        y = x[0]
        x.mul_(2)
        y = x[1]
        return y


class AdvancedIndexIsACopy(nn.Module):
    def forward(self, x):
        mask = x > 0
        y = x[mask]
        rows = x[[0, 2]]
        x[mask] = 0.0
        return y, rows, x


class FullAliases(nn.Module):
    """`z = x`, `x.detach()`, `x.float()`: the same tensor, so they see the update."""

    def forward(self, x):
        x = x * 1
        z = x
        d = x.detach()
        f = x.float()
        x.add_(1)
        return z, d, f


class InplaceActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = x * 2
        identity = h
        out = self.act(h)
        r = F.relu(x - 0.5, inplace=True)
        return out, identity, h, r


class DuplicateConstants(nn.Module):
    def forward(self, x):
        a = torch.zeros(4)
        b = torch.zeros(4)
        a.add_(1)
        return x + b, a


class UpdateInBranchViewUnused(nn.Module):
    def forward(self, x):
        x = x * 1
        y = x[0]
        out = y * 3
        if x.sum() > 0:
            x += 1
        else:
            x -= 1
        return out, x


class UpdateInLoop(nn.Module):
    def forward(self, x):
        x = x * 1
        while x.sum() < 20:
            x += 1
            row = x[0]
            row = row * 2
        return x


class RaiseOnOneSide(nn.Module):
    """The side that raises never runs for the inputs eager accepts: its update leaves nothing stale."""

    def forward(self, x):
        x = x * 1
        y = x[0]
        if x.sum() > 100:
            x += 1
            raise ValueError("too large")
        return y * 2, x


class CopyInto(nn.Module):
    def forward(self, x):
        out = torch.zeros(4, 4, dtype=torch.float64)
        out.copy_(x[:1])
        return out


@pytest.mark.parametrize("model", [CloneThenUpdate(), OutOfPlaceThenUpdate(), DeadView(), ViewAfterUpdate(),
                                   AdvancedIndexIsACopy(), FullAliases(), InplaceActivations(), DuplicateConstants(),
                                   UpdateInBranchViewUnused(), UpdateInLoop(), RaiseOnOneSide(), CopyInto()],
                         ids=lambda m: type(m).__name__)
def test_non_aliasing_updates_match_eager(model):
    export_and_compare(model, (X,), [(X,), (-X,), (X / 10,)])


class SizeArithmetic(nn.Module):
    """`n += 1` on a size rebinds a Python int: other names for it keep their value."""

    def forward(self, x):
        n = x.shape[0]
        m = n
        n += 1
        k = len(x)
        k *= 2
        return x.sum(0) * m + n + k


class IntOfZeroDimTensor(nn.Module):
    """`int(t)` of a 0-d int64 tensor is a new Python int: `t += 1` afterwards stays in place on t."""

    def forward(self, x):
        t = x.sum().long()
        u = t
        n = int(t)
        t += 1
        return u * 1, n * 1, x + t


def test_int_of_a_tensor_is_a_new_number():
    x = torch.randn(3, 4) * 10
    export_and_compare(IntOfZeroDimTensor(), (x,), [(x,), (-x,)])


def test_augmented_assignment_of_a_size_is_not_in_place():
    x = torch.randn(3, 4)
    export_and_compare(SizeArithmetic(), (x,), [(x,), (torch.randn(5, 4),)], dynamic_shapes={"x": {0: "n"}})


# ---------------------------------------------------------------- writes through indexed views


class PadIntoZeros(nn.Module):
    """GeneralizedRCNNTransform.batch_images: each image copied into a slice of a fresh
    zero batch."""

    def forward(self, a, b):
        batch = a.new_full([2, 3, 8, 8], 0)
        for i, img in enumerate([a, b]):
            batch[i, : img.shape[0], : img.shape[1], : img.shape[2]].copy_(img)
        return batch


class ViewOfAView(nn.Module):
    def forward(self, x):
        x = x * 1
        row = x[1]
        part = row[1:3]
        part.mul_(10)
        return x, row, part


class RepeatedUpdatesThroughOneView(nn.Module):
    def forward(self, x):
        x = x * 1
        top = x[:2]
        top.add_(1)
        top.mul_(3)
        return x, top


class HelperWritesIntoSlice(nn.Module):
    def forward(self, x):
        out = torch.zeros(6, 4)
        fill(out[1:5], x)
        return out


def fill(target, source):
    target.copy_(source)


@pytest.mark.parametrize("model", [ViewOfAView(), RepeatedUpdatesThroughOneView(), HelperWritesIntoSlice()],
                         ids=lambda m: type(m).__name__)
def test_updates_through_indexed_views_match_eager(model):
    export_and_compare(model, (X,), [(X,), (-X,), (X / 10,)])


def test_images_copied_into_a_zero_batch_match_eager_with_dynamic_sizes():
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(3, 5, 7, generator=g), torch.randn(3, 8, 6, generator=g)
    export_and_compare(PadIntoZeros(), (a, b), [(a, b), (b[:, :6, :5], a[:, :3, :2]), (-a[:, :1], b)],
                       dynamic_shapes={"a": {1: "ha", 2: "wa"}, "b": {1: "hb", 2: "wb"}})


class OtherViewOfTheBase(nn.Module):
    def forward(self, x):
        x = x * 1
        left = x[:, :2]
        right = x[:, 1:]
        left.zero_()
        return right


class EarlierViewOfTheBase(nn.Module):
    def forward(self, x):
        x = x * 1
        whole = x.view(-1)
        x[0].fill_(7)
        return whole


class WriteThroughViewInBranch(nn.Module):
    def forward(self, x):
        x = x * 1
        y = x[0]
        if x.sum() > 0:
            y.add_(1)
        return x


def _line(cls, text: str) -> int:
    import inspect

    lines, start = inspect.getsourcelines(cls)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("model, view, view_made, update", [
    (OtherViewOfTheBase(), "right", "right = x[:, 1:]", "left.zero_()"),
    (EarlierViewOfTheBase(), "whole", "whole = x.view(-1)", "x[0].fill_(7)"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_a_write_back_still_leaves_the_other_views_stale(model, view, view_made, update):
    with pytest.raises(LoweringError) as info:
        export(model, (X,))
    cls, at = type(model), _line(type(model), update)
    assert str(info.value) == (
        f"{__file__}:{at + 1}: in-place update of `x` at line {at} while `{view}` is live (`{view}` is a view of it "
        f"made at line {_line(cls, view_made)}): eager PyTorch shows the update through `{view}`, which untrace does "
        f"not track\ntake a copy before the update (`{view} = ....clone()`), or update out of place (`x = x + ...` "
        "instead of `+=`, `.add_`, index assignment)")


def test_a_write_back_inside_a_data_dependent_branch_is_refused():
    with pytest.raises(LoweringError) as info:
        export(WriteThroughViewInBranch(), (X,))
    assert str(info.value) == (
        f"{__file__}:{_line(WriteThroughViewInBranch, 'y.add_(1)')}: in-place update through `y`, a view of `x`, "
        "inside a data-dependent branch or loop: `x` was made outside it, and the update of it would not leave the "
        "branch or loop\nassign into `x` itself there (`x[...] = ...`), or update out of place")
