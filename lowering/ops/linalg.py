"""Matrix products: matmul/mm/bmm/mv/dot/outer, einsum, linear, the add*mm family and
``cdist``.

ONNX MatMul has numpy's matmul semantics, which are torch's (1-d operands promoted and
removed again, batch dims broadcast).  Operands must share a dtype, as in torch.
``addmm``-style ops compute ``beta * input + alpha * (a @ b)``; with ``beta == 0`` the
input is ignored (NaN in it does not propagate), as torch specifies.  ``cdist`` with
p=2 follows torch's ``compute_mode``: the matmul form (``|a|^2 + |b|^2 - 2ab``, as torch
rounds it) where torch uses it -- always, or above 25 rows -- and the exact differences
otherwise (also when a row count is dynamic: the same distances, without cancellation).
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import check_out, require_value
from lowering.ops.registry import register
from lowering.ops.shape import known_rank


def _operands(g: GraphBuilder, name: str, *xs: Any) -> list[Value]:
    vals = [require_value(g, x, name) for x in xs]
    dtypes = {v.dtype for v in vals}
    if len(dtypes) != 1:
        raise g.error(f"{name}: operands must have the same dtype, got {sorted(str(d) for d in dtypes)} (torch raises)")
    dt = vals[0].dtype
    if is_bool(dt) or dt.is_complex:
        raise g.error(f"{name} of {dt} tensors is not supported")
    return vals


def _rank(g: GraphBuilder, x: Value, ranks: tuple[int, ...], name: str, what: str) -> None:
    if x.rank not in ranks:
        raise g.error(f"{name}: {what} must be {' or '.join(f'{r}-D' for r in ranks)}, got rank {x.rank}")


def _factor(g: GraphBuilder, factor: Any, dtype: torch.dtype, name: str, what: str) -> torch.Tensor:
    """alpha/beta as torch uses them: converted to the tensors' dtype (0.2 -> 0 for ints)."""
    if isinstance(factor, Value) or not isinstance(factor, (bool, int, float)):
        raise g.error(f"{name}: {what} must be a Python number")
    return torch.tensor(factor).to(dtype)


def _scale(g: GraphBuilder, v: Value, factor: torch.Tensor) -> Value:
    if is_bool(v.dtype):
        return v if bool(factor) else g.op("And", v, g.const(False))
    return v if factor.item() == 1 else g.op("Mul", v, g.const(factor))


def _add_scaled(g: GraphBuilder, input: Value, product: Value, beta: Any, alpha: Any, name: str) -> Value:
    """beta * input + alpha * product; input is ignored when beta is 0 (torch), so NaN in
    it does not propagate."""
    a = _factor(g, alpha, product.dtype, name, "alpha")
    b = _factor(g, beta, input.dtype, name, "beta")
    product = _scale(g, product, a)
    if b.item() == 0:
        return product
    if is_bool(input.dtype):
        return g.op("Or", _scale(g, input, b), product)
    return g.op("Add", _scale(g, input, b), product)


@register("torch.matmul", "Tensor.matmul", "operator.matmul")
def matmul(g, input, other, *, out=None):
    """matmul(Tensor self, Tensor other) -> Tensor"""
    check_out(g, out, "matmul")
    a, b = _operands(g, "matmul", input, other)
    if a.rank == 0 or b.rank == 0:
        raise g.error("matmul: both arguments need at least 1 dimension (torch raises)")
    return g.op("MatMul", a, b)


@register("torch.mm", "Tensor.mm")
def mm(g, input, mat2, *, out=None):
    """mm(Tensor self, Tensor mat2) -> Tensor"""
    check_out(g, out, "mm")
    a, b = _operands(g, "mm", input, mat2)
    _rank(g, a, (2,), "mm", "self")
    _rank(g, b, (2,), "mm", "mat2")
    return g.op("MatMul", a, b)


@register("torch.bmm", "Tensor.bmm")
def bmm(g, input, mat2, *, out=None):
    """bmm(Tensor self, Tensor mat2) -> Tensor"""
    check_out(g, out, "bmm")
    a, b = _operands(g, "bmm", input, mat2)
    _rank(g, a, (3,), "bmm", "self")
    _rank(g, b, (3,), "bmm", "mat2")
    return g.op("MatMul", a, b)


@register("torch.mv", "Tensor.mv")
def mv(g, input, vec, *, out=None):
    """mv(Tensor self, Tensor vec) -> Tensor"""
    check_out(g, out, "mv")
    a, v = _operands(g, "mv", input, vec)
    _rank(g, a, (2,), "mv", "self")
    _rank(g, v, (1,), "mv", "vec")
    return g.op("MatMul", a, v)


