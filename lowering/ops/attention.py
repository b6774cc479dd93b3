"""Attention and embeddings: ``F.scaled_dot_product_attention``, ``nn.MultiheadAttention``,
``F.embedding`` and ``nn.Embedding``.
"""

from __future__ import annotations

import math

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import require_value
from lowering.ops._nn_common import _call, _child, _float_input, _refuse_training
from lowering.ops.registry import ModuleCall, register
from lowering.ops.shape import dim_size, reshape

# ---------------------------------------------------------------------------- attention


def _mask_to_additive(g: GraphBuilder, mask: Value, dtype: torch.dtype, true_means_keep: bool) -> Value:
    """A bool mask as 0 / -inf of ``dtype``; a float mask cast to ``dtype``."""
    if mask.dtype == torch.bool:
        keep = mask if true_means_keep else g.op("Not", mask)
        return g.op("Where", keep, g.const(0.0, dtype), g.const(float("-inf"), dtype))
    if not is_float(mask.dtype):
        raise g.error(f"attention masks must be bool or floating point, got {mask.dtype} (torch raises)")
    return g.cast(mask, dtype)


def _causal_mask(g: GraphBuilder, q: Value, k: Value, dtype: torch.dtype) -> Value:
    lq = dim_size(g, q, q.rank - 2)
    lk = dim_size(g, k, k.rank - 2)
    if isinstance(lq, int) and isinstance(lk, int):
        keep = torch.ones(lq, lk, dtype=torch.bool).tril()
        return g.const(torch.zeros(lq, lk, dtype=dtype).masked_fill(~keep, float("-inf")))
    zero = g.const(0, torch.int64)
    one = g.const(1, torch.int64)
    rows = g.op("Range", zero, lq if isinstance(lq, Value) else g.const(lq, torch.int64), one)
    cols = g.op("Range", zero, lk if isinstance(lk, Value) else g.const(lk, torch.int64), one)
    keep = g.op("GreaterOrEqual", g.unsqueeze(rows, [1]), g.unsqueeze(cols, [0]))
    return g.op("Where", keep, g.const(0.0, dtype), g.const(float("-inf"), dtype))


def _safe_softmax(g: GraphBuilder, scores: Value) -> Value:
    """softmax over the last axis, 0 (not NaN) on rows that are entirely -inf."""
    axis = scores.rank - 1
    sm = g.op("Softmax", scores, axis=axis)
    all_masked = g.op("Equal", g.reduce("ReduceMax", scores, [axis], keepdims=True), g.const(float("-inf"), scores.dtype))
    return g.op("Where", all_masked, g.const(0.0, scores.dtype), sm)


