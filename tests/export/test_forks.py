"""A data-dependent `if` whose sides cannot be merged (another rank, another dtype, None on
one side) is lowered with the code after it once per side (`lowering.forks`), each model
checked on onnxruntime against eager on inputs that take every side."""

import re

import onnx
import pytest
import torch
from onnx import helper
from torch import nn

from lowering import LoweringError, export
from lowering.errors import GraphConstructionError
from lowering.forks import MAX_LEAVES, Lowered, assemble
from lowering.graph import Value
from lowering.interp.fork_points import ForkSite
from lowering.verification import verify
from tests.export.harness import export_and_compare

ROWS = {"x": {0: "n"}}


def _decode(boxes, n):
    """BoxCoder.decode's shape: [n, -1, 4] only when there are boxes."""
    if n > 0:
        boxes = boxes.reshape(n, -1, 4)
    return boxes


class RankChangingReshape(nn.Module):
    def forward(self, x):
        keep = torch.nonzero(x[:, 0] > 0)[:, 0]
        boxes = _decode(x[keep], keep.numel())
        # lowered for rank 3 after the then side, for rank 2 after the else side
        return boxes.flatten(1) * 2, boxes[:, 0].abs().sum()


def _ifs(graph: onnx.GraphProto) -> int:
    return sum((n.op_type == "If") + sum(_ifs(a.g) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)
               for n in graph.node)


def test_a_rank_changing_reshape_lowers_the_code_after_it_once_per_side():
    inputs = [(torch.randn(6, 8),), (-torch.ones(3, 8),), (torch.randn(9, 8),), (torch.zeros(1, 8),)]
    assert any(bool((a[0][:, 0] > 0).any()) for a in inputs) and not bool((inputs[1][0][:, 0] > 0).any())
    export_and_compare(RankChangingReshape(), inputs[0], inputs, dynamic_shapes=ROWS)
    proto = export(RankChangingReshape(), inputs[0], dynamic_shapes=ROWS)
    assert proto.graph.node[-1].op_type == "If" and _ifs(proto.graph) == 1
    assert [o.name for o in proto.graph.output] == ["output_0", "output_1"]


class DtypeChangingSide(nn.Module):
    def forward(self, x):
        y = x
        if x.sum() > 0:
            y = x > 0.5
        if y.dtype == torch.bool:  # a Python test after the fork: each side lowers one branch
            return y.to(torch.float32) * 3
        return y + 1


def test_a_dtype_changing_side_forks():
    inputs = [(torch.rand(4, 3),), (-torch.rand(2, 3),), (torch.rand(5, 3),)]
    export_and_compare(DtypeChangingSide(), inputs[0], inputs, dynamic_shapes=ROWS)


class ReturnsAnotherDtype(nn.Module):
    def forward(self, x):
        y = x
        if x.sum() > 0:
            y = x.long()
        return y * 2


def test_an_output_whose_dtype_depends_on_the_fork_is_refused():
    message = ("output `output` is torch.int64 when the data-dependent `if` here is true and torch.float32 when it "
               "is false (the code after it is lowered once per side, and an ONNX output has one dtype)\ncast the "
               "output to one dtype on both paths")
    with pytest.raises(LoweringError) as info:
        export(ReturnsAnotherDtype(), (torch.rand(4, 3),), dynamic_shapes=ROWS)
    assert str(info.value).endswith(f"test_forks.py:{ReturnsAnotherDtype.forward.__code__.co_firstlineno + 2}: "
                                    + message)


def _mask_or_none(x, bound):
    mask = None
    if x.amax() > bound:
        mask = x > bound
    return mask


class NoneOnOneSide(nn.Module):
    def forward(self, x):
        mask = _mask_or_none(x, 1.0)
        if mask is None:
            return x * 2
        return torch.where(mask, x, -x)


def _mixed(n, high: bool, low: bool):
    x = torch.rand(n, 3) * 0.5
    if high:
        x[0, 0] = 2.0
    if low:
        x[-1, -1] = -2.0
    return (x,)


def test_a_tensor_on_one_side_and_none_on_the_other_forks():
    inputs = [_mixed(4, True, False), _mixed(3, False, False), _mixed(6, True, True)]
    export_and_compare(NoneOnOneSide(), inputs[0], inputs, dynamic_shapes=ROWS)


