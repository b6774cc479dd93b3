"""nn.LSTM / nn.GRU / nn.RNN against eager PyTorch on onnxruntime, through ``export`` (the
module called from a forward's source): every combination of 1 or 2 layers, one or two
directions, batch_first, given or zero initial states and bias, exported once with a
symbolic sequence length and batch and run at other lengths; RNN with relu, unbatched
inputs, opsets 17/18/23, parameter names, and the refusals with their messages.
"""

from __future__ import annotations

import itertools

import onnxruntime as ort
import pytest
import torch
import torch.nn as nn

from lowering import export
from lowering.errors import LoweringError
from tests.export.harness import assert_session_matches

torch.set_grad_enabled(False)

IN, HID = 3, 4


def _init(module: nn.Module, seed: int = 0) -> nn.Module:
    gen = torch.Generator().manual_seed(seed)
    for _, p in module.named_parameters():
        p.copy_(torch.randn(p.shape, generator=gen) * 0.6)
    return module.eval()


def _t(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


class Run(nn.Module):
    def __init__(self, rnn: nn.Module):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)


class RunH(Run):
    def forward(self, x, h0):
        return self.rnn(x, h0)


class RunHC(Run):
    def forward(self, x, h0, c0):
        return self.rnn(x, (h0, c0))


def _args(m: nn.Module, seq: int, batch: int, with_state: bool, seed: int = 0) -> tuple:
    x = _t(batch, seq, IN, seed=seed) if m.batch_first else _t(seq, batch, IN, seed=seed)
    if not with_state:
        return (x,)
    states = m.num_layers * (2 if m.bidirectional else 1)
    h0 = _t(states, batch, HID, seed=seed + 1)
    return (x, h0, _t(states, batch, HID, seed=seed + 2)) if isinstance(m, nn.LSTM) else (x, h0)


def _wrap(m: nn.Module, with_state: bool) -> nn.Module:
    if not with_state:
        return Run(m).eval()
    return (RunHC if isinstance(m, nn.LSTM) else RunH)(m).eval()


def _dynamic(m: nn.Module, with_state: bool) -> dict:
    seq_axis, batch_axis = (1, 0) if m.batch_first else (0, 1)
    dyn = {"x": {seq_axis: "seq", batch_axis: "batch"}}
    if with_state:
        dyn["h0"] = {1: "batch"}
        if isinstance(m, nn.LSTM):
            dyn["c0"] = {1: "batch"}
    return dyn


def _check(model: nn.Module, example: tuple, others: list[tuple] = (), *, opset: int = 18, dynamic=None):
    proto = export(model, example, opset=opset, dynamic_shapes=dynamic)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for args in [example, *others]:
        assert_session_matches(session, model, args, rtol=1e-4, atol=1e-5)
    return proto


_GRID = list(itertools.product((nn.LSTM, nn.GRU, nn.RNN), (1, 2), (False, True), (False, True), (False, True), (True, False)))


def _grid_id(case) -> str:
    cls, layers, bidir, batch_first, state, bias = case
    return "-".join([cls.__name__, f"{layers}layer", "bidir" if bidir else "uni", "batchfirst" if batch_first else "seqfirst",
                     "h0" if state else "zeros", "bias" if bias else "nobias"])


@pytest.mark.parametrize("case", _GRID, ids=_grid_id)
def test_grid_dynamic_seq_and_batch(case):
    """Exported once at (seq 5, batch 2) with both symbolic, run there and at (1, 1) and (8, 3)."""
    cls, layers, bidir, batch_first, state, bias = case
    m = _init(cls(IN, HID, num_layers=layers, bidirectional=bidir, batch_first=batch_first, bias=bias), seed=layers)
    model = _wrap(m, state)
    example = _args(m, 5, 2, state)
    others = [_args(m, 1, 1, state, seed=3), _args(m, 8, 3, state, seed=6)]
    _check(model, example, others, dynamic=_dynamic(m, state))


@pytest.mark.parametrize("layers", (1, 2))
@pytest.mark.parametrize("bidir", (False, True))
def test_rnn_relu(layers, bidir):
    m = _init(nn.RNN(IN, HID, num_layers=layers, nonlinearity="relu", bidirectional=bidir))
    _check(Run(m).eval(), _args(m, 6, 2, False), [_args(m, 3, 4, False, seed=2)], dynamic=_dynamic(m, False))


@pytest.mark.parametrize("cls", (nn.LSTM, nn.GRU, nn.RNN))
@pytest.mark.parametrize("state", (False, True), ids=("zeros", "h0"))
def test_unbatched_2d_input(cls, state):
    m = _init(cls(IN, HID, num_layers=2, bidirectional=True, batch_first=True))
    x = _t(5, IN)
    states = (_t(4, HID, seed=1), _t(4, HID, seed=2)) if isinstance(m, nn.LSTM) else (_t(4, HID, seed=1),)
    args = (x, *states) if state else (x,)
    _check(_wrap(m, state), args, [(_t(2, IN, seed=5), *states) if state else (_t(2, IN, seed=5),)],
           dynamic={"x": {0: "seq"}})


