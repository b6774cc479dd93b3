"""Python numbers computed from dynamic sizes, as real library code uses them (issue 24):
`math` functions and number methods with Python's result types, comparisons with None,
functions under torch's context-manager decorators, `slice()` of sizes, the element count
of a tensor with a static empty axis, and convolutions with a padding mode. Each model
exports with dynamic axes and matches eager on onnxruntime for other sizes, or is refused
with a message that says why."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

SEQ = {"x": {0: "batch", 1: "n"}}
SIZES = [(torch.randn(2, n, 3, generator=torch.Generator().manual_seed(n)),) for n in (8, 5, 12, 1, 7, 16)]


class PadToMultiple(nn.Module):
    """local_attention's `pad_to_multiple`: `(n / w).is_integer()`, then `math.ceil(m) * w - n`."""

    def forward(self, x):
        n = x.shape[1]
        m = n / 4
        if m.is_integer():
            return x * 2
        remainder = math.ceil(m) * 4 - n
        return F.pad(x, (0, 0, 0, remainder), value=0.5)


class MathOfSizes(nn.Module):
    """Float results (a Python float: float32 when it meets a tensor, as in eager)."""

    def forward(self, x):
        n, d = x.shape[1], x.shape[2]
        scale = 1.0 / math.sqrt(n) + math.log(n + 1) + math.log(n + 1, 3) + math.log2(n + 1) + math.log10(n + 1)
        scale = scale + math.exp(-n / 8) + math.pow(n, 0.25) + math.fabs(d - n) + math.degrees(1 / (n + d))
        return x * scale + math.cos(n) * math.tanh(d / n)


class IntResults(nn.Module):
    """`math.ceil` / `floor` / `trunc` return ints, `math.prod` of sizes an int, `isclose` a bool."""

    def forward(self, x):
        n = x.shape[1]
        ints = torch.tensor([math.ceil(n / 3), math.floor(n / 3), math.trunc(-n / 3), math.prod(x.shape), math.floor(n)])
        close = math.isclose(n / 4, 2.0) or math.isclose(math.sqrt(n), 4.0, rel_tol=1e-6)
        whole = (n / 2).is_integer()
        return ints, torch.tensor([close, whole, math.isfinite(n / 3), math.isnan(n / 3)]), torch.tensor(math.sqrt(n))


class ScaleByRows(nn.Module):
    """esm's axial attention: `self.scaling / math.sqrt(num_rows)`."""

    def __init__(self):
        super().__init__()
        self.scaling = 0.125

    def forward(self, x):
        return x * (self.scaling / math.sqrt(x.size(0) * x.size(1)))


@pytest.mark.parametrize("model", [PadToMultiple(), MathOfSizes(), IntResults(), ScaleByRows()],
                         ids=lambda m: type(m).__name__)
def test_math_and_number_methods_of_sizes_match_eager(model):
    export_and_compare(model, SIZES[0], SIZES, dynamic_shapes=SEQ)


class FloatOfValues(nn.Module):
    """`math` of a number taken from tensor values (`float(t)`), under a data-dependent `if`."""

    def forward(self, x):
        s = float(x.abs().sum())
        if x.sum() > 0:
            return x * math.sqrt(s) + math.floor(s)
        return x - math.log(s + 1.0) + (s * 2).is_integer()


def test_math_of_numbers_from_values_matches_eager():
    inputs = [(torch.tensor([0.5, 1.5, 2.0]),), (torch.tensor([-1.0, -2.25, 0.5]),), (torch.tensor([0.5, 0.5, 1.0]),)]
    export_and_compare(FloatOfValues(), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}})


class IntIsInteger(nn.Module):
    def forward(self, x):
        return x * x.shape[1].is_integer()


class GcdOfSizes(nn.Module):
    def forward(self, x):
        return x * math.gcd(x.shape[1], 4)


class MathOfAWholeTensor(nn.Module):
    def forward(self, x):
        return x * math.sqrt(x.sum(-1))


