"""Hand-written checks of the shape and indexing families against eager PyTorch on
onnxruntime: every indexing form ``t[idx]`` / ``t[idx] = v`` takes (ints, slices with
steps, None, Ellipsis, masks, index tensors in every arrangement), ops on symbolic
dims, opset coverage, and the refusals (each one a case torch itself rejects or whose
result ONNX cannot represent faithfully).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from lowering.errors import LoweringError
from lowering.graph import GraphBuilder
from lowering.ops import lookup
from lowering.ops.indexing import getitem, setitem
from lowering.ops.shape import flatten, reshape, split, squeeze, view

from . import harness
from .xfails import xfail_for

torch.set_grad_enabled(False)

OPSETS = (17, 18, 23)


def _t(*shape, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=dtype)
    return torch.randint(-5, 5, shape, generator=gen, dtype=dtype)


def _setitem_eager(idx):
    def eager(x, value, *index_tensors):
        y = x.clone()
        y[idx(*index_tensors) if callable(idx) else idx] = value
        return y

    return eager


X = _t(4, 5, 6)
XI = _t(4, 5, 6, dtype=torch.int64, seed=1)
XB = _t(4, 5, 6, dtype=torch.bool, seed=2)
IDX = torch.tensor([2, 0, 3, 3])
IDX_NEG = torch.tensor([-1, 0, -4])
IDX2 = torch.tensor([[0, 1], [3, 2]])
IDX5 = torch.tensor([4, 0, 1, 4])
MASK4 = torch.tensor([True, False, True, False])
MASK45 = _t(4, 5, dtype=torch.bool, seed=3)
MASK5 = torch.tensor([False, True, True, False, True])
I0 = torch.tensor(2)  # a 0-d graph int
I1 = torch.tensor(4)

# (id, index) for x[index] over X (4, 5, 6); tensors in the index become graph inputs.
GETITEM: list[tuple[str, Any]] = [
    ("int", 1),
    ("neg_int", -1),
    ("two_ints", (0, -2)),
    ("slice_int", (slice(None), 2)),
    ("slice", slice(1, 3)),
    ("neg_slice", slice(-3, -1)),
    ("step", slice(None, None, 2)),
    ("steps_two_dims", (slice(1, None, 2), slice(None, None, 3))),
    ("open_end", slice(None, -1)),
    ("clamped", slice(-100, 100)),
    ("empty", slice(3, 1)),
    ("mixed_slices", (slice(None), slice(1, 5, 2), slice(-4, None))),
    ("none", None),
    ("ellipsis_none", (Ellipsis, None)),
    ("none_in_middle", (slice(None), None, 1)),
    ("ellipsis_int", (Ellipsis, 0)),
    ("int_ellipsis_int", (1, Ellipsis, 2)),
    ("none_ellipsis_none", (None, Ellipsis, None)),
    ("ellipsis", Ellipsis),
    ("empty_tuple", ()),
    ("true", True),
    ("index_1d", IDX),
    ("index_neg", IDX_NEG),
    ("index_2d", IDX2),
    ("index_list", [0, 2]),
    ("index_int32", IDX.to(torch.int32)),
    ("index_dim1", (slice(None), IDX5)),
    ("index_last", (Ellipsis, IDX5)),
    ("index_after_none", (None, IDX)),
    ("two_adjacent", (IDX, IDX5)),
    ("two_adjacent_inner", (slice(None), IDX5, torch.tensor([5, 0, 1, 2]))),
    ("two_separated", (IDX, slice(None), torch.tensor([5, 0, 1, 2]))),
    ("broadcast_separated", (torch.tensor([[0], [3]]), slice(None), torch.tensor([5, 1, 0]))),
    ("broadcast_adjacent", (slice(None), torch.tensor([[0], [4]]), torch.tensor([5, 1, 0]))),
    ("int_then_index", (1, slice(None), IDX5)),
    ("index_then_slice_step", (IDX, slice(None, None, 2))),
    ("lists_three", ([0, 2, 3], [1, 3, 3], [0, 0, 2])),
    ("mask_1d", MASK4),
    ("mask_2d", MASK45),
    ("mask_full", _t(4, 5, 6, dtype=torch.bool, seed=4)),
    ("mask_dim1", (slice(None), MASK5)),
    ("mask_after_int", (0, MASK5)),
    ("mask_and_index", (MASK4, torch.tensor([1, 4]))),
    ("mask_list", [True, False, True, True]),
    ("graph_int", I0),
    ("graph_int_and_slice", (slice(None), I0)),
    ("graph_int_then_index", (I0, IDX5)),
]


def _getitem_params():
    for id_, index in GETITEM:
        marks = []
        x = xfail_for("handwritten", f"getitem-{id_}")
        if x is not None:
            marks.append(pytest.mark.xfail(reason=x.reason, strict=True))
        yield pytest.param(index, id=id_, marks=marks)


@pytest.mark.parametrize("index", list(_getitem_params()))
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_getitem(index, dtype):
    x = {torch.float32: X, torch.int64: XI, torch.bool: XB}[dtype]
    expected = x[index]
    actual = harness.run_lowering("operator.getitem", (x, index))
    assert harness.compare(expected, actual) is None


@pytest.mark.parametrize("index", [p for p in _getitem_params() if p.id in (
    "int", "neg_int", "steps_two_dims", "clamped", "none_in_middle", "int_ellipsis_int", "index_dim1", "two_separated",
    "broadcast_adjacent", "mask_2d", "mask_dim1", "mask_and_index", "graph_int", "empty",
)])
def test_getitem_symbolic_dims(index):
    expected = X[index]
    actual = harness.run_lowering("operator.getitem", (X, index), dynamic=True)
    assert harness.compare(expected, actual) is None


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("index", [(IDX, slice(None), torch.tensor([5, 0, 1, 2])), MASK45, (slice(1, None, 2), None, -1)],
                         ids=["advanced", "mask", "basic"])
def test_getitem_opsets(index, opset):
    assert harness.compare(X[index], harness.run_lowering("operator.getitem", (X, index), opset=opset)) is None


def test_getitem_nodes_are_compact():
    g = GraphBuilder(18)
    x = g.add_input("x", torch.float32, (4, 5, 6))
    g.add_output(getitem(g, x, (slice(1, None, 2), 0, None, slice(None, -1))), "y")
    ops = [n.op_type for n in g.to_model().graph.node]
    assert ops.count("Slice") == 1 and ops.count("Squeeze") == 1 and ops.count("Unsqueeze") == 1, ops


# ---------------------------------------------------------------------- setitem

V46 = _t(4, 6, seed=5)
V6 = _t(6, seed=6)

# (id, index, value); the value may be a tensor (a graph input) or a scalar.
SETITEM: list[tuple[str, Any, Any]] = [
    ("int_scalar", 0, 5.0),
    ("int_tensor", (slice(None), 1), V46),
    ("slice_broadcast", slice(1, 3), V6),
    ("steps_scalar", (slice(None, None, 2), slice(1, 4, 2)), -1.0),
    ("neg_bounds", (slice(-2, None), Ellipsis, slice(None, -3)), 7.0),
    ("ellipsis_last", (Ellipsis, 0), _t(4, 5, seed=7)),
    ("none", (None, 1), _t(5, 6, seed=8)),
    ("mask_scalar", MASK45, 0.0),
    ("mask_full_scalar", _t(4, 5, 6, dtype=torch.bool, seed=4), 3.5),
    ("mask_tensor_values", MASK4, _t(2, 5, 6, seed=9)),
    ("mask_zero_d_value", MASK45, torch.tensor(2.5)),
    ("index_tensor", IDX[:3].flip(0), _t(3, 5, 6, seed=10)),
    ("index_dim1", (slice(None), torch.tensor([4, 0])), _t(4, 2, 6, seed=11)),
    ("two_indices", (torch.tensor([0, 3]), slice(None), torch.tensor([5, 1])), 9.0),
    ("graph_int", I0, V46[:1].expand(5, 6).contiguous()),
    ("leading_ones_value", 2, _t(1, 5, 6, seed=12)),
    ("int_value_into_float", (0, 0), 3),
]


@pytest.mark.parametrize(("index", "value"), [pytest.param(i, v, id=n) for n, i, v in SETITEM])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_setitem(index, value, dtype):
    x = X if dtype == torch.float32 else XI
    if isinstance(value, torch.Tensor):
        value = value.to(dtype)
    y = x.clone()
    y[index] = value
    actual = harness.run_lowering("operator.setitem", (x, index, value))
    assert harness.compare(y, actual) is None


@pytest.mark.parametrize(("index", "value"), [pytest.param(i, v, id=n) for n, i, v in SETITEM if n in (
    "int_tensor", "steps_scalar", "mask_scalar", "mask_tensor_values", "index_dim1", "two_indices",
)])
def test_setitem_symbolic_dims(index, value):
    y = X.clone()
    y[index] = value
    actual = harness.run_lowering("operator.setitem", (X, index, value), dynamic=True)
    assert harness.compare(y, actual) is None


def test_setitem_with_a_mask_and_a_scalar_is_a_where():
    g = GraphBuilder(18)
    x = g.add_input("x", torch.float32, (4, 5))
    g.add_output(setitem(g, x, g.op("Greater", x, g.const(0.0)), 0.0), "y")
    ops = {n.op_type for n in g.to_model().graph.node}
    assert "Where" in ops and "ScatterElements" not in ops


def test_setitem_on_a_bool_tensor():
    y = XB.clone()
    y[1:3, ::2] = True
    assert harness.compare(y, harness.run_lowering("operator.setitem", (XB, (slice(1, 3), slice(None, None, 2)), True))) is None


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    x = _t(5, 3)
    idx = (torch.tensor([0, 4, 2]),)
    v = _t(3, 3, seed=1)
    expected = x.index_put(idx, v, accumulate=accumulate)
    assert harness.compare(expected, harness.run_lowering("torch.index_put", (x, idx, v, accumulate))) is None


def test_index_put_accumulates_duplicates():
    x = torch.zeros(4)
    idx = (torch.tensor([1, 1, 3, 1]),)
    v = torch.tensor([1.0, 2.0, 3.0, 4.0])
    expected = x.index_put(idx, v, accumulate=True)
    assert harness.compare(expected, harness.run_lowering("Tensor.index_put_", (x, idx, v, True))) is None


# ---------------------------------------------------------------------- ops, hand-written

# (id, registry name, args, kwargs, eager)
CASES: list[tuple[str, str, tuple, dict, Callable[..., Any]]] = [
    ("view_minus_one", "Tensor.view", (X, 2, -1), {}, lambda x, *s: x.view(*s)),
    ("view_tuple", "Tensor.view", (X, (6, 20)), {}, lambda x, s: x.view(s)),
    ("view_same_dtype", "Tensor.view", (X, torch.float32), {}, lambda x, d: x.view(d)),
    ("reshape_zero", "torch.reshape", (torch.zeros(0, 4), (2, 0, 2)), {}, torch.reshape),
    ("reshape_as", "Tensor.reshape_as", (X, _t(30, 4)), {}, lambda x, o: x.reshape_as(o)),
    ("flatten_mid", "torch.flatten", (X, 1, 2), {}, torch.flatten),
    ("flatten_scalar", "torch.flatten", (torch.tensor(3.0),), {}, torch.flatten),
    ("flatten_empty", "torch.flatten", (torch.zeros(0, 3, 2), 1), {}, torch.flatten),
    ("ravel", "Tensor.ravel", (X,), {}, torch.ravel),
    ("unflatten", "Tensor.unflatten", (X, -1, (2, -1)), {}, lambda x, d, s: x.unflatten(d, s)),
    ("permute_varargs", "Tensor.permute", (X, 2, 0, 1), {}, lambda x, *d: x.permute(*d)),
    ("transpose_neg", "Tensor.transpose", (X, -1, 0), {}, lambda x, a, b: x.transpose(a, b)),
    ("swapdims", "Tensor.swapdims", (X, 0, 1), {}, lambda x, a, b: x.swapdims(a, b)),
    ("t_1d", "Tensor.t", (V6,), {}, lambda x: x.t()),
    ("movedim_list", "torch.movedim", (X, (0, 1), (2, 0)), {}, torch.movedim),
    ("squeeze_dims", "torch.squeeze", (_t(1, 3, 1, 2), (0, 2)), {}, torch.squeeze),
    ("squeeze_not_one", "torch.squeeze", (X, 1), {}, torch.squeeze),
    ("unsqueeze_end", "Tensor.unsqueeze", (X, -1), {}, lambda x, d: x.unsqueeze(d)),
    ("unsqueeze_", "Tensor.unsqueeze_", (X, 0), {}, lambda x, d: x.clone().unsqueeze_(d)),
    ("expand_minus_one", "Tensor.expand", (_t(3, 1), 2, -1, 4), {}, lambda x, *s: x.expand(*s)),
    ("expand_as", "Tensor.expand_as", (_t(1, 6), V46), {}, lambda x, o: x.expand_as(o)),
    ("repeat_more_dims", "Tensor.repeat", (_t(2, 3), 2, 1, 3), {}, lambda x, *r: x.repeat(*r)),
    ("tile_fewer_dims", "torch.tile", (X, (2,)), {}, torch.tile),
    ("cat_promotes", "torch.cat", ([_t(2, 3), _t(1, 3, dtype=torch.int64)], 0), {}, torch.cat),
    ("cat_legacy_empty", "torch.cat", ([_t(2, 3), torch.zeros(0), _t(2, 1)], 1), {}, torch.cat),
    ("concat_neg", "torch.concat", ([X, X], -1), {}, torch.concat),
    ("stack_last", "torch.stack", ([V6, V6 * 2], -1), {}, torch.stack),
    ("split_int", "torch.split", (_t(7, 2), 3), {}, torch.split),
    ("split_sizes", "Tensor.split", (X, [1, 4], 1), {}, lambda x, s, d: x.split(s, d)),
    ("split_zero_piece", "torch.split", (X, [0, 4], 0), {}, torch.split),
    ("chunk_uneven", "torch.chunk", (_t(5, 3), 4), {}, torch.chunk),
    ("unbind_dim", "torch.unbind", (X, 1), {}, torch.unbind),
    ("narrow_neg", "torch.narrow", (X, 2, -3, 2), {}, torch.narrow),
    ("narrow_graph_start", "torch.narrow", (X, 1, torch.tensor(1), 3), {}, torch.narrow),
    ("select_neg", "torch.select", (X, 1, -2), {}, torch.select),
    ("select_graph_index", "Tensor.select", (X, 0, torch.tensor(3)), {}, lambda x, d, i: x.select(d, i)),
    ("flip_varargs", "Tensor.flip", (X, 0, 2), {}, lambda x, *d: x.flip(*d)),
    ("roll_flat", "torch.roll", (X, 7), {}, torch.roll),
    ("roll_neg_multi", "torch.roll", (X, (-2, 9), (0, 2)), {}, torch.roll),
    ("gather_smaller_index", "torch.gather", (X, 2, torch.tensor([[[0, 5]], [[1, 1]]])), {}, torch.gather),
    ("scatter_value", "Tensor.scatter", (X, 1, torch.tensor([[[0, 4, 2]]]), 7.0), {}, lambda x, d, i, v: x.scatter(d, i, v)),
    ("scatter_add", "torch.scatter_add", (torch.zeros(3, 4), 0, torch.tensor([[0, 1, 2, 0], [0, 0, 0, 0]]), torch.ones(2, 4)), {},
     torch.scatter_add),
    ("scatter_reduce_amax", "torch.scatter_reduce", (torch.zeros(3), 0, torch.tensor([0, 0, 2]), torch.tensor([5.0, -1.0, 2.0]), "amax"),
     {"include_self": False}, torch.scatter_reduce),
    ("index_select_scalar_index", "torch.index_select", (X, 1, torch.tensor(3)), {}, torch.index_select),
    ("take_along_dim_broadcast", "torch.take_along_dim", (_t(1, 5), torch.tensor([[0], [4], [2]]), 1), {}, torch.take_along_dim),
    ("take_along_dim_flat", "torch.take_along_dim", (X, torch.tensor([0, 119, 7])), {}, torch.take_along_dim),
    ("masked_select_broadcast", "torch.masked_select", (_t(3, 4), torch.tensor([True, False, True, True])), {}, torch.masked_select),
    ("topk_smallest", "torch.topk", (X, 2, 1, False), {}, torch.topk),
    ("sort_descending_stable", "torch.sort", (_t(4, 7, dtype=torch.int64), ), {"dim": 1, "descending": True, "stable": True},
     torch.sort),
    ("argsort_stable_ties", "torch.argsort", (torch.tensor([3, 1, 3, 1, 2]),), {"stable": True}, torch.argsort),
    ("nonzero_tuple", "torch.nonzero", (XI,), {"as_tuple": True}, torch.nonzero),
    ("tril_graph_diagonal", "torch.tril", (X, torch.tensor(-1)), {}, lambda x, d: torch.tril(x, int(d))),
    ("triu_int8", "torch.triu", (_t(3, 3, dtype=torch.int8), 1), {}, torch.triu),
    ("pad_constant_value", "torch.nn.functional.pad", (X, (1, 2, 0, 1)), {"value": 9.0}, F.pad),
    ("pad_constant_crop", "torch.nn.functional.pad", (X, (-1, 2)), {}, F.pad),
    ("pad_reflect", "torch.nn.functional.pad", (X, (2, 1, 1, 3), "reflect"), {}, F.pad),
    ("pad_replicate", "torch.nn.functional.pad", (X, (2, 0, 1, 1), "replicate"), {}, F.pad),
    ("pad_replicate_crop_past_end", "torch.nn.functional.pad", (X, (-6, 2), "replicate"), {}, F.pad),
    ("pad_circular", "torch.nn.functional.pad", (X, (2, 3, 1, 0), "circular"), {}, F.pad),
    ("one_hot_inferred", "torch.nn.functional.one_hot", (torch.tensor([[0, 3], [1, 1]]),), {}, F.one_hot),
    ("one_hot_classes", "torch.nn.functional.one_hot", (torch.tensor([0, 3, 1]), 6), {}, F.one_hot),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES])
def test_case(case):
    _, qualname, args, kwargs, eager = case
    expected = eager(*args, **kwargs)
    assert harness.compare(expected, harness.run_lowering(qualname, args, kwargs)) is None


_DYNAMIC = {
    "view_minus_one", "flatten_mid", "unflatten", "expand_minus_one", "repeat_more_dims", "cat_promotes", "narrow_neg",
    "narrow_graph_start", "roll_neg_multi", "gather_smaller_index", "scatter_value", "take_along_dim_broadcast",
    "masked_select_broadcast", "topk_smallest", "sort_descending_stable", "pad_reflect", "pad_replicate_crop_past_end",
    "pad_circular", "one_hot_inferred", "split_sizes",
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES if c[0] in _DYNAMIC])
def test_case_symbolic_dims(case):
    _, qualname, args, kwargs, eager = case
    expected = eager(*args, **kwargs)
    assert harness.compare(expected, harness.run_lowering(qualname, args, kwargs, dynamic=True)) is None


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES if c[0] in (
    "split_sizes", "scatter_reduce_amax", "scatter_add", "pad_reflect", "pad_circular", "topk_smallest", "tril_graph_diagonal",
    "roll_neg_multi", "one_hot_inferred",
)])
def test_case_opsets(case, opset):
    _, qualname, args, kwargs, eager = case
    expected = eager(*args, **kwargs)
    try:
        actual = harness.run_lowering(qualname, args, kwargs, opset=opset)
    except harness.Refused as e:
        assert opset < 18 and "opset 18" in str(e)
        return
    assert harness.compare(expected, actual) is None


# ---------------------------------------------------------------------- symbolic batch dim


def _run(fn: Callable[..., Any], tensors: list[torch.Tensor], symbolic: dict[int, dict[int, str]], opset: int = 18):
    """Lower ``fn(g, *inputs)`` with the named dims of ``symbolic`` ({input: {axis:
    name}}) left symbolic; the model is built for the declared shapes and run on
    ``tensors``."""
    g = GraphBuilder(opset)
    feeds, vals = {}, []
    for i, t in enumerate(tensors):
        dims: list[Any] = list(t.shape)
        for axis, name in symbolic.get(i, {}).items():
            dims[axis] = name
        vals.append(g.add_input(f"x{i}", t.dtype, tuple(dims)))
        feeds[f"x{i}"] = t.numpy()
    out = fn(g, *vals)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    names = [g.add_output(o, f"y{k}").name for k, o in enumerate(outs)]
    model = g.to_model()
    return model, [torch.from_numpy(a) for a in harness._session(model).run(names, feeds)]


def test_view_with_a_graph_batch_size_runs_for_every_batch():
    def fn(g, v):
        return view(g, v, g.size(v, 0), -1, 3)

    model, (y,) = _run(fn, [_t(3, 4, 6)], {0: {0: "batch"}})
    assert torch.equal(y, _t(3, 4, 6).view(3, -1, 3))
    for batch in (1, 5):
        x = _t(batch, 4, 6, seed=batch)
        (got,) = harness._session(model).run(None, {"x0": x.numpy()})
        assert torch.equal(torch.from_numpy(got), x.view(batch, -1, 3))


def test_slices_with_graph_int_bounds():
    x = _t(5, 7)

    def fn(g, v):
        n = g.size(v, 1)  # symbolic
        half = g.op("Div", n, g.const(2, torch.int64))
        return getitem(g, v, (slice(1, g.size(v, 0)), slice(half, None))), setitem(g, v, (slice(None), slice(None, half)), -1.0)

    _, (a, b) = _run(fn, [x], {0: {0: "n", 1: "m"}})
    expected = x.clone()
    expected[:, : 7 // 2] = -1.0
    assert torch.equal(a, x[1:5, 7 // 2 :]) and torch.equal(b, expected)


@pytest.mark.parametrize("batch", [2, 5])
def test_getitem_and_setitem_with_a_symbolic_batch(batch):
    x = _t(batch, 3, 4)

    def fn(g, v):
        last = getitem(g, v, (slice(None), -1))
        return setitem(g, v, (Ellipsis, slice(1, None, 2)), 0.0), last

    _, (y, last) = _run(fn, [x], {0: {0: "batch"}})
    expected = x.clone()
    expected[..., 1::2] = 0.0
    assert torch.equal(y, expected) and torch.equal(last, x[:, -1])


def test_flatten_and_split_keep_a_symbolic_batch():
    x = _t(3, 2, 6)

    def fn(g, v):
        a, b = split(g, flatten(g, v, 1), [4, 8], 1)
        return reshape(g, b, [g.size(v, 0), 2, 4])

    _, (y,) = _run(fn, [x], {0: {0: "batch"}})
    assert torch.equal(y, x.flatten(1).split([4, 8], 1)[1].reshape(3, 2, 4))


# ---------------------------------------------------------------------- refusals

REFUSALS: list[tuple[str, str, tuple, dict]] = [
    ("negative_step", "operator.getitem", (X, slice(None, None, -1)), {}),
    ("float_index", "operator.getitem", (X, torch.tensor([0.0, 1.0])), {}),
    ("false_index", "operator.getitem", (X, False), {}),
    ("too_many_indices", "operator.getitem", (X, (0, 0, 0, 0)), {}),
    ("two_ellipses", "operator.getitem", (X, (Ellipsis, 0, Ellipsis)), {}),
    ("int_out_of_range", "operator.getitem", (X, 4), {}),
    ("view_as_other_dtype", "Tensor.view", (X, torch.int32), {}),
    ("cat_zero_d", "torch.cat", ([torch.tensor(1.0)],), {}),
    ("permute_wrong_length", "torch.permute", (X, (0, 1)), {}),
    ("expand_wrong_size", "Tensor.expand", (_t(3, 2), 3, 4), {}),
    ("split_bad_sizes", "torch.split", (X, [1, 2]), {}),
    ("narrow_out_of_range", "torch.narrow", (X, 0, 3, 2), {}),
    ("t_3d", "torch.t", (X,), {}),
    ("scatter_reduce_mean", "torch.scatter_reduce", (X, 0, torch.zeros(1, 1, 1, dtype=torch.long), X, "mean"), {}),
    ("one_hot_float", "torch.nn.functional.one_hot", (X,), {}),
    ("pad_bad_mode", "torch.nn.functional.pad", (X, (1, 1), "wrap"), {}),
    ("pad_reflect_too_wide", "torch.nn.functional.pad", (X, (6, 0), "reflect"), {}),
]


@pytest.mark.parametrize(("qualname", "args", "kwargs"), [pytest.param(*r[1:], id=r[0]) for r in REFUSALS])
def test_refused(qualname, args, kwargs):
    with pytest.raises(harness.Refused):
        harness.run_lowering(qualname, args, kwargs)


@pytest.mark.parametrize(
    ("qualname", "args"),
    [
        pytest.param("torch.squeeze", (X, 0), id="squeeze"),
        pytest.param("torch.split", (X, 2), id="split_int"),
        pytest.param("torch.unbind", (X,), id="unbind"),
    ],
)
def test_ops_whose_arity_or_rank_depends_on_a_symbolic_dim_refuse(qualname, args):
    with pytest.raises(harness.Refused, match="static"):
        harness.run_lowering(qualname, args, dynamic=True)


def test_refusal_names_the_location():
    g = GraphBuilder(18)
    x = g.add_input("x", torch.float32, ("n", 3))
    with g.location("model.py", 12), pytest.raises(LoweringError) as info:
        squeeze(g, x, 0)
    assert info.value.path == "model.py" and info.value.line == 12 and info.value.hint


def test_every_name_is_registered_at_every_opset():
    for name in ("operator.getitem", "operator.setitem", "Tensor.view", "torch.cat", "torch.nn.functional.pad", "torch.topk"):
        assert all(lookup(name, o) is not None for o in range(17, 24))
