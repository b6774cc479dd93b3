"""Recurrent cells: nn.GRUCell, nn.LSTMCell, nn.RNNCell (one time step each).

The gate equations are PyTorch's (docs of each class), written with MatMul/Add and the
activations, so a loop over time in the user's forward lowers to an ONNX Loop whose body
holds one cell. Unbatched inputs (1-d) are handled as a batch of one.
"""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value
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