@register("torch.dot", "Tensor.dot", "torch.vdot", "Tensor.vdot")
def dot(g, input, other, *, out=None):
    """dot(Tensor self, Tensor tensor) -> Tensor  (0-d)"""
    check_out(g, out, "dot")
    a, b = _operands(g, "dot", input, other)
    _rank(g, a, (1,), "dot", "self")
    _rank(g, b, (1,), "dot", "tensor")
    return g.op("MatMul", a, b)


@register("torch.inner", "Tensor.inner")
def inner(g, input, other, *, out=None):
    """inner(Tensor self, Tensor other) -> Tensor  (sum over the last dims)"""
    check_out(g, out, "inner")
    a, b = _operands(g, "inner", input, other) if isinstance(input, Value) and isinstance(other, Value) else (None, None)
    if a is None:
        raise g.error("inner: both operands must be tensors")
    if a.rank == 0 or b.rank == 0:
        return g.op("Mul", a, b)
    if b.rank == 1:
        return g.op("MatMul", a, b)
    if a.rank is None or b.rank is None:
        raise g.error("inner needs operands of known rank")
    perm = list(range(b.rank - 1))
    bt = g.op("Transpose", b, perm=[b.rank - 1, *perm])  # (k, *rest)
    if a.rank == 1:
        return g.op("MatMul", a, bt)
    # (*a_rest, k) @ (k, *b_rest): flatten b_rest, multiply, restore.
    rest = [g.size(b, i) for i in range(b.rank - 1)]
    b2 = g.op("Reshape", bt, g.shape_tensor([g.size(b, b.rank - 1), -1]))
    prod = g.op("MatMul", a, b2)
    a_rest = [g.size(a, i) for i in range(a.rank - 1)]
    return g.op("Reshape", prod, g.shape_tensor([*a_rest, *rest]))


@register("torch.outer", "Tensor.outer", "torch.ger", "Tensor.ger")
def outer(g, input, vec2, *, out=None):
    """outer(Tensor self, Tensor vec2) -> Tensor"""
    check_out(g, out, "outer")
    a = require_value(g, input, "outer")
    b = require_value(g, vec2, "outer", "vec2")
    _rank(g, a, (1,), "outer", "self")
    _rank(g, b, (1,), "outer", "vec2")
    a, b = g.promote(a, b)
    if is_bool(a.dtype):
        return g.op("And", g.unsqueeze(a, [1]), g.unsqueeze(b, [0]))
    return g.op("Mul", g.unsqueeze(a, [1]), g.unsqueeze(b, [0]))


@register("torch.einsum")
def einsum(g, equation, *operands, path=None):
    """einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor"""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise g.error("einsum: the sublist format is not supported", hint="write the equation as a string")
    vals = _operands(g, "einsum", *operands)
    eq = equation.replace(" ", "")
    letters = sorted({c for c in eq if c.isalpha()})
    if any(c.isupper() for c in letters):
        # ONNX Einsum letters are lowercase-only in onnxruntime: rename consistently.
        free = [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in letters]
        mapping = {}
        for c in letters:
            if c.isupper():
                if not free:
                    raise g.error("einsum: too many distinct subscripts")
                mapping[c] = free.pop(0)
        eq = "".join(mapping.get(c, c) for c in eq)
        if "->" not in eq:
            # The implicit output orders letters alphabetically (upper before lower in
            # torch); after renaming, spell it out.
            counts = {c: equation.count(c) for c in letters}
            out = "".join(mapping.get(c, c) for c in letters if counts[c] == 1)
            eq = eq + "->" + ("..." if "..." in equation else "") + out
    terms = eq.partition("->")[0].split(",")
    if len(terms) != len(vals):
        raise g.error(f"einsum: {len(terms)} operand subscripts for {len(vals)} operands")
    if "..." in eq:
        # torch broadcasts ellipses covering different numbers of dims; ONNX wants the
        # same count everywhere, so pad the shorter ones with size-1 dims.
        counts = []
        for t, v in zip(terms, vals):
            if "..." in t:
                if v.rank is None:
                    raise g.error("einsum with '...' needs operands of known rank")
                counts.append(v.rank - (len(t) - 3))
        widest = builtins.max(counts) if counts else 0
        for i, (t, v) in enumerate(zip(terms, vals)):
            if "..." in t and v.rank - (len(t) - 3) < widest:
                pos = t.index("...")
                missing = widest - (v.rank - (len(t) - 3))
                vals[i] = g.unsqueeze(v, list(range(pos, pos + missing)))
        lhs, arrow, rhs = eq.partition("->")
        if arrow and "..." not in rhs:
            # onnxruntime wants '...' in the output when inputs have it; torch sums the
            # ellipsis dims away, so spell them out as letters that are not kept.
            free = [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in eq]
            if len(free) < widest:
                raise g.error("einsum: too many subscripts")
            ell = "".join(free[:widest])
            eq = lhs.replace("...", ell) + "->" + rhs
    return g.op("Einsum", *vals, equation=eq)


