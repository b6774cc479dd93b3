"""Recurrent layers: the cells nn.GRUCell, nn.LSTMCell, nn.RNNCell (one time step each)
and the sequence modules nn.LSTM, nn.GRU, nn.RNN.

The cells' gate equations are PyTorch's (docs of each class), written with MatMul/Add and
the activations, so a loop over time in the user's forward lowers to an ONNX Loop whose
body holds one cell. Unbatched inputs (1-d) are handled as a batch of one.

The sequence modules become ONNX's own LSTM/GRU/RNN ops, one node per layer with both
directions in it, so the sequence length and batch stay dynamic; see the section below
for the weight layout.  Unbatched (2-d) inputs are a batch of one.

A ``PackedSequence`` (``pack_padded_sequence(x, lengths)`` -> the module ->
``pad_packed_sequence``) is held as :class:`PackedSequenceValue`: the padded tensor and
the lengths, never the packed layout.  The modules pass the lengths to ONNX's
``sequence_lens``, which runs each sequence over its own length (the reverse direction
starting at its last valid step), leaves the steps past it out and gives as final state
each sequence's state at its last valid step -- PyTorch's packed semantics, in the
original batch order (PyTorch sorts and unsorts internally; the result is the same).
``pad_packed_sequence`` cuts the time axis to ``max(lengths)`` (or ``total_length``) and
sets the steps past each length to ``padding_value``.  What eager raises on -- lengths
unsorted with ``enforce_sorted=True``, a length of 0 or past the time axis,
``total_length`` below the longest length -- is not checked in the graph.
"""

from __future__ import annotations

import dataclasses

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops.registry import ModuleCall, register


def _affine(g: GraphBuilder, x: Value, weight: Value, bias: Value | None) -> Value:
    y = g.op("MatMul", x, g.op("Transpose", weight, perm=[1, 0]))
    return g.op("Add", y, bias) if bias is not None else y


def _prepare(g: GraphBuilder, mod: ModuleCall, input, hx, n_states: int):
    if not isinstance(input, Value) or input.rank not in (1, 2):
        raise g.error(f"{type(mod.module).__name__} expects a 1-d or 2-d tensor input")
    unbatched = input.rank == 1
    x = g.unsqueeze(input, [0]) if unbatched else input
    hidden = mod.module.hidden_size
    if hx is None:
        batch = g.size(x, 0)
        zeros = g.op("ConstantOfShape", g.shape_tensor([batch, hidden]),
                     value=_zero(input.dtype), out_dtype=input.dtype, out_shape=(None, hidden))
        states = [zeros] * n_states
    else:
        states = list(hx) if isinstance(hx, (tuple, list)) else [hx]
        states = [g.unsqueeze(h, [0]) if unbatched else h for h in states]
    return x, states, unbatched


def _zero(dtype: torch.dtype):
    import numpy as np
    import onnx.numpy_helper

    return onnx.numpy_helper.from_array(np.zeros((1,), dtype=torch.empty((), dtype=dtype).numpy().dtype))


def _finish(g: GraphBuilder, values, unbatched: bool):
    return [g.squeeze(v, [0]) if unbatched else v for v in values]


@register("torch.nn.GRUCell")
def gru_cell(g, mod: ModuleCall, input, hx=None):
    """GRUCell(input (N, H_in) or (H_in), hx=None) -> h' :
    r = σ(W_ir x + b_ir + W_hr h + b_hr); z = σ(W_iz x + b_iz + W_hz h + b_hz);
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)); h' = (1 - z) ⊙ n + z ⊙ h."""
    x, (h,), unbatched = _prepare(g, mod, input, hx, 1)
    gi = _affine(g, x, mod.param("weight_ih"), mod.param("bias_ih"))
    gh = _affine(g, h, mod.param("weight_hh"), mod.param("bias_hh"))
    i_r, i_z, i_n = g.op("Split", gi, axis=1, num_outputs=3, outputs=3) if g.opset >= 18 else g.op("Split", gi, axis=1, outputs=3)
    h_r, h_z, h_n = g.op("Split", gh, axis=1, num_outputs=3, outputs=3) if g.opset >= 18 else g.op("Split", gh, axis=1, outputs=3)
    r = g.op("Sigmoid", g.op("Add", i_r, h_r))
    z = g.op("Sigmoid", g.op("Add", i_z, h_z))
    n = g.op("Tanh", g.op("Add", i_n, g.op("Mul", r, h_n)))
    one = g.const(1.0, dtype=input.dtype)
    new = g.op("Add", g.op("Mul", g.op("Sub", one, z), n), g.op("Mul", z, h), out_shape=_state_shape(x, mod))
    return _finish(g, [new], unbatched)[0]