class TwoForks(nn.Module):
    def forward(self, x):
        high = _mask_or_none(x, 1.0)
        low = _mask_or_none(-x, 1.0)
        out = x
        if high is not None:
            out = torch.where(high, out * 10, out)
        if low is not None:
            out = torch.where(low, out * 3, out)
        return out


def test_two_forks_in_sequence_make_four_lowerings():
    inputs = [_mixed(4, True, True), _mixed(3, True, False), _mixed(5, False, True), _mixed(2, False, False)]
    export_and_compare(TwoForks(), inputs[0], inputs, dynamic_shapes=ROWS)
    proto = export(TwoForks(), inputs[0], dynamic_shapes=ROWS)
    assert _ifs(proto.graph) == 3  # the first fork's If, and the second's in each of its branches


class FourForks(nn.Module):
    def forward(self, x):
        out = x
        for bound in (1.0, 2.0, 3.0, 4.0):
            mask = _mask_or_none(x, bound)
            if mask is not None:
                out = out + mask.to(out.dtype)
        return out


def test_more_forks_than_lowerings_allowed_are_refused():
    line = _mask_or_none.__code__.co_firstlineno + 2
    with pytest.raises(LoweringError) as info:
        export(FourForks(), _mixed(3, True, False), dynamic_shapes=ROWS)
    assert re.search(rf"test_forks.py:{line}: too many data-dependent `if`s whose sides cannot be merged, each "
                     rf"lowered with the code after it once per side: more than {MAX_LEAVES} lowerings of forward, "
                     rf"for the `if`s at \S+test_forks.py:{line} \(at the first: a NoneType where the graph needs a "
                     r"tensor\)\ngive the sides of some of them one rank, dtype and None-ness, so that they merge "
                     "into one value$", str(info.value))


def test_verify_counts_both_sides_of_a_fork():
    inputs = [_mixed(4, True, False), _mixed(3, False, False)]
    report = verify(NoneOnOneSide(), inputs, compare=())
    assert report.ok
    line = _mask_or_none.__code__.co_firstlineno + 2
    site = next(s for s in report.coverage if s.line == line)
    assert (site.then, site.else_, site.covered) == (1, 1, True)
    one_side = verify(NoneOnOneSide(), inputs[:1], compare=())
    assert next(s for s in one_side.coverage if s.line == line).missing() == ["else"]


class ForkInALoop(nn.Module):
    def forward(self, x):
        total = x.new_zeros(())
        for i in range(x.shape[0]):
            keep = torch.nonzero(x[i] > 0)[:, 0]
            row = x[i][keep]
            if keep.numel() > 0:
                row = row.reshape(keep.numel(), 1)
            total = total + row.sum()
        return total


def test_a_rank_changing_if_inside_a_graph_loop_is_refused():
    first = ForkInALoop.forward.__code__.co_firstlineno
    message = (f"test_forks.py:{first + 5}: a tensor has rank 2 on one side of a data-dependent `if` and rank 1 on the "
               "other: the code after it is lowered for one rank; the code after it cannot be lowered once per side "
               f"here: inside a graph loop (line {first + 2})\ngive the tensor one rank on both sides (reshape it on "
               "the side that differs)")
    with pytest.raises(LoweringError) as info:
        export(ForkInALoop(), (torch.randn(3, 4),), dynamic_shapes=ROWS)
    assert str(info.value).endswith(message)


class SetsUpOnFirstCall(nn.Module):
    def __init__(self):
        super().__init__()
        self.ready = False

    def forward(self, x):
        self.ready = True
        mask = _mask_or_none(x, 1.0)
        return x if mask is None else torch.where(mask, x, -x)


def test_state_left_changed_by_a_forward_that_forks_is_refused_and_undone():
    model = SetsUpOnFirstCall()
    first = SetsUpOnFirstCall.forward.__code__.co_firstlineno
    with pytest.raises(LoweringError) as info:
        export(model, _mixed(3, True, False), dynamic_shapes=ROWS)
    assert re.fullmatch(
        rf"\S+test_forks.py:{first + 1}: forward changes self.ready and leaves it changed, and the code after the "
        rf"data-dependent `if` at \S+test_forks.py:{_mask_or_none.__code__.co_firstlineno + 2} is lowered once per "
        r"side: which side's change eager PyTorch keeps depends on tensor data\nrestore it before forward returns "
        r"\(try / finally\), or give that `if`'s sides one rank, dtype and None-ness", str(info.value))
    assert model.ready is False