@pytest.mark.parametrize("opset", (17, 18, 23))
@pytest.mark.parametrize("cls", (nn.LSTM, nn.GRU, nn.RNN))
def test_opsets(cls, opset):
    m = _init(cls(IN, HID, num_layers=2, bidirectional=True))
    _check(_wrap(m, True), _args(m, 4, 2, True), opset=opset)


class LastStep(nn.Module):
    """Typical use: unpack the tuples in forward and combine the pieces."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.LSTM(IN, HID, num_layers=2, batch_first=True, bidirectional=True, dropout=0.3)
        self.head = nn.Linear(2 * HID, 2)

    def forward(self, x):
        out, (h, c) = self.encoder(x)
        return self.head(out[:, -1]) + h[-1].sum(-1, keepdim=True) - c.mean()


def test_tuples_unpacked_in_forward_and_eval_dropout():
    model = _init(LastStep())
    _check(model, (_t(2, 5, IN),), [(_t(3, 7, IN, seed=1),)], dynamic={"x": {0: "batch", 1: "seq"}})


def test_parameters_keep_their_names():
    proto = export(_init(LastStep()), (_t(2, 5, IN),))
    names = {i.name for i in proto.graph.initializer}
    expected = {f"encoder.{kind}_l{layer}{suffix}" for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
                for layer in (0, 1) for suffix in ("", "_reverse")}
    assert expected <= names
    assert [n.op_type for n in proto.graph.node].count("LSTM") == 2


@pytest.mark.parametrize("name", ("torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"))
def test_registered_at_every_opset(name):
    from lowering.ops import lookup

    assert all(lookup(name, opset) is not None for opset in range(17, 24))


def test_gru_is_linear_before_reset():
    proto = export(_init(Run(nn.GRU(IN, HID))), (_t(3, 1, IN),))
    (node,) = [n for n in proto.graph.node if n.op_type == "GRU"]
    assert {a.name: a.i for a in node.attribute if a.name == "linear_before_reset"} == {"linear_before_reset": 1}


# ---------------------------------------------------------------------- refusals


class Packed(nn.Module):
    """The packed layout itself (`.data`) is refused; pack -> LSTM -> pad lowers
    (tests/export/test_packed_sequences.py)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(IN, HID)

    def forward(self, x, lengths):
        out, (h, c) = self.rnn(nn.utils.rnn.pack_padded_sequence(x, lengths))
        return out.data


REFUSALS = [
    ("lstm_proj_size", lambda: Run(nn.LSTM(IN, HID, proj_size=2)).eval(), (_t(5, 2, IN),), "proj_size"),
    ("lstm_training_dropout", lambda: Run(nn.LSTM(IN, HID, num_layers=2, dropout=0.2)).train(), (_t(5, 2, IN),), "training"),
    ("gru_training_dropout", lambda: Run(nn.GRU(IN, HID, num_layers=2, dropout=0.2)).train(), (_t(5, 2, IN),), "training"),
    ("rnn_4d_input", lambda: Run(nn.RNN(IN, HID)).eval(), (_t(5, 2, 1, IN),), "2-D .* or 3-D"),
    ("lstm_wrong_features", lambda: Run(nn.LSTM(IN, HID)).eval(), (_t(5, 2, IN + 1),), "input_size"),
    ("gru_double_input", lambda: Run(nn.GRU(IN, HID)).eval(), (_t(5, 2, IN).double(),), "float64"),
    ("lstm_float64", lambda: Run(nn.LSTM(IN, HID).double()).eval(), (_t(5, 2, IN).double(),), "float32 only"),
    ("gru_2d_h0_batched", lambda: RunH(nn.GRU(IN, HID)).eval(), (_t(5, 2, IN), _t(2, HID)), "hx should be 3-D"),
    ("packed_sequence_data", lambda: Packed().eval(), (_t(5, 2, IN), torch.tensor([5, 3])), "PackedSequence.data"),
]


@pytest.mark.parametrize(("make", "args", "match"), [pytest.param(*r[1:], id=r[0]) for r in REFUSALS])
def test_refused(make, args, match):
    with pytest.raises(LoweringError, match=match) as info:
        export(make(), args)
    if match == "training":
        assert "eval()" in (info.value.hint or "")
    if match.startswith("PackedSequence"):
        assert "padded" in (info.value.hint or "")


def test_packed_sequence_object_is_refused_by_the_module_lowering():
    from lowering.graph import GraphBuilder
    from lowering.ops import ModuleCall, lookup

    g = GraphBuilder(18)
    packed = nn.utils.rnn.pack_padded_sequence(_t(3, 2, IN), torch.tensor([3, 2]))
    m = nn.GRU(IN, HID).eval()
    with pytest.raises(LoweringError, match="PackedSequence"):
        lookup("torch.nn.GRU")(g, ModuleCall(m, "gru", g), packed)


def test_training_without_dropout_is_lowered():
    """dropout=0 (or one layer: PyTorch drops only between layers): training mode computes the same."""
    m = _init(nn.LSTM(IN, HID, dropout=0.0, num_layers=2)).train()
    _check(Run(m).train(), (_t(4, 2, IN),))
    with pytest.warns(UserWarning, match="dropout"):  # and drops nothing
        m1 = _init(nn.GRU(IN, HID, dropout=0.5)).train()
    _check(Run(m1).train(), (_t(4, 2, IN),))