@register("torch.nn.functional.linear")
def linear(g, input, weight, bias=None):
    """linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor  (input @ weight.T + bias)"""
    x, w = _operands(g, "linear", input, weight)
    b = None if bias is None else _operands(g, "linear", x, bias)[1]
    _rank(g, w, (1, 2), "linear", "weight")
    if x.rank == 2 and w.rank == 2 and is_float(x.dtype) and (b is None or b.rank in (0, 1)):
        return g.op("Gemm", x, w, b, transB=1)
    y = g.op("MatMul", x, w if w.rank == 1 else g.op("Transpose", w, perm=[1, 0]))
    return y if b is None else g.op("Add", y, b)


@register("torch.addmm", "Tensor.addmm")
def addmm(g, input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    check_out(g, out, "addmm")
    c, a, b = _operands(g, "addmm", input, mat1, mat2)
    _rank(g, a, (2,), "addmm", "mat1")
    _rank(g, b, (2,), "addmm", "mat2")
    return _add_scaled(g, c, g.op("MatMul", a, b), beta, alpha, "addmm")


@register("torch.baddbmm", "Tensor.baddbmm")
def baddbmm(g, input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    check_out(g, out, "baddbmm")
    c, a, b = _operands(g, "baddbmm", input, batch1, batch2)
    _rank(g, a, (3,), "baddbmm", "batch1")
    _rank(g, b, (3,), "baddbmm", "batch2")
    return _add_scaled(g, c, g.op("MatMul", a, b), beta, alpha, "baddbmm")


@register("torch.addbmm", "Tensor.addbmm")
def addbmm(g, input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    check_out(g, out, "addbmm")
    c, a, b = _operands(g, "addbmm", input, batch1, batch2)
    _rank(g, a, (3,), "addbmm", "batch1")
    _rank(g, b, (3,), "addbmm", "batch2")
    product = g.reduce("ReduceSum", g.op("MatMul", a, b), [0], False)
    return _add_scaled(g, c, product, beta, alpha, "addbmm")


@register("torch.addmv", "Tensor.addmv")
def addmv(g, input, mat, vec, *, beta=1, alpha=1, out=None):
    """addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    check_out(g, out, "addmv")
    c, a, v = _operands(g, "addmv", input, mat, vec)
    _rank(g, a, (2,), "addmv", "mat")
    _rank(g, v, (1,), "addmv", "vec")
    return _add_scaled(g, c, g.op("MatMul", a, v), beta, alpha, "addmv")


@register("torch.addr", "Tensor.addr")
def addr(g, input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    check_out(g, out, "addr")
    c = require_value(g, input, "addr")
    a = require_value(g, vec1, "addr", "vec1")
    b = require_value(g, vec2, "addr", "vec2")
    _rank(g, a, (1,), "addr", "vec1")
    _rank(g, b, (1,), "addr", "vec2")
    c, a, b = g.promote(c, a, b)
    product = g.op("And" if is_bool(c.dtype) else "Mul", g.unsqueeze(a, [1]), g.unsqueeze(b, [0]))
    return _add_scaled(g, c, product, beta, alpha, "addr")


# ---------------------------------------------------------------------------- cdist

_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _euclid_by_mm(g: GraphBuilder, a: Value, b: Value) -> Value:
    """torch's ``_euclidean_dist``: one matmul of [-2a, |a|^2, 1] and [b, 1, |b|^2],
    clamped at 1e-30 and square-rooted (so it rounds as torch does)."""
    an = g.reduce("ReduceSum", g.op("Mul", a, a), [a.rank - 1], True)
    bn = g.reduce("ReduceSum", g.op("Mul", b, b), [b.rank - 1], True)
    one = g.const(1.0, a.dtype)
    a_ = g.op("Concat", g.op("Mul", a, g.const(-2.0, a.dtype)), an, g.op("Expand", one, g.shape_of(an)), axis=-1)
    b_ = g.op("Concat", b, g.op("Expand", one, g.shape_of(bn)), bn, axis=-1)
    perm = list(range(b.rank - 2)) + [b.rank - 1, b.rank - 2]
    d2 = g.op("MatMul", a_, g.op("Transpose", b_, perm=perm))
    return g.op("Sqrt", g.op("Max", d2, g.const(1e-30, a.dtype)))


@register("torch.cdist")
def cdist(g, x1, x2, p=2.0, compute_mode=None):
    """cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor  (batch dims broadcast)"""
    a, b = _operands(g, "cdist", x1, x2)
    if not is_float(a.dtype):
        raise g.error(f"cdist only supports floating-point dtypes, X1 got: {a.dtype} (torch raises)")
    if a.rank is None or b.rank is None or a.rank < 2 or b.rank < 2:
        raise g.error("cdist only supports at least 2D tensors (torch raises)")
    if isinstance(p, Value) or not isinstance(p, (int, float)) or isinstance(p, bool):
        raise g.error("cdist: p must be a Python number known at export time")
    p = float(p)
    if p < 0:
        raise g.error("cdist only supports non-negative p values (torch raises)")
    if compute_mode is None:
        compute_mode = _CDIST_MODES[0]
    if compute_mode not in _CDIST_MODES:
        raise g.error(f"cdist: {compute_mode!r} is not a valid value for compute_mode (torch raises)")
    m1, m2 = a.shape[-1], b.shape[-1]
    if isinstance(m1, int) and isinstance(m2, int) and m1 != m2:
        raise g.error(f"cdist: X1 and X2 must have the same number of columns. X1: {m1} X2: {m2} (torch raises)")
    if p == 2.0 and compute_mode != _CDIST_MODES[2]:
        rows1, rows2 = a.shape[-2], b.shape[-2]
        if compute_mode == _CDIST_MODES[1]:
            use_mm = True
        elif isinstance(rows1, int) and isinstance(rows2, int):
            use_mm = rows1 > 25 or rows2 > 25
        else:
            # The same distances either way; with a dynamic row count the exact difference
            # (no cancellation) is the more accurate choice.
            use_mm = False
        if use_mm:  # batch dims broadcast in MatMul as torch expands them
            return _euclid_by_mm(g, a, b)
    # (..., P, 1, M) - (..., 1, R, M), reduced over M.
    d = g.op("Sub", g.unsqueeze(a, [a.rank - 1]), g.unsqueeze(b, [b.rank - 2]))
    ad = g.op("Abs", d)
    last = [builtins.max(a.rank, b.rank)]
    if p == 0.0:
        return g.reduce("ReduceSum", g.cast(g.op("Greater", ad, g.const(0.0, a.dtype)), a.dtype), last, False)
    if p == 1.0:
        return g.reduce("ReduceSum", ad, last, False)
    if p == 2.0:
        return g.op("Sqrt", g.reduce("ReduceSum", g.op("Mul", d, d), last, False))
    if p == float("inf"):
        return g.reduce("ReduceMax", ad, last, False)
    s = g.reduce("ReduceSum", g.op("Pow", ad, g.const(p, a.dtype)), last, False)
    return g.op("Pow", s, g.const(1.0 / p, a.dtype))


# ---------------------------------------------------------------------------- refused


@register("torch.linalg.pinv", "torch.pinverse", "Tensor.pinverse", refuses=True)
def pinv(g, input, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """linalg_pinv(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor;
    pinverse(Tensor self, float rcond=1e-15) -> Tensor  (refused)"""
    raise g.error(
        "torch.linalg.pinv needs a singular value decomposition (singular values below the rtol/atol cutoff are "
        "dropped), and ONNX has no SVD, matrix inverse or solve op to build it from",
        hint="for a matrix fixed at export time (a parameter or buffer) compute torch.linalg.pinv once outside "
             "forward and register the result as a buffer; for a least-squares fit of small fixed-size systems "
             "write the closed-form normal equations with elementwise ops",
    )


@register("torch.tensordot")
def tensordot(g, a, b, dims=2, out=None):
    """tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor
    (torch.tensordot's `dims`: an int n, the last n dims of `a` with the first n of `b`, or
    two lists of dims): the einsum that contracts them."""
    if out is not None:
        raise g.error("tensordot: `out=` is not supported")
    ra, rb = known_rank(g, a, "tensordot"), known_rank(g, b, "tensordot")
    if isinstance(dims, Value) or isinstance(dims, torch.Tensor):
        raise g.error("tensordot: `dims` must be an int or lists of ints known at export time")
    if isinstance(dims, int):
        if dims < 0:
            raise g.error(f"tensordot expects dims >= 0, but got dims={dims} (torch raises)")
        da, db = list(range(ra - dims, ra)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise g.error("tensordot: both dimension lists should have the same length (torch raises)")
    da, db = [d % ra if ra else d for d in da], [d % rb if rb else d for d in db]
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    sa = [next(letters) for _ in range(ra)]
    sb = [next(letters) for _ in range(rb)]
    for i, j in zip(da, db):
        sb[j] = sa[i]
    out_a = [s for i, s in enumerate(sa) if i not in da]
    out_b = [s for j, s in enumerate(sb) if j not in db]
    return einsum(g, f"{''.join(sa)},{''.join(sb)}->{''.join(out_a + out_b)}", a, b)