@register("torch.nn.LSTMCell")
def lstm_cell(g, mod: ModuleCall, input, hx=None):
    """LSTMCell(input, (h, c)=None) -> (h', c'): gates i, f, g, o from W_ih x + b_ih + W_hh h + b_hh;
    c' = σ(f) ⊙ c + σ(i) ⊙ tanh(g); h' = σ(o) ⊙ tanh(c')."""
    x, (h, c), unbatched = _prepare(g, mod, input, hx, 2)
    gates = g.op("Add", _affine(g, x, mod.param("weight_ih"), mod.param("bias_ih")),
                 _affine(g, h, mod.param("weight_hh"), mod.param("bias_hh")))
    i, f, cell, o = g.op("Split", gates, axis=1, num_outputs=4, outputs=4) if g.opset >= 18 else g.op("Split", gates, axis=1, outputs=4)
    c_new = g.op("Add", g.op("Mul", g.op("Sigmoid", f), c), g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", cell)),
                 out_shape=_state_shape(x, mod))
    h_new = g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", c_new), out_shape=_state_shape(x, mod))
    return tuple(_finish(g, [h_new, c_new], unbatched))


@register("torch.nn.RNNCell")
def rnn_cell(g, mod: ModuleCall, input, hx=None):
    """RNNCell(input, hx=None) -> h' = act(W_ih x + b_ih + W_hh h + b_hh), act tanh or relu."""
    x, (h,), unbatched = _prepare(g, mod, input, hx, 1)
    pre = g.op("Add", _affine(g, x, mod.param("weight_ih"), mod.param("bias_ih")),
               _affine(g, h, mod.param("weight_hh"), mod.param("bias_hh")))
    act = {"tanh": "Tanh", "relu": "Relu"}[mod.module.nonlinearity]
    return _finish(g, [g.op(act, pre, out_shape=_state_shape(x, mod))], unbatched)[0]


def _state_shape(x: Value, mod: ModuleCall) -> tuple:
    """(batch, hidden): Split's outputs lose the static shape in ONNX's inference."""
    return (x.shape[0] if x.shape else None, mod.module.hidden_size)


# ---------------------------------------------------------------------------- nn.LSTM / nn.GRU / nn.RNN
#
# One ONNX LSTM/GRU/RNN node per layer, both directions in one node.  The parameters stay
# initializers under their own names and layout (``lstm.weight_ih_l0``, (G*H, H_in)); the
# node's W/R/B are built from them by a Gather of rows (PyTorch's gate order to ONNX's)
# and Unsqueeze/Concat over directions, which onnxruntime folds once at load time.
# ONNX's ``layout=1`` (batch first) has no onnxruntime kernel, so batch_first is two
# Transposes.

# ONNX row blocks in terms of PyTorch's: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h.
_GATE_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN": (0,)}


def _gates_onnx_order(g: GraphBuilder, w: Value, op_type: str, hidden: int) -> Value:
    order = _GATE_ORDER[op_type]
    if order == tuple(range(len(order))):
        return w
    rows = torch.cat([torch.arange(k * hidden, (k + 1) * hidden) for k in order])
    return g.op("Gather", w, g.const(rows), axis=0)


def _stack_directions(g: GraphBuilder, per_direction: list[Value]) -> Value:
    stacked = [g.unsqueeze(v, [0]) for v in per_direction]
    return stacked[0] if len(stacked) == 1 else g.op("Concat", *stacked, axis=0)


def _layer_weights(g: GraphBuilder, mod: ModuleCall, op_type: str, layer: int):
    """(W, R, B or None) of one layer as the ONNX node takes them: [D, G*H, *], B [D, 2*G*H]."""
    m = mod.module
    suffixes = ["", "_reverse"][: 2 if m.bidirectional else 1]
    H = m.hidden_size

    def param(kind: str, s: str) -> Value:
        return _gates_onnx_order(g, mod.param(f"{kind}_l{layer}{s}"), op_type, H)

    W = _stack_directions(g, [param("weight_ih", s) for s in suffixes])
    R = _stack_directions(g, [param("weight_hh", s) for s in suffixes])
    if not m.bias:
        return W, R, None
    B = _stack_directions(g, [g.op("Concat", param("bias_ih", s), param("bias_hh", s), axis=0) for s in suffixes])
    return W, R, B


