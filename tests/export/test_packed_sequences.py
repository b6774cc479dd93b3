"""pack_padded_sequence -> nn.LSTM / nn.GRU / nn.RNN -> pad_packed_sequence, with the lengths
a tensor input, exported with a dynamic batch and time axis and compared with eager on
onnxruntime at other sizes and lengths: the output cut to max(lengths) with zeros (or
padding_value) past each length, and h_n / c_n each sequence's state at its last valid
step, for one or two layers, one or two directions, batch_first either way, unsorted
lengths, given initial states and total_length.  The packed layout itself is refused."""

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

torch.set_grad_enabled(False)
IN, HID = 3, 4


def _init(rnn: nn.Module, seed: int = 0) -> nn.Module:
    gen = torch.Generator().manual_seed(seed)
    for p in rnn.parameters():
        p.copy_(torch.randn(p.shape, generator=gen) * 0.6)
    return rnn.eval()


class PackedRun(nn.Module):
    def __init__(self, rnn: nn.Module, batch_first: bool, enforce_sorted: bool = False, **pad):
        super().__init__()
        self.rnn = rnn
        self.batch_first = batch_first
        self.enforce_sorted = enforce_sorted
        self.pad = pad

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=self.batch_first,
                                      enforce_sorted=self.enforce_sorted)
        out, state = self.rnn(packed)
        y, out_lengths = pad_packed_sequence(out, batch_first=self.batch_first, **self.pad)
        return y, state, out_lengths


class PackedWithState(PackedRun):
    def forward(self, x, lengths, h0, c0):
        packed = pack_padded_sequence(x, lengths, batch_first=self.batch_first, enforce_sorted=False)
        out, (h, c) = self.rnn(packed, (h0, c0))
        return pad_packed_sequence(out, batch_first=self.batch_first)[0], h, c


def _x(batch, steps, batch_first, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn((batch, steps, IN) if batch_first else (steps, batch, IN), generator=gen)


def _inputs(batch_first):
    # (batch, steps, lengths): unsorted, the longest shorter than the time axis, a batch of one
    runs = [(4, 6, [6, 2, 5, 1]), (3, 4, [2, 3, 3]), (2, 7, [1, 4]), (1, 3, [3])]
    return [(_x(b, t, batch_first, seed=b), torch.tensor(n)) for b, t, n in runs]


RNNS = {
    "lstm": lambda: nn.LSTM(IN, HID),
    "lstm_2layer_bidirectional": lambda: nn.LSTM(IN, HID, num_layers=2, bidirectional=True),
    "gru": lambda: nn.GRU(IN, HID),
    "gru_2layer_bidirectional": lambda: nn.GRU(IN, HID, num_layers=2, bidirectional=True),
    "rnn_relu_bidirectional": lambda: nn.RNN(IN, HID, nonlinearity="relu", bidirectional=True),
}


@pytest.mark.parametrize("batch_first", [True, False], ids=["batch_first", "seq_first"])
@pytest.mark.parametrize("kind", list(RNNS))
def test_pack_rnn_pad_with_dynamic_batch_and_time(kind, batch_first):
    model = PackedRun(_init(RNNS[kind]()), batch_first)
    inputs = _inputs(batch_first)
    b, t = (0, 1) if batch_first else (1, 0)
    export_and_compare(model, inputs[0], inputs, dynamic_shapes={"x": {b: "batch", t: "time"},
                                                                 "lengths": {0: "batch"}})


def test_module_batch_first_does_not_change_the_packed_layout():
    """The module's batch_first applies to padded tensors only; the packing call sets the layout."""
    model = PackedRun(_init(nn.GRU(IN, HID, batch_first=True)), batch_first=False)
    inputs = _inputs(False)
    export_and_compare(model, inputs[0], inputs, dynamic_shapes={"x": {1: "batch", 0: "time"},
                                                                 "lengths": {0: "batch"}})


def test_sorted_lengths_with_enforce_sorted():
    model = PackedRun(_init(nn.LSTM(IN, HID, bidirectional=True)), batch_first=True, enforce_sorted=True)
    inputs = [(_x(3, 5, True, seed=1), torch.tensor([5, 3, 1])), (_x(3, 5, True, seed=2), torch.tensor([4, 4, 2]))]
    export_and_compare(model, inputs[0], inputs)


def test_padding_value_and_total_length():
    inputs = _inputs(True)
    for pad in ({"padding_value": -7.5}, {"total_length": 9}, {"total_length": 9, "padding_value": 2.0}):
        model = PackedRun(_init(nn.GRU(IN, HID, bidirectional=True)), True, **pad)
        export_and_compare(model, inputs[0], inputs, dynamic_shapes={"x": {0: "batch", 1: "time"},
                                                                     "lengths": {0: "batch"}})


def test_given_initial_states_stay_in_batch_order():
    rnn = _init(nn.LSTM(IN, HID, num_layers=2, bidirectional=True))
    gen = torch.Generator().manual_seed(5)

    def args(batch, steps, lengths):
        return (_x(batch, steps, True, seed=batch), torch.tensor(lengths), torch.randn(4, batch, HID, generator=gen),
                torch.randn(4, batch, HID, generator=gen))

    inputs = [args(3, 5, [2, 5, 4]), args(2, 3, [3, 1])]
    export_and_compare(PackedWithState(rnn, True), inputs[0], inputs,
                       dynamic_shapes={"x": {0: "batch", 1: "time"}, "lengths": {0: "batch"},
                                       "h0": {1: "batch"}, "c0": {1: "batch"}})


class PackPadOnly(nn.Module):
    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(packed, batch_first=True, padding_value=1.0)


class StaticLengths(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = _init(nn.GRU(IN, HID))

    def forward(self, x):
        out, h = self.rnn(pack_padded_sequence(x, [4, 2, 3], enforce_sorted=False))
        return pad_packed_sequence(out)[0], h


def test_pack_then_pad_without_a_module():
    x = torch.randn(3, 5, 2, 2)
    inputs = [(x, torch.tensor([2, 5, 3])), (x, torch.tensor([1, 1, 4]))]
    export_and_compare(PackPadOnly(), inputs[0], inputs)


def test_lengths_as_a_python_list():
    export_and_compare(StaticLengths(), (_x(3, 4, False),))


class PackedData(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = _init(nn.LSTM(IN, HID))

    def forward(self, x, lengths):
        out, _ = self.rnn(pack_padded_sequence(x, lengths, enforce_sorted=False))
        return out.batch_sizes


class PackedList(nn.Module):
    def forward(self, x, lengths):
        return pad_packed_sequence(nn.utils.rnn.pack_sequence([x[0], x[1, :2]]))[0]


class PadATensor(nn.Module):
    def forward(self, x, lengths):
        return pad_packed_sequence(x)[0]


@pytest.mark.parametrize("model, message", [
    (PackedData(), "PackedSequence.batch_sizes is not supported"),
    (PackedList(), "pack_sequence"),
    (PadATensor(), "expected a PackedSequence made in forward"),
])
def test_refusals(model, message):
    with pytest.raises(LoweringError, match=message):
        export(model, (_x(2, 3, False), torch.tensor([3, 2])))