class BranchesOnOneSideOnly(nn.Module):
    def forward(self, x):
        keep = torch.nonzero(x[:, 0] > 0)[:, 0]
        boxes = _decode(x[keep], keep.numel())
        if boxes.dim() == 3:  # noqa: SIM102 - a Python test: only the then side's lowering has the `if` below
            if boxes.sum() > 0:
                boxes = boxes * 2
        return boxes.flatten(1)


def test_a_probe_on_one_side_of_a_fork_is_not_reached_on_the_other():
    positive, negative, none = torch.rand(3, 8), -torch.rand(4, 8), -torch.ones(2, 8)
    negative[0, 0] = 0.5
    report = verify(BranchesOnOneSideOnly(), [(positive,), (negative,), (none,)], compare=())
    assert report.ok
    first = BranchesOnOneSideOnly.forward.__code__.co_firstlineno
    inner = next(s for s in report.coverage if s.line == first + 4)
    fork = next(s for s in report.coverage if s.line == _decode.__code__.co_firstlineno + 2)
    assert (inner.then, inner.else_, fork.then, fork.else_) == (1, 1, 2, 1)
    assert [obs[inner.site].reached for obs in report.observations] == [True, True, False]  # -1 without boxes


class ForkInABranch(nn.Module):
    def forward(self, x):
        out = x.flatten(1)
        if x.sum() > 0:
            keep = torch.nonzero(x[:, 0] > 0)[:, 0]
            out = _decode(x[keep], keep.numel()).flatten(1)
        return out


class ForkInATry(nn.Module):
    def forward(self, x):
        keep = torch.nonzero(x[:, 0] > 0)[:, 0]
        try:
            boxes = _decode(x[keep], keep.numel())
        except ValueError:
            boxes = x
        return boxes.flatten(1)


@pytest.mark.parametrize("model, why", [
    (ForkInABranch(), f"inside a branch of a data-dependent `if` \\(line {ForkInABranch.forward.__code__.co_firstlineno + 2}\\)"),
    (ForkInATry(), "inside a `try` with handlers"),
])
def test_a_rank_changing_if_where_the_code_after_it_is_not_simply_what_follows_is_refused(model, why):
    line = _decode.__code__.co_firstlineno + 2
    with pytest.raises(LoweringError) as info:
        export(model, (torch.randn(3, 8),), dynamic_shapes=ROWS)
    assert re.fullmatch(rf"\S+test_forks.py:{line}: a tensor has rank 3 on one side of a data-dependent `if` and rank "
                        rf"2 on the other: the code after it is lowered for one rank; the code after it cannot be "
                        rf"lowered once per side here: {why}\ngive the tensor one rank on both sides \(reshape it on "
                        r"the side that differs\)", str(info.value)), str(info.value)


def test_lowerings_that_differ_before_the_fork_are_an_internal_error():
    site = ForkSite(1, ("m.py", 3), nodes=1, cond="c", initializers=0)
    x, out = Value("x", torch.float32, (2,)), Value("output", torch.float32, (2,))

    def lowered(op):
        nodes = [helper.make_node(op, ["x", "x"], ["c"]), helper.make_node("Identity", ["x"], ["output"])]
        return Lowered(nodes, [x], [out], {}, {"": 17}, {1: site})

    assert assemble(site, lowered("Mul"), lowered("Mul")).nodes[-1].op_type == "If"
    with pytest.raises(GraphConstructionError, match="the lowerings of the two sides of the data-dependent `if` at "
                                                     "m.py:3 differ before it"):
        assemble(site, lowered("Mul"), lowered("Add"))


def test_the_lowerings_of_one_export_read_and_parse_each_file_once(monkeypatch):
    """Every lowering of a forked export reads the same files: they share what was parsed."""
    from analyzer.frontend import function_source
    from lowering.interp import functions

    read, cut = [], []

    class Counted(function_source.SourceFile):
        def __init__(self, data, path):
            read.append(path)
            super().__init__(data, path)

        def function(self, code):
            cut.append(code.co_name)
            return super().function(code)

    monkeypatch.setattr(functions, "SourceFile", Counted)
    proto = export(RankChangingReshape(), (torch.randn(6, 8),), dynamic_shapes=ROWS)
    assert _ifs(proto.graph) == 1  # forward was lowered three times: undecided, then once per side
    assert read == [__file__]
    assert sorted(cut) == ["_decode", "forward"]