def _recurrent(g: GraphBuilder, mod: ModuleCall, op_type: str, input, hx):
    m = mod.module
    cls = type(m).__name__
    packed = input if isinstance(input, PackedSequenceValue) else None
    if packed is not None:
        input = packed.padded
    elif not isinstance(input, Value):
        if isinstance(input, torch.nn.utils.rnn.PackedSequence):
            raise g.error(f"{cls} of a PackedSequence made outside forward is not supported",
                          hint="build it in forward with torch.nn.utils.rnn.pack_padded_sequence, or " + _PADDED_HINT)
        raise g.error(f"{cls}: input must be a tensor, got {type(input).__name__}")
    if getattr(m, "proj_size", 0) > 0:
        raise g.error(f"{cls} with proj_size={m.proj_size} is not supported: the ONNX LSTM op has no output projection",
                      hint="use proj_size=0 and apply a bias-free nn.Linear to each layer's output in a loop of "
                           "one-layer LSTMs")
    if m.training and m.dropout > 0 and m.num_layers > 1:
        raise g.error(f"{cls} at {mod.path or '<root>'} is in training mode: dropout={m.dropout} between layers "
                      "draws a random mask", hint="call model.eval() before exporting")
    if input.rank not in (2, 3):
        raise g.error(f"{cls}: expected a 2-D (unbatched) or 3-D (batched) input, got rank {input.rank} (torch raises)")
    weight_dtype = m.weight_ih_l0.dtype
    if not is_float(input.dtype) or input.dtype != weight_dtype:
        raise g.error(f"{cls}: input is {input.dtype} but the parameters are {weight_dtype} (torch raises)",
                      hint=f"cast the input with .to({weight_dtype})")
    if weight_dtype != torch.float32:
        # ONNX defines the ops for float16/float64 too, but onnxruntime runs them in float32 only.
        raise g.error(f"{cls} in {weight_dtype} is not supported: onnxruntime's {op_type} kernel is float32 only",
                      hint="convert the module and its inputs with .float() before exporting")
    if isinstance(input.shape[-1], int) and input.shape[-1] != m.input_size:
        raise g.error(f"{cls}: input.size(-1) must be equal to input_size. Expected {m.input_size}, "
                      f"got {input.shape[-1]} (torch raises)")
    D = 2 if m.bidirectional else 1
    H, L = m.hidden_size, m.num_layers
    unbatched = input.rank == 2
    if packed is not None and unbatched:
        raise g.error(f"{cls}: a PackedSequence of a 2-D tensor (no batch axis) is not supported",
                      hint="pack a (seq, batch, feature) tensor")
    # Work sequence first, (S, N, H_in): ONNX's layout 0 (a PackedSequenceValue already is).
    if packed is not None:
        x = input
    elif unbatched:
        x = g.unsqueeze(input, [1])
    elif m.batch_first:
        x = g.op("Transpose", input, perm=[1, 0, 2])
    else:
        x = input

    n_states = 2 if op_type == "LSTM" else 1
    states: list[Value | None] = [None] * n_states  # None: ONNX's zeros
    if hx is not None:
        given = list(hx) if isinstance(hx, (tuple, list)) else [hx]
        if len(given) != n_states or not all(isinstance(s, Value) for s in given):
            want = "a tuple (h_0, c_0) of tensors" if n_states == 2 else "a tensor h_0"
            raise g.error(f"{cls}: hx must be {want}")
        for s in given:
            if s.rank != (2 if unbatched else 3):
                raise g.error(f"{cls}: for {'unbatched 2-D' if unbatched else 'batched 3-D'} input, hx should be "
                              f"{'2-D' if unbatched else '3-D'} but got a {s.rank}-D tensor (torch raises)")
            if s.dtype != input.dtype:
                raise g.error(f"{cls}: input and hidden state must have the same dtype, got {input.dtype} and "
                              f"{s.dtype} (torch raises)")
        states = [g.unsqueeze(s, [1]) if unbatched else s for s in given]

    attrs: dict = {"hidden_size": H, "direction": "bidirectional" if D == 2 else "forward"}
    if op_type == "GRU":
        attrs["linear_before_reset"] = 1  # PyTorch applies r after W_hn h + b_hn
    if op_type == "RNN":
        attrs["activations"] = [{"tanh": "Tanh", "relu": "Relu"}[m.nonlinearity]] * D

    finals: list[list[Value]] = [[] for _ in range(n_states)]
    sequence_lens = None if packed is None else g.cast(packed.lengths, torch.int32)
    for layer in range(L):
        W, R, B = _layer_weights(g, mod, op_type, layer)
        initial = [None if s is None else g.op("Slice", s, g.const([layer * D], torch.int64),
                                                 g.const([(layer + 1) * D], torch.int64), g.const([0], torch.int64))
                   for s in states]
        outs = g.op(op_type, x, W, R, B, sequence_lens, *initial, outputs=1 + n_states, **attrs)
        y = outs[0]  # (S, D, N, H)
        if D == 1:
            x = g.squeeze(y, [1])
        else:
            x = g.op("Reshape", g.op("Transpose", y, perm=[0, 2, 1, 3]), g.const([0, 0, D * H], torch.int64))
        for k in range(n_states):
            finals[k].append(outs[1 + k])  # (D, N, H)

    output = x
    if packed is not None:
        output = PackedSequenceValue(output, packed.lengths, g)
    elif unbatched:
        output = g.squeeze(output, [1])
    elif m.batch_first:
        output = g.op("Transpose", output, perm=[1, 0, 2])
    last = [f[0] if len(f) == 1 else g.op("Concat", *f, axis=0) for f in finals]
    if unbatched:
        last = [g.squeeze(s, [1]) for s in last]
    return output, (tuple(last) if n_states == 2 else last[0])