@register("torch.nn.functional.scaled_dot_product_attention")
def scaled_dot_product_attention(g, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None,
    float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"""
    q = _float_input(g, query, "scaled_dot_product_attention", "query")
    k = require_value(g, key, "scaled_dot_product_attention", "key")
    v = require_value(g, value, "scaled_dot_product_attention", "value")
    if dropout_p:
        raise g.error("scaled_dot_product_attention(dropout_p > 0) draws a random mask", hint="pass dropout_p=0.0 in eval mode")
    if enable_gqa:
        raise g.error("scaled_dot_product_attention(enable_gqa=True) is not supported", hint="repeat the key/value heads explicitly")
    for t in (q, k, v):
        if t.rank is None or t.rank < 2:
            raise g.error("scaled_dot_product_attention needs inputs of known rank >= 2")
    if is_causal and attn_mask is not None:
        raise g.error("scaled_dot_product_attention: _scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True (torch raises)")
    e = q.shape[-1]
    if scale is None:
        if not isinstance(e, int):
            e_v = g.cast(dim_size(g, q, q.rank - 1), q.dtype)
            s_v = g.op("Reciprocal", g.op("Sqrt", e_v))
        else:
            s_v = g.const(1.0 / math.sqrt(e), q.dtype)
    else:
        s_v = g.const(float(scale), q.dtype)
    kt = g.op("Transpose", k, perm=list(range(k.rank - 2)) + [k.rank - 1, k.rank - 2])
    scores = g.op("Mul", g.op("MatMul", q, kt), s_v)
    masked = False
    if is_causal:
        scores = g.op("Add", scores, _causal_mask(g, q, k, q.dtype))
        masked = True
    elif attn_mask is not None:
        m = require_value(g, attn_mask, "scaled_dot_product_attention", "attn_mask")
        scores = g.op("Add", scores, _mask_to_additive(g, m, q.dtype, true_means_keep=True))
        masked = True
    attn = _safe_softmax(g, scores) if masked else g.op("Softmax", scores, axis=scores.rank - 1)
    return g.op("MatMul", attn, v)


@register("torch.nn.MultiheadAttention")
def multihead_attention(g, mod: ModuleCall, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                        average_attn_weights=True, is_causal=False):
    """MultiheadAttention.forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (Tensor attn_output, Tensor? attn_weights)"""
    m = mod.module
    if not m._qkv_same_embed_dim:
        raise g.error("MultiheadAttention with kdim/vdim != embed_dim is not supported")
    if m.bias_k is not None or m.add_zero_attn:
        raise g.error("MultiheadAttention with add_bias_kv or add_zero_attn is not supported")
    if m.training and m.dropout > 0:
        _refuse_training(g, mod, "attention dropout draws a random mask")
    if is_causal and attn_mask is None:
        raise g.error("MultiheadAttention: need attn_mask if specifying the is_causal hint (torch raises)")
    q_in = _float_input(g, query, "MultiheadAttention", "query")
    k_in = require_value(g, key, "MultiheadAttention", "key")
    v_in = require_value(g, value, "MultiheadAttention", "value")
    E, H = m.embed_dim, m.num_heads
    D = E // H
    unbatched = q_in.rank == 2
    if q_in.rank not in (2, 3) or k_in.rank != q_in.rank or v_in.rank != q_in.rank:
        raise g.error("MultiheadAttention: query, key and value must all be 2-D (unbatched) or 3-D (torch raises)")
    # Work in (N, L, E).
    def to_nle(t: Value) -> Value:
        if unbatched:
            return g.unsqueeze(t, [0])
        return t if m.batch_first else g.op("Transpose", t, perm=[1, 0, 2])

    q_x, k_x, v_x = to_nle(q_in), to_nle(k_in), to_nle(v_in)
    w = mod.param("in_proj_weight")
    b = mod.param("in_proj_bias")

    def proj(x: Value, i: int) -> Value:
        wi = g.op("Slice", w, g.const([i * E], torch.int64), g.const([(i + 1) * E], torch.int64), g.const([0], torch.int64))
        y = g.op("MatMul", x, g.op("Transpose", wi, perm=[1, 0]))
        if b is not None:
            bi = g.op("Slice", b, g.const([i * E], torch.int64), g.const([(i + 1) * E], torch.int64), g.const([0], torch.int64))
            y = g.op("Add", y, bi)
        return y

    def heads(x: Value) -> Value:  # (N, L, E) -> (N, H, L, D)
        return g.op("Transpose", reshape(g, x, [dim_size(g, x, 0), dim_size(g, x, 1), H, D]), perm=[0, 2, 1, 3])

    q, k, v = heads(proj(q_x, 0)), heads(proj(k_x, 1)), heads(proj(v_x, 2))
    scores = g.op("MatMul", g.op("Mul", q, g.const(1.0 / math.sqrt(D), q.dtype)), g.op("Transpose", k, perm=[0, 1, 3, 2]))
    if attn_mask is not None:
        am = _mask_to_additive(g, require_value(g, attn_mask, "MultiheadAttention", "attn_mask"), q.dtype, False)
        if am.rank == 3:  # (N*H, L, S) -> (N, H, L, S)
            am = reshape(g, am, [-1, H, dim_size(g, am, 1), dim_size(g, am, 2)])
        elif am.rank != 2:
            raise g.error("MultiheadAttention: attn_mask must be 2-D or 3-D (torch raises)")
        scores = g.op("Add", scores, am)
    if key_padding_mask is not None:
        kpm = _mask_to_additive(g, require_value(g, key_padding_mask, "MultiheadAttention", "key_padding_mask"), q.dtype, False)
        kpm = g.unsqueeze(kpm, [0, 1, 2] if unbatched else [1, 2])  # (N, 1, 1, S)
        scores = g.op("Add", scores, kpm)
    attn = g.op("Softmax", scores, axis=3)
    out = g.op("MatMul", attn, v)  # (N, H, L, D)
    out = g.op("Transpose", out, perm=[0, 2, 1, 3])
    out = reshape(g, out, [dim_size(g, out, 0), dim_size(g, out, 1), E])
    out = _call(g, "torch.nn.functional.linear", out, _out_proj(g, mod, "weight"), _out_proj(g, mod, "bias"))
    if unbatched:
        out = g.squeeze(out, [0])
    elif not m.batch_first:
        out = g.op("Transpose", out, perm=[1, 0, 2])
    if not need_weights:
        return out, None
    weights = g.reduce("ReduceMean", attn, [1], keepdims=False) if average_attn_weights else attn
    if unbatched:
        weights = g.squeeze(weights, [0])
    return out, weights


def _out_proj(g: GraphBuilder, mod: ModuleCall, attr: str) -> Value | None:
    return _child(mod, "out_proj", mod.module.out_proj).param(attr)


# ---------------------------------------------------------------------------- embedding


@register("torch.nn.functional.embedding")
def embedding(g, input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False,
    bool sparse=False) -> Tensor  (F.embedding argument order; max_norm renorms the looked-up rows)"""
    i = require_value(g, input, "embedding", "input")
    w = require_value(g, weight, "embedding", "weight")
    if is_float(i.dtype) or is_bool(i.dtype):
        raise g.error(f"embedding: indices must be an integer tensor, got {i.dtype} (torch raises)")
    if w.rank != 2:
        raise g.error("embedding: weight must be 2-D (torch raises)")
    rows = g.op("Gather", w, g.cast(i, torch.int64), axis=0)
    if max_norm is None:
        return rows
    # embedding_renorm_: rows whose norm exceeds max_norm are scaled to max_norm / (norm + 1e-7).
    p = float(norm_type)
    if p == 2.0:
        norm = g.reduce("ReduceL2", rows, [-1 if rows.rank is None else rows.rank - 1], keepdims=True)
    elif p == 1.0:
        norm = g.reduce("ReduceL1", rows, [rows.rank - 1], keepdims=True)
    else:
        s = g.reduce("ReduceSum", g.op("Pow", g.op("Abs", rows), g.const(p, rows.dtype)), [rows.rank - 1], keepdims=True)
        norm = g.op("Pow", s, g.const(1.0 / p, rows.dtype))
    mx = g.const(float(max_norm), rows.dtype)
    scale = g.op("Div", mx, g.op("Add", norm, g.const(1e-7, rows.dtype)))
    scale = g.op("Where", g.op("Greater", norm, mx), scale, g.const(1.0, rows.dtype))
    return g.op("Mul", rows, scale)


@register("torch.nn.Embedding")
def embedding_module(g, mod: ModuleCall, input):
    """Embedding.forward(input) -> F.embedding(input, weight, padding_idx, max_norm, norm_type, ...)"""
    m = mod.module
    return embedding(g, input, mod.param("weight"), m.padding_idx, m.max_norm, m.norm_type)
