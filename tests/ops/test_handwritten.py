"""Hand-written cases: the graph builder and registry contracts, ops without an OpInfo
(in-place forms, casts, ``torch.tensor``), dynamic shapes, refusals, NaN and integer
semantics, and opset-specific lowerings.  Every op case runs at opsets 17, 18, 20, 23.
"""

from __future__ import annotations

import operator
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F

from lowering.errors import GraphConstructionError, LoweringError
from lowering.graph import GraphBuilder, Value, result_type
from lowering.ops import registry
from lowering.ops import (
    ModuleCall,
    canonical_name,
    first_opset,
    lookup,
    register,
    register_lowering,
    registered_names,
    registrations,
)

from . import harness

torch.set_grad_enabled(False)

OPSETS = (17, 18, 20, 23)


def _session_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return harness._session(model).run(None, feeds)


_t = harness.sample_tensor


# ---------------------------------------------------------------------- op cases
#
# (id, registry name, args, kwargs, eager callable).  The lowering is called with the
# same arguments, tensors becoming graph inputs.


def _inplace(method: str) -> Callable[..., Any]:
    def eager(x, *args, **kwargs):
        y = x.clone()
        getattr(y, method)(*args, **kwargs)
        return y

    return eager


def _iop(op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def eager(x, y):
        z = x.clone()
        return op(z, y)

    return eager


NAN = float("nan")
_nan_t = torch.tensor([[1.0, NAN, -2.0], [0.5, 3.0, NAN], [1.0, 2.0, 3.0]])

CASES: list[tuple[str, str, tuple, dict, Callable[..., Any]]] = [
    # in place forms keep self's dtype
    ("add_", "Tensor.add_", (_t(3, 4), _t(4, seed=1)), {"alpha": 2}, _inplace("add_")),
    ("add_int_float_tensor", "Tensor.add_", (_t(3, dtype=torch.float16), _t(3, seed=1)), {}, _inplace("add_")),
    ("iadd_scalar", "operator.iadd", (_t(2, 3, dtype=torch.int64), 5), {}, _iop(operator.iadd)),
    ("imul", "operator.imul", (_t(2, 3), _t(3, seed=2)), {}, _iop(operator.imul)),
    ("itruediv", "operator.itruediv", (_t(2, 3), 4.0), {}, _iop(operator.itruediv)),
    ("ifloordiv_int", "operator.ifloordiv", (_t(2, 3, dtype=torch.int64), -2), {}, _iop(operator.ifloordiv)),
    ("imod", "operator.imod", (_t(4, dtype=torch.int64), 3), {}, _iop(operator.imod)),
    ("ipow", "operator.ipow", (_t(4, low=1), 2), {}, _iop(operator.ipow)),
    ("isub", "operator.isub", (_t(4), 1.5), {}, _iop(operator.isub)),
    ("clamp_", "Tensor.clamp_", (_t(3, 3),), {"min": -1.0, "max": 0.5}, _inplace("clamp_")),
    ("masked_fill_", "Tensor.masked_fill_", (_t(3, 3), _t(3, 3, dtype=torch.bool), -7.0), {}, _inplace("masked_fill_")),
    ("fill_", "Tensor.fill_", (_t(2, 5), 2.5), {}, _inplace("fill_")),
    ("fill_int_from_float", "Tensor.fill_", (_t(2, 5, dtype=torch.int64), 2.7), {}, _inplace("fill_")),
    ("fill_tensor", "Tensor.fill_", (_t(2, 5), torch.tensor(4.0)), {}, _inplace("fill_")),
    ("zero_", "Tensor.zero_", (_t(2, 5, dtype=torch.int64),), {}, _inplace("zero_")),
    ("copy_", "Tensor.copy_", (_t(3, 4), _t(3, 4, seed=1)), {}, _inplace("copy_")),
    ("copy_broadcast_cast", "Tensor.copy_", (_t(3, 4), _t(4, seed=1, dtype=torch.int64)), {}, _inplace("copy_")),
    ("relu_", "torch.relu_", (_t(3, 3),), {}, lambda x: torch.relu_(x.clone())),
    ("F.relu_inplace", "torch.nn.functional.relu", (_t(3, 3),), {"inplace": True}, lambda x, inplace: F.relu(x.clone(), inplace=True)),
    ("F.elu_", "torch.nn.functional.elu_", (_t(3, 3),), {}, lambda x: F.elu_(x.clone())),
    ("F.leaky_relu_", "torch.nn.functional.leaky_relu_", (_t(3, 3), 0.2), {}, lambda x, s: F.leaky_relu_(x.clone(), s)),
    ("F.hardtanh_", "torch.nn.functional.hardtanh_", (_t(3, 3),), {}, lambda x: F.hardtanh_(x.clone())),
    ("F.threshold_", "torch.nn.functional.threshold_", (_t(3, 3), 0.5, -1.0), {}, lambda x, t, v: F.threshold_(x.clone(), t, v)),
    ("nan_to_num_", "Tensor.nan_to_num_", (_nan_t,), {"nan": 9.0}, _inplace("nan_to_num_")),
    # casts and identity-like methods
    ("type_as", "Tensor.type_as", (_t(3), _t(2, dtype=torch.int64)), {}, lambda x, o: x.type_as(o)),
    ("type_name", "Tensor.type", (_t(3), "torch.DoubleTensor"), {}, lambda x, n: x.type(n)),
    ("type_query", "Tensor.type", (_t(3, dtype=torch.int64),), {}, lambda x: x.type()),
    ("to_other", "Tensor.to", (_t(3), _t(2, dtype=torch.int32)), {}, lambda x, o: x.to(o)),
    ("to_device_dtype", "Tensor.to", (_t(3),), {"device": "cpu", "dtype": torch.float64}, lambda x, **k: x.to(**k)),
    ("float_to_int_truncates", "Tensor.long", (torch.tensor([-2.7, -0.5, 0.5, 2.7]),), {}, lambda x: x.long()),
    ("float_to_bool", "Tensor.bool", (torch.tensor([0.0, -0.0, 0.1, NAN]),), {}, lambda x: x.bool()),
    ("detach", "Tensor.detach", (_t(3),), {}, lambda x: x.detach()),
    ("detach_fn", "torch.detach", (_t(3),), {}, torch.detach),
    ("detach_", "Tensor.detach_", (_t(3),), {}, lambda x: x.clone().detach_()),
    ("cuda_is_identity", "Tensor.cuda", (_t(3),), {}, lambda x: x),
    ("requires_grad_", "Tensor.requires_grad_", (_t(3),), {}, lambda x: x.clone().requires_grad_()),
    ("relu_method_", "Tensor.relu_", (_t(3, 3),), {}, lambda x: x.clone().relu_()),
    ("asarray", "torch.asarray", ([[1.5], [2.5]],), {}, torch.asarray),
    ("clone", "torch.clone", (_t(3),), {}, torch.clone),
    ("cpu", "Tensor.cpu", (_t(3),), {}, lambda x: x.cpu()),
    ("contiguous", "Tensor.contiguous", (_t(3, 2).t(),), {}, lambda x: x.contiguous()),
    ("tensor_list", "torch.tensor", ([[1, 2], [3, 4]],), {}, torch.tensor),
    ("tensor_mixed", "torch.tensor", ([1, 2.5, True],), {}, torch.tensor),
    ("tensor_dtype", "torch.tensor", (3,), {"dtype": torch.float16}, lambda d, dtype: torch.tensor(d, dtype=dtype)),
    ("as_tensor", "torch.as_tensor", ([0.5, 1.5],), {}, torch.as_tensor),
    # integer and float division semantics
    ("floordiv_neg_int", "operator.floordiv", (torch.tensor([-7, 7, -7, 7, 0]), torch.tensor([2, -2, -2, 2, 3])), {}, operator.floordiv),
    ("div_trunc_int", "torch.div", (torch.tensor([-7, 7, -7, 7]), torch.tensor([2, -2, -2, 2])), {"rounding_mode": "trunc"}, torch.div),
    ("div_floor_float", "torch.div", (torch.tensor([-7.5, 7.5, 1e-8, -0.0]), torch.tensor([2.0, -2.0, 3.0, 0.0])), {"rounding_mode": "floor"}, torch.div),
    ("truediv_ints", "operator.truediv", (torch.tensor([1, 2, 3]), 2), {}, operator.truediv),
    ("rtruediv", "operator.truediv", (2, _t(3, low=1)), {}, operator.truediv),
    ("rsub_scalar", "operator.sub", (1, _t(3)), {}, operator.sub),
    ("rpow_scalar", "operator.pow", (2.0, _t(3)), {}, operator.pow),
    ("remainder_neg", "torch.remainder", (torch.tensor([-3.5, 3.5, -3.0]), torch.tensor([2.0, -2.0, 3.0])), {}, torch.remainder),
    ("fmod_int", "torch.fmod", (torch.tensor([-7, 7]), 3), {}, torch.fmod),
    ("int_pow_negative", "torch.pow", (torch.tensor([1, -1, 2, -1, 3]), torch.tensor([-2, -3, -1, -2, 2])), {}, torch.pow),
    ("bool_sum", "torch.sum", (_t(4, 4, dtype=torch.bool),), {}, torch.sum),
    ("int32_sum_is_int64", "torch.sum", (_t(4, dtype=torch.int32),), {"dim": 0}, torch.sum),
    ("shape_int_times_float", "operator.mul", (torch.tensor(3), 2.5), {}, operator.mul),
    # NaN semantics
    ("max_nan", "torch.max", (_nan_t,), {}, torch.max),
    ("max_dim_nan", "torch.max", (_nan_t, 1), {}, torch.max),
    ("argmax_nan", "torch.argmax", (_nan_t,), {"dim": 0}, torch.argmax),
    ("amin_nan", "torch.amin", (_nan_t,), {"dim": 1}, torch.amin),
    ("maximum_nan", "torch.maximum", (_nan_t, _nan_t.t().contiguous()), {}, torch.maximum),
    ("clamp_nan", "torch.clamp", (_nan_t,), {"min": 0.0, "max": 2.0}, torch.clamp),
    ("clamp_tensor_bounds", "torch.clamp", (_t(3, 3), _t(3, seed=1), _t(3, 1, seed=2)), {}, torch.clamp),
    ("signbit_neg_zero", "torch.signbit", (torch.tensor([-0.0, 0.0, -1.0, 2.0]),), {}, torch.signbit),
    ("mean_empty", "torch.mean", (torch.zeros(0, 3),), {"dim": 0}, torch.mean),
    # named results
    ("max_namedtuple", "Tensor.max", (_t(3, 4), 1, True), {}, lambda x, d, k: x.max(d, k)),
    ("aminmax", "torch.aminmax", (_t(3, 4),), {"dim": 0}, torch.aminmax),
    # linear algebra details
    ("einsum_upper", "torch.einsum", ("bIj,bjK->bIK", _t(2, 3, 4), _t(2, 4, 5, seed=1)), {}, torch.einsum),
    ("einsum_implicit_upper", "torch.einsum", ("Ab,bc", _t(2, 3), _t(3, 4, seed=1)), {}, torch.einsum),
    ("linear_1d_weight", "torch.nn.functional.linear", (_t(2, 3), _t(3, seed=1)), {}, F.linear),
    ("linear_3d_input", "torch.nn.functional.linear", (_t(2, 5, 3), _t(4, 3, seed=1), _t(4, seed=2)), {}, F.linear),
    ("addmm_beta0_nan", "torch.addmm", (torch.full((2, 2), NAN), _t(2, 3), _t(3, 2, seed=1)), {"beta": 0}, torch.addmm),
    ("inner_nd", "torch.inner", (_t(2, 3, 4), _t(5, 4, seed=1)), {}, torch.inner),
    # activations whose form depends on the opset
    ("gelu_exact", "torch.nn.functional.gelu", (_t(4, 5),), {}, F.gelu),
    ("gelu_tanh", "torch.nn.functional.gelu", (_t(4, 5),), {"approximate": "tanh"}, F.gelu),
    ("mish", "torch.nn.functional.mish", (_t(4, 5, low=-30, high=30),), {}, F.mish),
    ("softplus_threshold", "torch.nn.functional.softplus", (_t(4, 5, low=-30, high=30),), {"beta": 2.0, "threshold": 5.0}, F.softplus),
    ("logsigmoid_large", "torch.nn.functional.logsigmoid", (torch.tensor([-100.0, -5.0, 0.0, 5.0, 100.0]),), {}, F.logsigmoid),
    ("prelu_channels", "torch.nn.functional.prelu", (_t(2, 3, 4), _t(3, seed=1)), {}, F.prelu),
    ("glu", "torch.nn.functional.glu", (_t(2, 6),), {"dim": 1}, F.glu),
    # torch.where(condition) is nonzero(as_tuple=True)
    ("where_one_arg", "torch.where", (_t(3, dtype=torch.bool),), {}, torch.where),
    ("where_one_arg_2d", "torch.where", (_t(3, 4, dtype=torch.bool),), {}, torch.where),
    # creation
    ("full_bool", "torch.full", ((2, 3), True), {}, torch.full),
    ("arange_float_step", "torch.arange", (0.0, 1.0, 0.1), {}, torch.arange),
    ("zeros_big", "torch.zeros", (64, 64), {"dtype": torch.int32}, lambda *s, dtype: torch.zeros(*s, dtype=dtype)),
    ("eye_rect", "torch.eye", (3, 5), {"dtype": torch.int64}, lambda n, m, dtype: torch.eye(n, m, dtype=dtype)),
    ("ones_like_dtype", "torch.ones_like", (_t(2, 3),), {"dtype": torch.bool}, lambda x, dtype: torch.ones_like(x, dtype=dtype)),
    ("new_ones_varargs", "Tensor.new_ones", (_t(2, dtype=torch.int32), 2, 3), {}, lambda x, *s: x.new_ones(*s)),
]


@pytest.mark.parametrize(("case", "opset"), harness.case_params(CASES, OPSETS))
def test_case(case, opset):
    harness.check_case(case, opset)


@pytest.mark.parametrize("case", [c for c in CASES if any(isinstance(a, torch.Tensor) and a.dim() for a in c[2])], ids=lambda c: c[0])
def test_case_dynamic(case):
    """The same cases with every input dim symbolic: nothing static may be assumed."""
    _, qualname, args, kwargs, eager = case
    try:
        actual = harness.run_lowering(qualname, args, kwargs, dynamic=True)
    except harness.Refused:
        return  # refusing is allowed; a wrong graph is not
    assert harness.compare(eager(*args, **kwargs), actual) is None


# ---------------------------------------------------------------------- refusals

REFUSALS = [
    ("rand", "torch.rand", (2, 3), {}),
    ("randn_like", "torch.randn_like", (_t(2),), {}),
    ("bernoulli", "Tensor.bernoulli", (_t(2),), {}),
    ("mean_of_int", "torch.mean", (_t(3, dtype=torch.int64),), {}),
    ("softmax_of_int", "torch.softmax", (_t(3, dtype=torch.int64), 0), {}),
    ("out_kwarg", "torch.add", (_t(3), _t(3)), {"out": _t(3)}),
    ("iadd_float_into_int", "operator.iadd", (_t(3, dtype=torch.int64), 0.5), {}),
    ("sub_bool", "torch.sub", (_t(3, dtype=torch.bool), _t(3, dtype=torch.bool)), {}),
    ("nuclear_norm", "torch.norm", (_t(3, 3), "nuc"), {}),
    ("rrelu_training", "torch.nn.functional.rrelu", (_t(3),), {"training": True}),
    ("matmul_mixed_dtypes", "torch.matmul", (_t(2, 2), _t(2, 2, dtype=torch.float64)), {}),
    ("einsum_sublist", "torch.einsum", (_t(2, 2), [0, 1]), {}),
    ("pow_int_negative_scalar", "torch.pow", (_t(3, dtype=torch.int64), -1), {}),
    ("glu_odd", "torch.nn.functional.glu", (_t(2, 5),), {}),
    ("clamp_no_bounds", "torch.clamp", (_t(3),), {}),
]


@pytest.mark.parametrize(("qualname", "args", "kwargs"), [pytest.param(*r[1:], id=r[0]) for r in REFUSALS])
def test_refused(qualname, args, kwargs):
    with pytest.raises(harness.Refused):
        harness.run_lowering(qualname, args, kwargs)


def test_bitwise_int_needs_opset_18():
    a, b = _t(3, dtype=torch.int64), _t(3, dtype=torch.int64, seed=1)
    with pytest.raises(harness.Refused, match="opset 18"):
        harness.run_lowering("torch.bitwise_and", (a, b), {}, opset=17)
    (got,) = harness.run_lowering("torch.bitwise_and", (a, b), {}, opset=18)
    assert np.array_equal(got, (a & b).numpy())


def test_refusal_carries_location_and_hint():
    g = GraphBuilder()
    x = g.add_input("x", torch.float32, (2,))
    with g.location("model.py", 41), pytest.raises(LoweringError) as info:
        lookup("torch.rand")(g, 2, 3)
    err = info.value
    assert (err.path, err.line) == ("model.py", 41)
    assert str(err).startswith("model.py:41: torch.rand draws random numbers")
    assert str(err).splitlines()[1] == err.hint
    del x


# ---------------------------------------------------------------------- dynamic shapes


def _build(fn, inputs: dict[str, tuple[torch.dtype, tuple]], opset: int = 18) -> onnx.ModelProto:
    g = GraphBuilder(opset)
    vals = {n: g.add_input(n, dt, shape) for n, (dt, shape) in inputs.items()}
    outs = fn(g, **vals)
    for i, o in enumerate(outs if isinstance(outs, (tuple, list)) else [outs]):
        g.add_output(o, f"out{i}")
    return g.to_model()


def test_creation_from_symbolic_sizes_runs_for_every_size():
    def fn(g, x):
        n = g.size(x, 0)
        assert isinstance(n, Value) and n.rank == 0 and g.known_dims(n) == ("batch",)
        z = lookup("torch.zeros")(g, n, 3)
        r = lookup("torch.arange")(g, n)
        f = lookup("torch.full")(g, (2, n), n)
        e = lookup("torch.eye")(g, n)
        return z, r, f, e

    model = _build(fn, {"x": (torch.float32, ("batch", 4))})
    for node in model.graph.initializer:  # no dim of x was baked in
        assert 5 not in numpy_values(node) and 7 not in numpy_values(node)
    for batch in (5, 7):
        z, r, f, e = _session_run(model, {"x": np.zeros((batch, 4), np.float32)})
        assert z.shape == (batch, 3) and z.dtype == np.float32
        assert np.array_equal(r, np.arange(batch))
        assert f.shape == (2, batch) and (f == batch).all() and f.dtype == np.int64
        assert np.array_equal(e, np.eye(batch, dtype=np.float32))


def numpy_values(init: onnx.TensorProto) -> list:
    return onnx.numpy_helper.to_array(init).reshape(-1).tolist()


def test_symbolic_dims_flow_through_shape_ops():
    g = GraphBuilder(18)
    x = g.add_input("x", torch.float32, ("batch", "seq", 8))
    shape = g.shape_tensor([g.size(x, 0), g.size(x, 1), 2, 4])
    y = g.op("Reshape", x, shape)
    assert y.shape == ("batch", "seq", 2, 4)
    z = g.op("Expand", g.const(1.0), g.shape_tensor([g.size(x, 0), 3]))
    assert z.shape == ("batch", 3)
    c = g.op("ConstantOfShape", g.shape_of(x))
    assert c.shape == ("batch", "seq", 8)
    assert g.size(x, 2) == 8 and g.size(x, -1) == 8
    assert g.numel(g.const(np.zeros((2, 3), np.float32))) == 6


def test_dynamic_softmax_and_reductions():
    def fn(g, x):
        return (
            lookup("torch.softmax")(g, x, -1),
            lookup("torch.var")(g, x, 1),
            lookup("torch.mean")(g, x, (0, 1)),
            lookup("torch.logsumexp")(g, x, 0),
        )

    model = _build(fn, {"x": (torch.float32, ("a", "b"))})
    for shape in ((2, 3), (4, 1), (1, 6)):
        x = _t(*shape)
        got = _session_run(model, {"x": x.numpy()})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # var over one element: NaN, as in the graph
            want = [torch.softmax(x, -1), torch.var(x, 1), torch.mean(x, (0, 1)), torch.logsumexp(x, 0)]
        for a, b in zip(got, want):
            assert np.allclose(a, b.numpy(), rtol=1e-4, atol=1e-5, equal_nan=True)


# ---------------------------------------------------------------------- builder contracts


def test_value_basics():
    v = Value("x", torch.float32, (2, "n", None))
    assert v.rank == 3 and v.static_shape is None
    assert Value("y", torch.int64, None).rank is None
    assert Value("z", torch.int64, (2, 3)).static_shape == (2, 3)
    with pytest.raises(TypeError):
        bool(v)
    with pytest.raises(Exception):
        v.name = "other"  # frozen


def test_constants_are_deduplicated_and_typed_like_torch():
    g = GraphBuilder()
    assert g.const(1.5) is g.const(1.5)
    assert g.const(1.5).dtype == torch.float32
    assert g.const(2).dtype == torch.int64
    assert g.const(True).dtype == torch.bool
    assert g.const([1, 2]) is not g.const([1.0, 2.0])
    assert g.const(np.arange(3, dtype=np.int32)).dtype == torch.int32
    assert g.const(torch.ones(2, dtype=torch.bfloat16)).dtype == torch.bfloat16
    assert torch.equal(g.const_value(g.const([4, 5])), torch.tensor([4, 5]))


def test_initializers_keep_names_and_deduplicate():
    g = GraphBuilder()
    w = torch.randn(3, 2)
    a = g.initializer("encoder.0.weight", w)
    assert a.name == "encoder.0.weight" and a is g.initializer("encoder.0.weight", w)
    with pytest.raises(GraphConstructionError):
        g.initializer("encoder.0.weight", torch.zeros(3, 2))
    x = g.add_input("x", torch.float32, (4, 2))
    g.add_output(lookup("torch.nn.functional.linear")(g, x, a), "y")
    model = g.to_model()
    assert [i.name for i in model.graph.initializer] == ["encoder.0.weight"]


def test_module_call_param_names_initializers():
    g = GraphBuilder()
    lin = torch.nn.Linear(3, 2)
    call = ModuleCall(lin, "encoder.0", g)
    assert call.param("weight").name == "encoder.0.weight"
    assert call.param("bias").name == "encoder.0.bias"
    assert ModuleCall(torch.nn.Linear(3, 2, bias=False), "head", g).param("bias") is None


@pytest.mark.parametrize(
    "a,b",
    [
        (torch.ones(2, dtype=torch.int32), 2.5),
        (torch.ones(2, dtype=torch.int32), 2),
        (torch.ones(2, dtype=torch.float16), 2.5),
        (torch.ones(2, dtype=torch.bool), 2),
        (torch.ones(2, dtype=torch.bool), True),
        (torch.ones(2, dtype=torch.int32), torch.tensor(2, dtype=torch.int64)),
        (torch.ones(2, dtype=torch.int32), torch.tensor(2.0, dtype=torch.float64)),
        (torch.ones(2, dtype=torch.float16), torch.ones(2, dtype=torch.float32)),
        (torch.tensor(1, dtype=torch.int64), 2.5),
        (torch.tensor(1, dtype=torch.uint8), torch.tensor(1, dtype=torch.int8)),
        (torch.ones(2, dtype=torch.uint8), -1),
    ],
)
def test_result_type_matches_torch(a, b):
    g = GraphBuilder()
    va = Value("a", a.dtype, tuple(a.shape))
    vb = Value("b", b.dtype, tuple(b.shape)) if isinstance(b, torch.Tensor) else b
    assert result_type(va, vb) == torch.result_type(a, b)
    assert result_type(vb, va) == torch.result_type(a, b)
    if not isinstance(b, torch.Tensor):
        assert g.as_value(b, va).dtype == torch.result_type(a, b)


def test_location_is_recorded_on_every_node():
    g = GraphBuilder()
    x = g.add_input("x", torch.float32, (3,))
    with g.location("net.py", 12):
        y = lookup("torch.nn.functional.gelu")(g, x)
    g.add_output(y, "y")
    model = g.to_model()
    for node in model.graph.node:
        if node.op_type != "Identity":
            assert {p.key: p.value for p in node.metadata_props} == {"source": "net.py:12"}


def test_dead_nodes_and_unused_constants_are_removed():
    g = GraphBuilder()
    x = g.add_input("x", torch.float32, (3,))
    lookup("torch.exp")(g, g.op("Add", x, g.const(7.0)))  # unused
    g.add_output(lookup("torch.relu")(g, x), "y")
    model = g.to_model()
    assert [n.op_type for n in model.graph.node] == ["Relu", "Identity"]
    assert len(model.graph.initializer) == 0


def test_ill_typed_node_is_a_construction_error_not_a_refusal():
    g = GraphBuilder()
    x = g.add_input("x", torch.float32, (3,))
    i = g.add_input("i", torch.int64, (3,))
    with pytest.raises(GraphConstructionError):
        g.op("Add", x, i)


def test_if_subgraph_reads_outer_values():
    g = GraphBuilder(18)
    x = g.add_input("x", torch.float32, ("n",))
    cond = g.op("Greater", g.reduce("ReduceSum", x, None, False), g.const(0.0))
    then_b = g.subgraph()
    then_b.add_output(then_b.op("Mul", x, g.const(2.0)))
    else_b = g.subgraph()
    else_b.add_output(x)  # an outer value passed straight through
    y = g.op("If", cond, then_branch=then_b.build_graph(), else_branch=else_b.build_graph())
    assert y.dtype == torch.float32 and y.shape == ("n",)
    g.add_output(y, "y")
    model = g.to_model()
    for arr in (np.array([1.0, 2.0], np.float32), np.array([-3.0], np.float32)):
        (got,) = _session_run(model, {"x": arr})
        assert np.allclose(got, arr * 2 if arr.sum() > 0 else arr)


def test_loop_subgraph_carries_values():
    g = GraphBuilder(18)
    n = g.add_input("n", torch.int64, ())
    x = g.add_input("x", torch.float32, (2,))
    body = g.subgraph()
    body.add_input("i", torch.int64, ())
    cond_in = body.add_input("cond", torch.bool, ())
    acc = body.add_input("acc", torch.float32, (2,))
    body.add_output(cond_in)
    body.add_output(body.op("Add", acc, x))
    out = g.op("Loop", n, None, g.const(np.zeros(2, np.float32)), body=body.build_graph())
    assert out.dtype == torch.float32 and out.shape == (2,)
    g.add_output(out, "y")
    (got,) = _session_run(g.to_model(), {"n": np.array(3), "x": np.array([1.0, 2.0], np.float32)})
    assert np.allclose(got, [3.0, 6.0])


@pytest.mark.parametrize("opset", [17, 18])
def test_reduce_axes_follow_the_opset(opset):
    g = GraphBuilder(opset)
    x = g.add_input("x", torch.float32, (2, 3))
    g.add_output(g.reduce("ReduceMean", x, [1], False), "y")
    node = next(n for n in g.to_model().graph.node if n.op_type == "ReduceMean")
    assert (len(node.input) == 2) == (opset >= 18)
    assert any(a.name == "axes" for a in node.attribute) == (opset < 18)


def test_to_model_rejects_a_different_opset():
    g = GraphBuilder(18)
    g.add_output(g.add_input("x", torch.float32, (1,)), "y")
    with pytest.raises(ValueError):
        g.to_model(17)


def test_lowering_error_renders_and_pickles():
    err = LoweringError("cannot lower", "m.py", 3, "x.item()", "use torch.where")
    assert str(err) == "m.py:3: cannot lower\nuse torch.where"
    back = pickle.loads(pickle.dumps(err))
    assert (back.message, back.path, back.line, back.construct, back.hint) == ("cannot lower", "m.py", 3, "x.item()", "use torch.where")
    assert str(LoweringError("plain")) == "plain"
    assert LoweringError("m").with_location("a.py", 9).line == 9


# ---------------------------------------------------------------------- registry contracts


def test_registry_api():
    names = registered_names()
    assert len(names) >= 150 and names == sorted(names)
    assert lookup("torch.no_such_op") is None and first_opset("torch.no_such_op") is None
    assert first_opset("torch.nn.functional.gelu") == 17
    assert lookup("torch.nn.functional.gelu", 18) is not lookup("torch.nn.functional.gelu", 20)
    assert lookup("torch.relu", 16) is None and lookup("torch.relu", 23) is not None


@pytest.mark.parametrize(("opset", "op_type"), [(18, "Erf"), (20, "Gelu")])
def test_gelu_uses_the_onnx_op_where_it_exists(opset, op_type):
    g = GraphBuilder(opset)
    g.add_output(lookup("torch.nn.functional.gelu", opset)(g, g.add_input("x", torch.float32, (3,))), "y")
    assert op_type in {n.op_type for n in g.to_model().graph.node}


def test_canonical_names():
    assert canonical_name(torch.relu) == "torch.relu"
    assert canonical_name(torch.Tensor.add) == "Tensor.add"
    assert canonical_name(F.relu) == "torch.nn.functional.relu"
    assert canonical_name(torch.nn.Linear) == "torch.nn.Linear"
    assert canonical_name(operator.add) == "operator.add"
    assert canonical_name(torch.linalg.vector_norm) == "torch.linalg.vector_norm"


def test_user_lowerings_take_precedence():
    def my_relu(g, input, inplace=False):
        return g.op("Sigmoid", input)

    class Block(torch.nn.Module):
        pass

    register_lowering("tests.custom.my_relu_wins", my_relu)
    assert lookup("tests.custom.my_relu_wins") is my_relu
    saved = list(registry._REGISTRY["torch.nn.functional.hardswish"])
    try:
        register_lowering("torch.nn.functional.hardswish", my_relu, opsets=(23, 23))
        assert lookup("torch.nn.functional.hardswish", 23) is my_relu
        assert lookup("torch.nn.functional.hardswish", 18) is not my_relu
    finally:
        registry._REGISTRY["torch.nn.functional.hardswish"] = saved

    @register_lowering(Block)
    def lower_block(g, mod, x):
        return x

    name = canonical_name(Block)
    assert lookup(name) is lower_block and registrations(name)[0].kind == "module"


def test_builtins_cannot_collide():
    with pytest.raises(ValueError, match="registered twice"):
        register("torch.relu")(lambda g, x: x)


def test_every_builtin_lowering_documents_its_schema():
    for name in registered_names():
        for reg in registrations(name):
            if not reg.user:
                assert reg.fn.__doc__ and reg.fn.__doc__.strip(), f"{name}: no schema docstring"
        if not all(r.user for r in registrations(name)):
            missing = [o for o in range(17, 24) if lookup(name, o) is None]
            assert not missing, f"{name}: no lowering at opsets {missing}"
