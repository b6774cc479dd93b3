"""Grouped matrix products: ``torch.nn.functional.grouped_mm`` / ``torch._grouped_mm``,
the mixture-of-experts kernel (transformers 5's default MoE path: tokens sorted by
expert, ``offs`` the cumulative token counts, one weight matrix per expert).

Group ``i`` covers ``[offs[i-1], offs[i])`` of the jagged dimension (``offs[-1]`` = 0).
The four forms, as ATen defines them:

===========  ============  ======  ==================================================
``mat_a``    ``mat_b``     offs    result
===========  ============  ======  ==================================================
(M, K)       (G, K, N)     yes     (M, N): rows of group i are ``a[rows] @ b[i]``
(G, M, K)    (K, N_tot)    yes     (M, N_tot): columns of group i are ``a[i] @ b[:, cols]``
(M, K_tot)   (K_tot, N)    yes     (G, M, N): ``a[:, ks] @ b[ks, :]`` (an empty group: zeros)
(G, M, K)    (G, K, N)     no      (G, M, N): a batched matmul
===========  ============  ======  ==================================================

The jagged forms are one ONNX ``Loop`` over the groups (G may be dynamic), each step one
MatMul of that group's slice, so the work is that of the eager kernel.  Rows (columns)
past ``offs[-1]`` are uninitialised memory in eager (its docs: "ignored"); here they are
zeros, as ``empty`` gives zeros.  float16/bfloat16 are multiplied in float32 and rounded
once, as ATen's CPU kernel accumulates; ``out_dtype=float32`` keeps that float32 result.
"""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops.registry import register

_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _group_bounds(g: GraphBuilder, offs: Value) -> tuple[Value, Value]:
    """(starts, ends) of the groups, int64: ends = offs, starts = [0, offs[:-1]]."""
    ends = g.cast(offs, torch.int64)
    head = g.op("Slice", ends, g.const([0], torch.int64), g.const([-1], torch.int64), g.const([0], torch.int64))
    return g.op("Concat", g.const([0], torch.int64), head, axis=0), ends


def _loop(g: GraphBuilder, count: Value, starts: Value, ends: Value, step, init: Value | None) -> Value:
    """A Loop over the groups: ``step(body, i, span, acc)`` gets the group's index range
    ``span`` (1-d int64) and returns the new ``acc`` (with ``init``) or a scan output."""
    body = g.subgraph()
    i = body.add_input(body.fresh("group"), torch.int64, ())
    cond = body.add_input(body.fresh("cond"), torch.bool, ())
    acc = None if init is None else body.add_input(body.fresh("acc"), init.dtype, init.shape)
    span = body.op("Range", body.op("Gather", starts, i, axis=0), body.op("Gather", ends, i, axis=0),
                   body.const(1, torch.int64))
    out = step(body, i, span, acc)
    body.add_output(cond)
    body.add_output(out, shape=tuple(None for _ in range(out.rank)) if init is None else init.shape)
    return g.op("Loop", count, g.const(True), *([] if init is None else [init]), outputs=1, body=body.build_graph())


def _zeros(g: GraphBuilder, dims: list, dtype: torch.dtype) -> Value:
    from lowering.ops.creation import filled

    return filled(g, dims, 0, dtype)


