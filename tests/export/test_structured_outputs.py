"""What forward returns (issue 24): a dataclass instance (any, not only transformers'
ModelOutput), a `typing.NamedTuple` or `collections.namedtuple`, a dict, and these
nested. The graph's outputs are the leaves in the legacy tracer's order (depth first,
dict insertion order, dataclass field order) with the None dropped as the tracer drops
them, named by their fields and keys. Each exports with a dynamic batch and matches eager
on onnxruntime, output by output, also when a data-dependent `if` chooses the fields."""

import collections
import dataclasses
import io
import typing
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from lowering.outputs import named_leaves

DYNAMIC = {"x": {0: "batch"}}
# Every row sum positive, then negative, then mixed: `x.sum() > 0` takes both sides.
INPUTS = [torch.tensor([[1.0, 2.0, -0.5], [0.5, -0.25, 0.0]]),
          torch.tensor([[-1.0, -2.0, 0.3], [-0.5, 0.25, 1.5], [-3.0, 1.0, -2.0]]),
          torch.tensor([[0.1, -0.3, 0.4]])]


@dataclasses.dataclass
class Record:
    logits: torch.Tensor
    hidden: typing.Optional[torch.Tensor] = None
    scores: torch.Tensor = None


@dataclasses.dataclass(frozen=True)
class FrozenPair:
    first: torch.Tensor
    second: torch.Tensor


@dataclasses.dataclass
class WithPostInit:
    value: torch.Tensor
    doubled: torch.Tensor = dataclasses.field(init=False)

    def __post_init__(self):
        self.doubled = self.value * 2


class Detections(typing.NamedTuple):
    boxes: torch.Tensor
    labels: typing.Optional[torch.Tensor] = None
    scores: torch.Tensor = None


Pair = collections.namedtuple("Pair", "left right")


def eager_leaves(result) -> list[tuple[str, torch.Tensor]]:
    """The eager result's tensors with their paths, walked here independently of
    `lowering.outputs`: the test's own statement of the tracer's order."""
    if result is None:
        return []
    if isinstance(result, (torch.Tensor, bool, int, float)):
        return [("", torch.as_tensor(result))]  # a Python number is a constant output
    if isinstance(result, dict):
        items = [(str(k), v) for k, v in result.items()]
    elif hasattr(result, "_asdict"):
        items = list(result._asdict().items())
    elif dataclasses.is_dataclass(result):
        items = [(f.name, getattr(result, f.name)) for f in dataclasses.fields(result)]
    else:
        items = [(str(i), v) for i, v in enumerate(result)]
    return [(f"{k}.{p}" if p else k, t) for k, v in items for p, t in eager_leaves(v)]


def positional(path: str, i: int, count: int) -> str:
    """A path of positions only (a tensor, a plain tuple's item) keeps the positional name."""
    if all(part.isdigit() for part in path.split(".") if part):
        return f"output_{i}" if count > 1 else "output"
    return path


def check(model: nn.Module, names: list[str], inputs=INPUTS) -> onnx.ModelProto:
    """Export with a dynamic batch; the outputs are `names`, and on every input each
    matches the eager tensor at that path."""
    proto = export(model, (inputs[0],), dynamic_shapes=DYNAMIC)
    assert [o.name for o in proto.graph.output] == names
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in inputs:
        got = session.run(None, {"x": x.numpy()})
        with torch.no_grad():
            want = eager_leaves(model(x.clone()))
        assert [positional(p, i, len(want)) for i, (p, _) in enumerate(want)] == names
        for (path, w), o in zip(want, got):
            assert o.dtype == w.numpy().dtype, path
            np.testing.assert_allclose(o, w.numpy(), rtol=1e-5, atol=1e-6, err_msg=path)
    return proto


class ReturnsDataclass(nn.Module):
    def forward(self, x):
        return Record(logits=x * 2, scores=x.softmax(-1))  # hidden stays None


class ReturnsFrozenAndPostInit(nn.Module):
    def forward(self, x):
        return FrozenPair(x + 1, x - 1), WithPostInit(x.relu())


class ReturnsNamedTuple(nn.Module):
    def forward(self, x):
        return Detections(x.abs(), None, x.sigmoid())


