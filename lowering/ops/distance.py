"""Distances: ``F.cosine_similarity`` and ``F.pairwise_distance`` with their ``nn`` modules."""

from __future__ import annotations

import torch

from lowering.graph import Value, is_float
from lowering.ops._common import require_value
from lowering.ops._nn_common import _call
from lowering.ops.registry import ModuleCall, register
from lowering.ops.shape import known_rank, normalize_axis

# ---------------------------------------------------------------------------- distances


@register("torch.nn.functional.cosine_similarity")
def cosine_similarity(g, x1, x2, dim=1, eps=1e-8):
    """cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor
    (sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)), ATen's formulation)"""
    a = require_value(g, x1, "cosine_similarity", "x1")
    b = require_value(g, x2, "cosine_similarity", "x2")
    a, b = g.promote(a, b)
    if not is_float(a.dtype):
        a, b = g.cast(a, torch.get_default_dtype()), g.cast(b, torch.get_default_dtype())
    known_rank(g, a, "cosine_similarity"), known_rank(g, b, "cosine_similarity")
    # ATen broadcasts first (expand_outplace), so norms run over broadcast dims too.
    a = g.op("Expand", a, g.shape_of(b))
    b = g.op("Expand", b, g.shape_of(a))
    rank = a.rank
    scalar = rank == 0
    if scalar:
        a, b, rank = g.unsqueeze(a, [0]), g.unsqueeze(b, [0]), 1
    d = normalize_axis(g, dim, rank, "cosine_similarity")
    e = g.const(float(eps), a.dtype)

    def unit(v: Value) -> Value:
        n = g.reduce("ReduceL2", v, [d], keepdims=True)
        return g.op("Div", v, g.op("Max", n, e))

    return g.reduce("ReduceSum", g.op("Mul", unit(a), unit(b)), [d], keepdims=False)


@register("torch.nn.CosineSimilarity")
def cosine_similarity_module(g, mod: ModuleCall, x1, x2):
    """CosineSimilarity.forward(x1, x2) -> F.cosine_similarity(x1, x2, dim, eps)"""
    return cosine_similarity(g, x1, x2, mod.module.dim, mod.module.eps)


@register("torch.nn.functional.pairwise_distance")
def pairwise_distance(g, x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor
    (norm(x1 - x2 + eps, p, dim=-1))"""
    a = require_value(g, x1, "pairwise_distance", "x1")
    b = require_value(g, x2, "pairwise_distance", "x2")
    a, b = g.promote(a, b)
    if not is_float(a.dtype):
        raise g.error(f"pairwise_distance of {a.dtype} tensors is not supported", hint="cast to float32 first")
    rank = max(known_rank(g, a, "pairwise_distance"), known_rank(g, b, "pairwise_distance"))
    diff = g.op("Add", g.op("Sub", a, b), g.const(float(eps), a.dtype))
    if rank == 0:
        return _call(g, "torch.linalg.vector_norm", diff, p, None, keepdim)
    return _call(g, "torch.linalg.vector_norm", diff, p, [rank - 1], keepdim)


@register("torch.nn.PairwiseDistance")
def pairwise_distance_module(g, mod: ModuleCall, x1, x2):
    """PairwiseDistance.forward(x1, x2) -> F.pairwise_distance(x1, x2, norm, eps, keepdim)"""
    m = mod.module
    return pairwise_distance(g, x1, x2, m.norm, m.eps, m.keepdim)