@register("torch.nn.functional.grouped_mm", "torch._grouped_mm")
def grouped_mm(g, mat_a, mat_b, offs=None, bias=None, out_dtype=None):
    """grouped_mm(Tensor mat_a, Tensor mat_b, *, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None)
    -> Tensor  (_grouped_mm takes offs/bias/out_dtype positionally too); bias is refused (ATen: "Bias not
    supported yet")."""
    name = "grouped_mm"
    a = require_value(g, mat_a, name, "mat_a")
    b = require_value(g, mat_b, name, "mat_b")
    if bias is not None:
        raise g.error("grouped_mm with bias= is not supported (ATen's CPU kernel raises \"Bias not supported yet\")",
                      hint="add the bias to the result, per group")
    if a.dtype != b.dtype:
        raise g.error(f"grouped_mm: expected mat_a and mat_b to have the same dtype, but got {a.dtype} and {b.dtype} "
                      "(torch raises)")
    if a.dtype not in _DTYPES:
        raise g.error(f"grouped_mm: expected mat_a to be Float32, BFloat16 or Float16 matrix, got {a.dtype} "
                      "(torch raises)")
    result_dtype = a.dtype if out_dtype is None else out_dtype
    if result_dtype != a.dtype and not (a.dtype == torch.bfloat16 and result_dtype == torch.float32):
        raise g.error(f"grouped_mm: out_dtype={out_dtype} with {a.dtype} operands: grouped gemm output dtype must "
                      "match `mat_a` dtype (torch raises)")
    if a.rank not in (2, 3) or b.rank not in (2, 3):
        raise g.error(f"grouped_mm: mat_a and mat_b must be 2-D or 3-D, got ranks {a.rank} and {b.rank} (torch raises)")
    jagged = a.rank == 2 or b.rank == 2
    if jagged != (offs is not None):
        raise g.error("grouped_mm: have to provide offsets if there is a 2d matrix, or no offset if both matrices "
                      "are 3d (torch raises)")
    k_a, k_b = a.shape[-1], b.shape[-2]
    if isinstance(k_a, int) and isinstance(k_b, int) and k_a != k_b:
        raise g.error(f"grouped_mm: contraction dims differ, {k_a} and {k_b} (torch raises)")
    compute = torch.float32
    x, w = g.cast(a, compute), g.cast(b, compute)
    if not jagged:
        groups_a, groups_b = a.shape[0], b.shape[0]
        if isinstance(groups_a, int) and isinstance(groups_b, int) and groups_a != groups_b:
            raise g.error(f"grouped_mm: matrix batch sizes have to match, got {groups_a} and {groups_b} (torch raises)")
        return g.cast(g.op("MatMul", x, w), result_dtype)
    offs = require_value(g, offs, name, "offs")
    if offs.dtype != torch.int32 or offs.rank != 1:
        raise g.error(f"grouped_mm: offsets have to be a 1-d int32 tensor, got a {offs.rank}-d {offs.dtype} one "
                      "(torch raises)", hint="build them with torch.cumsum(counts, 0, dtype=torch.int32)")
    batched = b if b.rank == 3 else a if a.rank == 3 else None
    if batched is not None and isinstance(batched.shape[0], int) and isinstance(offs.shape[0], int) \
            and batched.shape[0] != offs.shape[0]:
        raise g.error(f"grouped_mm: matrix batch sizes have to match, got {batched.shape[0]} groups and "
                      f"{offs.shape[0]} offsets (torch raises)")
    starts, ends = _group_bounds(g, offs)
    count = g.size(offs, 0)
    count = g.const(count, torch.int64) if isinstance(count, int) else count
    if a.rank == 2 and b.rank == 3:
        def rows(body, i, span, acc):
            product = body.op("MatMul", body.op("Gather", x, span, axis=0), body.op("Gather", w, i, axis=0))
            return body.op("ScatterND", acc, body.unsqueeze(span, [1]), product)

        init = _zeros(g, [g.size(a, 0), g.size(b, 2)], compute)
        out = _loop(g, count, starts, ends, rows, init)
    elif a.rank == 3:
        def columns(body, i, span, acc):  # in the transposed result, (N_tot, M): a group is rows again
            part = body.op("Transpose", body.op("Gather", w, span, axis=1), perm=[1, 0])
            product = body.op("MatMul", part, body.op("Transpose", body.op("Gather", x, i, axis=0), perm=[1, 0]))
            return body.op("ScatterND", acc, body.unsqueeze(span, [1]), product)

        init = _zeros(g, [g.size(b, 1), g.size(a, 1)], compute)
        out = g.op("Transpose", _loop(g, count, starts, ends, columns, init), perm=[1, 0])
    else:
        def contraction(body, i, span, acc):
            return body.op("MatMul", body.op("Gather", x, span, axis=1), body.op("Gather", w, span, axis=0))

        out = _loop(g, count, starts, ends, contraction, None)
    return g.cast(out, result_dtype)