@pytest.mark.parametrize("model, message", [
    # int.is_integer exists from Python 3.12 only: eager raises AttributeError before it
    pytest.param(IntIsInteger(), "`int` has no method `is_integer`", id="int-is_integer",
                 marks=pytest.mark.skipif(hasattr(int, "is_integer"), reason="Python 3.12 has int.is_integer")),
    (GcdOfSizes(), "`math.gcd` of a number computed in the graph is not supported"),
    (MathOfAWholeTensor(), "`math.sqrt` of a tensor that may hold more than one element"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None)
def test_uncovered_number_math_is_refused_by_name(model, message):
    with pytest.raises(LoweringError) as info:
        export(model, SIZES[0], dynamic_shapes=SEQ)
    assert message in str(info.value)


class CachedLength(nn.Module):
    """A graph number compared with a cache that starts as None: Python answers statically."""

    def __init__(self):
        super().__init__()
        self._len = None

    def forward(self, x):
        n = x.shape[1]
        y = x + 1 if n != self._len else x - 1
        y = y * 2 if n == self._len else y
        y = y + 3 if n is not None and self._len is None else y
        return y * (n != "n") + (x.sum() == None)  # noqa: E711 - what eager answers for a tensor too


def test_graph_numbers_compared_with_none_match_eager():
    export_and_compare(CachedLength(), SIZES[0], SIZES, dynamic_shapes=SEQ)


class OrderedWithNone(nn.Module):
    def __init__(self):
        super().__init__()
        self._len = None

    def forward(self, x):
        return x if x.shape[1] < self._len else -x


def test_ordering_a_graph_number_with_none_is_refused():
    with pytest.raises(LoweringError):
        export(OrderedWithNone(), SIZES[0], dynamic_shapes=SEQ)  # eager raises TypeError


@torch.autocast("cuda", enabled=False)
def _rotate(x, n):
    return torch.cat((x[:, n // 2:], x[:, :n // 2]), dim=1)


class Rotary(nn.Module):
    @torch.autocast("cuda", enabled=False)
    def forward(self, x):
        return _rotate(x, x.shape[1]) * 2

    @torch.no_grad()
    def table(self, n):
        return torch.arange(n).float()


class UsesDecorated(nn.Module):
    def __init__(self):
        super().__init__()
        self.rotary = Rotary()

    @torch.inference_mode()
    def forward(self, x):
        return self.rotary(x) + self.rotary.table(x.shape[1])[None, :, None]


def test_functions_under_context_manager_decorators_match_eager():
    export_and_compare(UsesDecorated(), SIZES[0], SIZES, dynamic_shapes=SEQ)


class AutocastOnCpu(nn.Module):
    @torch.autocast("cpu")
    def forward(self, x):
        return x @ x.transpose(1, 2)


def test_a_decorator_enabling_cpu_autocast_is_refused():
    with pytest.raises(LoweringError, match="on the CPU"):
        export(AutocastOnCpu(), SIZES[0], dynamic_shapes=SEQ)


class Slices(nn.Module):
    """einops' `tensor[(*filler, slice(start, stop))]` with sizes from the graph."""

    def forward(self, x):
        n = x.shape[1]
        head = x[(slice(None), slice(0, n // 2))]
        tail = x[:, slice(n // 2, n, 1)]
        return head.sum(1) - tail.sum(1)


def test_slice_of_graph_numbers_matches_eager():
    export_and_compare(Slices(), SIZES[0], SIZES, dynamic_shapes=SEQ)


class EmptyHeads(nn.Module):
    """performer's `if not empty(lq)` on heads split off statically: none are left, whatever the
    dynamic sizes, so the other side (a call of a module that is None) is never lowered."""

    def __init__(self):
        super().__init__()
        self.local_attn = None

    def forward(self, x):
        q, lq = x[:, :, :3], x[:, :, 3:]
        if lq.numel() != 0:
            return self.local_attn(lq)
        return q * 2


class CallsNoneOnOneSide(nn.Module):
    def __init__(self):
        super().__init__()
        self.local_attn = None

    def forward(self, x):
        if x.sum() > 0:
            return self.local_attn(x)
        return x


def test_a_static_empty_axis_has_no_elements():
    export_and_compare(EmptyHeads(), SIZES[0], SIZES, dynamic_shapes=SEQ)


def test_calling_none_says_why():
    with pytest.raises(LoweringError, match="`NoneType` is not callable"):
        export(CallsNoneOnOneSide(), SIZES[0], dynamic_shapes=SEQ)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_convolutions_with_a_padding_mode_match_eager_on_other_sizes(mode):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, padding_mode=mode), nn.ReLU(),
                          nn.Conv2d(4, 2, 3, stride=2, padding=(2, 1), padding_mode=mode)).eval()
    images = [(torch.randn(b, 3, h, w),) for b, h, w in ((2, 8, 8), (1, 9, 7), (3, 12, 5))]
    export_and_compare(model, images[0], images, dynamic_shapes={"input": {0: "b", 2: "h", 3: "w"}})


class RangeWithAGraphStep(nn.Module):
    """esm's axial attention: `for start in range(0, num_rows, max_rows)` with `max_rows` from a size;
    a negative step (Python's count rounds toward its sign) and a static step other than 1 too."""

    def forward(self, x):
        rows = x.shape[1]
        step = max(1, 12 // x.shape[2])
        acc = x[:, :1].sum(1) * 0
        for start in range(0, rows, step):
            acc = acc + x[:, start:start + step].sum(1) * start
        for i in range(rows, -1, -x.shape[2]):
            acc = acc + i
        for i in range(rows, 0, -2):
            acc = acc - i
        return acc


def test_range_with_a_graph_step_matches_eager():
    sizes = [(torch.randn(2, n, c),) for n, c in ((7, 3), (5, 4), (9, 2), (1, 13), (10, 5))]
    export_and_compare(RangeWithAGraphStep(), sizes[0], sizes, dynamic_shapes={"x": {0: "batch", 1: "n", 2: "c"}})


class RangeWithAFloatStep(nn.Module):
    def forward(self, x):
        acc = x
        for i in range(0, x.shape[1], x.shape[1] / 2):
            acc = acc + i
        return acc


def test_range_with_a_float_step_is_refused():
    with pytest.raises(LoweringError, match="range\\(\\) with a step that is not an integer"):
        export(RangeWithAFloatStep(), SIZES[0], dynamic_shapes=SEQ)


class SumsFromANumber(nn.Module):
    """esm's `attns = 0; for start in range(0, rows, max_rows): attns += weights(x[start:...])`:
    a Python int the first iteration makes a tensor of another dtype and rank, updated in
    place from the second."""

    def forward(self, x):
        attns = 0
        step = max(1, 12 // x.shape[2])
        for start in range(0, x.shape[1], step):
            attns += x[:, start:start + step].sum(1)[:, None, :] * x
        total = 0.0
        for row in x.unbind(1):
            total += row.sum(-1)
        return attns.softmax(-1), total


def test_a_number_that_the_loop_makes_a_tensor_of_another_dtype_and_rank_matches_eager():
    sizes = [(torch.randn(2, n, c),) for n, c in ((7, 3), (5, 4), (9, 2), (1, 13))]
    export_and_compare(SumsFromANumber(), sizes[0], sizes, dynamic_shapes={"x": {0: "b", 1: "n", 2: "c"}})