_PADDED_HINT = ("pass the padded (seq, batch, feature) tensor instead: the padded steps then run too, so take "
                "each sequence's state from the output at its last step (index lengths - 1) rather than from h_n")


@dataclasses.dataclass(frozen=True)
class PackedSequenceValue:
    """A ``PackedSequence`` as untrace holds it: ``padded`` (seq, batch, *) sequence
    first, whatever its steps past each length hold, and ``lengths`` (batch,) int64 in
    the original batch order.  The packed layout itself (``.data``, ``.batch_sizes``,
    the sort permutations) is refused by name."""

    padded: Value
    lengths: Value
    graph: GraphBuilder = dataclasses.field(repr=False, compare=False)  # for the location of a refusal

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "graph":
            raise AttributeError(name)
        raise self.graph.error(
            f"PackedSequence.{name} is not supported: untrace holds a PackedSequence as the padded tensor and the "
            "lengths, not in its packed layout",
            hint="unpack it with torch.nn.utils.rnn.pad_packed_sequence and work on the padded tensor",
            construct="PackedSequence")


@register("torch.nn.utils.rnn.pack_padded_sequence")
def pack_padded_sequence(g, input, lengths, batch_first=False, enforce_sorted=True):
    """pack_padded_sequence(Tensor input, Tensor|list[int] lengths, bool batch_first=False, bool enforce_sorted=True)
    -> PackedSequence  (held padded, with the lengths: see the module docstring)"""
    x = input
    if not isinstance(x, Value):
        raise g.error(f"pack_padded_sequence: input must be a tensor, got {type(x).__name__}")
    if x.rank is None or x.rank < 2:
        raise g.error(f"pack_padded_sequence: input must have a batch and a time axis, got rank {x.rank}")
    if not isinstance(batch_first, bool) or not isinstance(enforce_sorted, bool):
        raise g.error("pack_padded_sequence: batch_first and enforce_sorted must be Python bools known at export time")
    if isinstance(lengths, (list, tuple)):
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in lengths):
            raise g.error("pack_padded_sequence: lengths must be a 1-d tensor or a list of Python ints",
                          hint="pass the lengths as one int64 tensor")
        lengths = g.const(list(lengths), torch.int64)
    if not isinstance(lengths, Value) or lengths.rank != 1 or is_bool(lengths.dtype) or lengths.dtype.is_complex:
        raise g.error("pack_padded_sequence: lengths must be a 1-d tensor or a list of ints (torch raises)")
    lengths = g.cast(lengths, torch.int64)  # torch.as_tensor(lengths, dtype=torch.int64)
    batch = x.shape[0 if batch_first else 1]
    if isinstance(batch, int) and isinstance(lengths.shape[0], int) and batch != lengths.shape[0]:
        raise g.error(f"pack_padded_sequence: expected {batch} lengths, one per batch element, got "
                      f"{lengths.shape[0]} (torch raises)")
    if batch_first:
        x = g.op("Transpose", x, perm=[1, 0, *range(2, x.rank)])
    return PackedSequenceValue(x, lengths, g)