class ReturnsCollectionsNamedTuple(nn.Module):
    def forward(self, x):
        pair = Pair(right=x * 3, left=x.cumsum(-1))
        return pair._replace(right=pair.right + pair.left)


class ReturnsDict(nn.Module):
    def forward(self, x):
        return {"last_hidden_state": x.tanh(), "pooler_output": None, "attentions": x.mean(-1)}


class ReturnsNested(nn.Module):
    """A tuple of dataclasses, a dict of tuples, a namedtuple inside a dict."""

    def forward(self, x):
        return ((Record(x * 2), Record(x + 1, None, x.exp())),
                {"past": (x.sum(-1), None, x.max(-1).values), "pair": Pair(x, x.t().sum(0))})


class FieldsByDataIf(nn.Module):
    """A data-dependent `if` returns one dataclass or another, with other field values."""

    def forward(self, x):
        if x.sum() > 0:
            return Record(x * 2, None, x.softmax(-1))
        return Record(x - 1, None, x.softmax(0))


class NamedTupleByDataTernary(nn.Module):
    def forward(self, x):
        out = Detections(x + 1, None, x.sum(-1)) if x.sum() > 0 else Detections(x - 1, None, x.mean(-1))
        return out.boxes * 2, out  # the merged value is still a Detections


class DataclassFieldReadAfterDataIf(nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            rec = Record(x.relu(), x, x.sum(-1))
        else:
            rec = Record(-x, x * 0.5, x.amax(-1))
        return {"score": rec.scores + 1, "record": rec}


class DictByDataIf(nn.Module):
    def forward(self, x):
        out = {"a": x + 1, "b": None}
        if x.sum() > 0:
            out = {"a": x * 3, "b": None}
        return out


@pytest.mark.parametrize("model, names", [
    (ReturnsDataclass(), ["logits", "scores"]),
    (ReturnsFrozenAndPostInit(), ["0.first", "0.second", "1.value", "1.doubled"]),
    (ReturnsNamedTuple(), ["boxes", "scores"]),
    (ReturnsCollectionsNamedTuple(), ["left", "right"]),
    (ReturnsDict(), ["last_hidden_state", "attentions"]),
    (ReturnsNested(), ["0.0.logits", "0.1.logits", "0.1.scores", "1.past.0", "1.past.2", "1.pair.left", "1.pair.right"]),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_structured_outputs_match_eager(model, names):
    check(model, names)


@pytest.mark.parametrize("model, names", [
    (FieldsByDataIf(), ["logits", "scores"]),
    (NamedTupleByDataTernary(), ["output_0", "1.boxes", "1.scores"]),
    (DataclassFieldReadAfterDataIf(), ["score", "record.logits", "record.hidden", "record.scores"]),
    (DictByDataIf(), ["a"]),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_fields_chosen_by_a_data_dependent_if(model, names):
    proto = check(model, names)
    assert any(n.op_type == "If" for n in proto.graph.node)


class ReturnsInputKey(nn.Module):
    def forward(self, x):
        return {"x": x + 1, "output": x * 2}


def test_an_output_named_like_an_input_gets_a_suffix():
    proto = check_names_only(ReturnsInputKey())
    names = [o.name for o in proto.graph.output]
    assert names[1] == "output" and names[0].startswith("x_") and "x" in [i.name for i in proto.graph.input]


def check_names_only(model):
    proto = export(model, (INPUTS[0],), dynamic_shapes=DYNAMIC)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": INPUTS[1].numpy()})
    want = [t for _, t in eager_leaves(model(INPUTS[1]))]
    for w, o in zip(want, got, strict=True):
        np.testing.assert_allclose(o, w.numpy(), rtol=1e-5, atol=1e-6)
    return proto


@pytest.mark.parametrize("model", [ReturnsNamedTuple(), ReturnsDict(), ReturnsNested()],
                         ids=lambda m: type(m).__name__)
def test_same_outputs_as_the_legacy_tracer(model):
    """As many outputs as `torch.onnx.export(dynamo=False)` gives, holding the same
    values in the same order (the tracer names them by number). The tracer refuses a
    dataclass that is not a dict, so ReturnsNested is compared without its records."""
    if isinstance(model, ReturnsNested):
        model = NestedWithoutRecords()
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (INPUTS[0],), buffer, dynamo=False, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}})
    legacy = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    ours = ort.InferenceSession(export(model, (INPUTS[0],), dynamic_shapes=DYNAMIC).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    feeds = {"x": INPUTS[2].numpy()}
    for a, b in zip(legacy.run(None, feeds), ours.run(None, feeds), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


class NestedWithoutRecords(nn.Module):
    def forward(self, x):
        return ((x * 2, (x + 1, None, x.exp())), {"past": (x.sum(-1), None, x.max(-1).values), "pair": Pair(x, x * 2)})


def test_named_leaves_paths():
    leaves = named_leaves({"a": (1, None, Record(2)), 3: Pair(None, 4)})
    assert [(p, v) for p, v in leaves] == [(("a", 0), 1), (("a", 2, "logits"), 2), (("3", "right"), 4)]


class ReturnsString(nn.Module):
    def forward(self, x):
        return {"logits": x, "label": "cat"}


def test_a_string_output_is_refused_with_its_path():
    with pytest.raises(LoweringError, match=r"forward returns a str \(at `label`\), which is not a tensor"):
        export(ReturnsString(), (INPUTS[0],))


# --- which object a value chosen by data is -------------------------------------------
# A data-dependent merge hands on a new value for whichever side's object eager keeps:
# identity tests that the data decides, and changes to a chosen dataclass, are refused.


class ReplaceAfterDataIf(nn.Module):
    def forward(self, x):
        rec = Record(x + 1) if x.sum() > 0 else Record(x - 1)
        return dataclasses.replace(rec, hidden=rec.logits * 2)


class RecordCarriedByLoop(nn.Module):
    def forward(self, x):
        rec = FrozenPair(x, x.abs())
        while rec.first.sum() < 10:
            rec = FrozenPair(rec.first + 1, rec.second * 2)
        return rec


class RecordKeptOnOneSide(nn.Module):
    def forward(self, x):
        before = Record(x, x * 2)
        rec = before
        if x.sum() > 0:
            rec = Record(x + 1, x)
        return rec.logits + before.hidden, rec is not None


@pytest.mark.parametrize("model, names", [
    (ReplaceAfterDataIf(), ["logits", "hidden"]),
    (RecordCarriedByLoop(), ["first", "second"]),
    (RecordKeptOnOneSide(), ["output_0", "output_1"]),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_records_through_data_dependent_regions(model, names):
    check(model, names)


class TensorIdentityByData(nn.Module):
    def forward(self, x):
        y = x
        if x.sum() > 0:
            y = x + 1
        return y, y is x  # eager: True when the `if` was not taken


class TupleIdentityByTernary(nn.Module):
    def forward(self, x):
        pair = (x, x * 2)
        chosen = pair if x.sum() > 0 else (x - 1, x)
        return chosen[0], chosen is pair


class LoopCarriedIdentity(nn.Module):
    def forward(self, x):
        y = x
        while y.sum() < 5:
            y = y + 1
        return y, y is x  # eager: True when the loop ran no iteration


class RecordChangedAfterDataIf(nn.Module):
    def forward(self, x):
        before = Record(x)
        rec = before
        if x.sum() > 0:
            rec = Record(x + 1)
        rec.hidden = x * 2  # eager changes `before` too when the `if` was not taken
        return before.hidden


@pytest.mark.parametrize("model, message", [
    (TensorIdentityByData(), r"whether one value `is` the other depends on the data: the data-dependent `if` at line"),
    (TupleIdentityByTernary(), r"`is` the other depends on the data: the data-dependent ternary at line"),
    (LoopCarriedIdentity(), r"`is` the other depends on the data: the data-dependent loop at line"),
    (RecordChangedAfterDataIf(), r"`rec.hidden` changes a Record that the data-dependent `if` at line \d+ chose"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_identity_the_data_decides_is_refused(model, message):
    with pytest.raises(LoweringError, match=message):
        export(model, (INPUTS[0],), dynamic_shapes=DYNAMIC)