@register("torch.nn.utils.rnn.pad_packed_sequence")
def pad_packed_sequence(g, sequence, batch_first=False, padding_value=0.0, total_length=None):
    """pad_packed_sequence(PackedSequence sequence, bool batch_first=False, float padding_value=0.0,
    int? total_length=None) -> (Tensor padded, Tensor lengths): max(lengths) steps (total_length if given),
    the steps past each length padding_value; lengths int64."""
    if not isinstance(sequence, PackedSequenceValue):
        raise g.error(f"pad_packed_sequence: expected a PackedSequence made in forward, got {type(sequence).__name__}",
                      hint="pack it with torch.nn.utils.rnn.pack_padded_sequence in forward")
    if not isinstance(batch_first, bool):
        raise g.error("pad_packed_sequence: batch_first must be a Python bool known at export time")
    if not isinstance(padding_value, (bool, int, float)):
        raise g.error("pad_packed_sequence: padding_value must be a Python number known at export time")
    x, lengths = sequence.padded, sequence.lengths
    if total_length is None:
        steps = g.op("ReduceMax", lengths, keepdims=0)
    elif isinstance(total_length, int) and not isinstance(total_length, bool):
        steps = g.const(total_length, torch.int64)
        have = g.size(x, 0)
        have = g.const(have, torch.int64) if isinstance(have, int) else have
        longer = g.op("Max", g.op("Sub", steps, have), g.const(0, torch.int64))
        pads = g.shape_tensor([0] * x.rank + [longer] + [0] * (x.rank - 1))
        x = g.op("Pad", x, pads)
    else:
        raise g.error("pad_packed_sequence: total_length must be a Python int known at export time")
    x = g.op("Slice", x, g.const([0], torch.int64), g.unsqueeze(steps, [0]), g.const([0], torch.int64))
    time = g.op("Range", g.const(0, torch.int64), steps, g.const(1, torch.int64))
    valid = g.op("Less", g.unsqueeze(time, [1]), g.unsqueeze(lengths, [0]))  # (steps, batch)
    if x.rank > 2:
        valid = g.unsqueeze(valid, list(range(2, x.rank)))
    x = g.op("Where", valid, x, g.const(padding_value, x.dtype))
    if batch_first:
        x = g.op("Transpose", x, perm=[1, 0, *range(2, x.rank)])
    return x, lengths


@register("torch.nn.utils.rnn.pack_sequence", refuses=True)
def pack_sequence(g, sequences, enforce_sorted=True):
    """pack_sequence(Tensor[] sequences, bool enforce_sorted=True) -> PackedSequence  (refused)"""
    raise g.error("a PackedSequence (torch.nn.utils.rnn.pack_sequence) is not supported: its layout depends "
                  "on the sequences' lengths, and untrace's recurrent lowerings take padded tensors",
                  hint="pad the sequences with torch.nn.utils.rnn.pad_sequence; " + _PADDED_HINT)


@register("torch.nn.LSTM")
def lstm(g, mod: ModuleCall, input, hx=None):
    """LSTM.forward(Tensor|PackedSequence input, (Tensor h_0, Tensor c_0)? hx=None) -> (output, (Tensor h_n,
    Tensor c_n)): one ONNX LSTM per layer (gates i,f,g,o reordered to i,o,f,c), a PackedSequence's lengths as
    sequence_lens; refused: proj_size > 0, dropout between layers in training mode."""
    return _recurrent(g, mod, "LSTM", input, hx)


@register("torch.nn.GRU")
def gru(g, mod: ModuleCall, input, hx=None):
    """GRU.forward(Tensor input, Tensor? hx=None) -> (Tensor output, Tensor h_n): one ONNX GRU per layer
    (gates r,z,n reordered to z,r,h; linear_before_reset=1, PyTorch's n gate)."""
    return _recurrent(g, mod, "GRU", input, hx)


@register("torch.nn.RNN")
def rnn(g, mod: ModuleCall, input, hx=None):
    """RNN.forward(Tensor input, Tensor? hx=None) -> (Tensor output, Tensor h_n): one ONNX RNN per layer,
    activation Tanh or Relu (nonlinearity)."""
    return _recurrent(g, mod, "RNN", input, hx)
