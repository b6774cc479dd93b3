"""Hand-written cases for the ops real model code calls (issue 14): diff,
repeat_interleave, meshgrid, index_add/index_copy, masked_scatter, unfold/fold,
bucketize/searchsorted/histc/bincount/isin, cummax/cummin, cdist, grid_sample, unique,
fft, and the export-time queries -- against eager PyTorch on onnxruntime, at opsets 17,
18, 20 and 23, and again with every input dim symbolic.  The ops whose output *size* is
data (``unique``, ``repeat_interleave`` with a repeats tensor, ``masked_scatter``'s
source count, ``bincount``) are also run with symbolic dims on inputs of other sizes
than the ones they were built with, so no size seen at export time can be baked in.
Refusals are listed with the reason they must give.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F

from lowering.ops import lookup

from . import harness
from .xfails import xfail_for

torch.set_grad_enabled(False)

OPSETS = (17, 18, 20, 23)


def _t(*shape, dtype=torch.float32, seed=0, low=-3, high=3):
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return torch.rand(shape, generator=gen, dtype=torch.float64).mul(high - low).add(low).to(dtype)
    return torch.randint(low, high, shape, generator=gen, dtype=dtype)


def _inplace(method):
    def eager(x, *args, **kwargs):
        y = x.clone()
        getattr(y, method)(*args, **kwargs)
        return y

    return eager


# (id, registry name, args, kwargs, eager callable); tensors become graph inputs.
CASES: list[tuple] = [
    # diff
    ("diff_default", "torch.diff", (_t(4, 6),), {}, torch.diff),
    ("diff_n2_dim0", "torch.diff", (_t(5, 3),), {"n": 2, "dim": 0}, torch.diff),
    ("diff_prepend_append", "torch.diff", (_t(3, 4), 1, 1, _t(3, 2, seed=1), _t(3, 1, seed=2)), {}, torch.diff),
    ("diff_int_prepend_float", "Tensor.diff", (_t(6, dtype=torch.int64),), {"prepend": _t(1, seed=3)},
     lambda x, prepend: x.diff(prepend=prepend)),
    ("diff_bool", "torch.diff", (_t(7, dtype=torch.bool),), {}, torch.diff),
    ("diff_n_too_large", "torch.diff", (_t(3, 2),), {"n": 4, "dim": 0}, torch.diff),
    # repeat_interleave
    ("repeat_interleave_int", "torch.repeat_interleave", (_t(2, 3), 3), {"dim": 1}, torch.repeat_interleave),
    ("repeat_interleave_flat", "Tensor.repeat_interleave", (_t(2, 3), 2), {}, lambda x, r: x.repeat_interleave(r)),
    ("repeat_interleave_tensor", "torch.repeat_interleave", (_t(4, 3), torch.tensor([0, 2, 1, 3])), {"dim": 0},
     torch.repeat_interleave),
    ("repeat_interleave_tensor_dim1", "Tensor.repeat_interleave", (_t(2, 3, 2), torch.tensor([1, 0, 4])), {"dim": 1},
     lambda x, r, dim: x.repeat_interleave(r, dim=dim)),
    ("repeat_interleave_tensor_flat", "torch.repeat_interleave", (_t(2, 2), torch.tensor([1, 2, 0, 3])), {},
     torch.repeat_interleave),
    ("repeat_interleave_tensor_one", "torch.repeat_interleave", (_t(3, 2), torch.tensor([2])), {"dim": 0},
     torch.repeat_interleave),
    ("repeat_interleave_output_size", "torch.repeat_interleave", (_t(3, 2), torch.tensor([2, 1, 2])),
     {"dim": 0, "output_size": 5}, torch.repeat_interleave),
    ("repeat_interleave_repeats_only", "torch.repeat_interleave", (torch.tensor([2, 0, 3, 1]),), {},
     torch.repeat_interleave),
    ("repeat_interleave_int32_repeats", "torch.repeat_interleave", (_t(3), torch.tensor([1, 2, 3], dtype=torch.int32)),
     {}, torch.repeat_interleave),
    # meshgrid
    ("meshgrid_ij", "torch.meshgrid", (_t(3), _t(4, seed=1)), {"indexing": "ij"}, lambda *t, indexing: torch.meshgrid(*t, indexing=indexing)),
    ("meshgrid_xy", "torch.meshgrid", (_t(3), _t(4, seed=1), _t(2, seed=2)), {"indexing": "xy"},
     lambda *t, indexing: torch.meshgrid(*t, indexing=indexing)),
    ("meshgrid_list_xy", "torch.meshgrid", ([_t(5), _t(2, seed=1)],), {"indexing": "xy"},
     lambda t, indexing: torch.meshgrid(t, indexing=indexing)),
    # index_add / index_copy / masked_scatter
    ("index_add_dup_alpha", "torch.index_add", (_t(4, 3), 0, torch.tensor([1, 3, 1]), _t(3, 3, seed=1)),
     {"alpha": 0.5}, torch.index_add),
    ("index_add_dim1_int", "Tensor.index_add", (_t(2, 5, dtype=torch.int64), 1, torch.tensor([4, 0]),
     _t(2, 2, dtype=torch.int64, seed=1)), {"alpha": 3}, lambda x, *a, **k: x.index_add(*a, **k)),
    ("index_add_inplace", "Tensor.index_add_", (_t(3, 2, 2), -1, torch.tensor([1]), _t(3, 2, 1, seed=1)), {},
     _inplace("index_add_")),
    ("index_copy_dim1", "torch.index_copy", (_t(3, 4), 1, torch.tensor([3, 0]), _t(3, 2, seed=1)), {}, torch.index_copy),
    ("index_copy_inplace", "Tensor.index_copy_", (_t(4, 2), 0, torch.tensor([2, 1]), _t(2, 2, seed=1)), {},
     _inplace("index_copy_")),
    ("masked_scatter", "Tensor.masked_scatter", (_t(3, 4), _t(3, 4, dtype=torch.bool, seed=1), _t(12, seed=2)), {},
     lambda x, m, s: x.masked_scatter(m, s)),
    ("masked_scatter_broadcast_mask", "torch.masked_scatter", (_t(3, 4), _t(4, dtype=torch.bool, seed=1),
     _t(4, 4, seed=2)), {}, torch.masked_scatter),
    ("masked_scatter_inplace", "Tensor.masked_scatter_", (_t(2, 3, dtype=torch.int64), _t(3, dtype=torch.bool, seed=4),
     _t(7, dtype=torch.int64, seed=2)), {}, _inplace("masked_scatter_")),
    ("masked_scatter_all_false", "Tensor.masked_scatter", (_t(2, 2), torch.zeros(2, 2, dtype=torch.bool), _t(0)), {},
     lambda x, m, s: x.masked_scatter(m, s)),
    # unfold / fold
    ("unfold_windows", "Tensor.unfold", (_t(2, 9, 3), 1, 4, 2), {}, lambda x, *a: x.unfold(*a)),
    ("unfold_last", "Tensor.unfold", (_t(10), 0, 3, 3), {}, lambda x, *a: x.unfold(*a)),
    ("fold_basic", "torch.nn.functional.fold", (_t(2, 3 * 4, 12),), {"output_size": (4, 5), "kernel_size": 2},
     F.fold),
    ("fold_unbatched_stride_pad_dil", "torch.nn.functional.fold", (_t(2 * 6, 6),),
     {"output_size": (5, 6), "kernel_size": (2, 3), "dilation": (1, 2), "padding": 1, "stride": 2}, F.fold),
]


def _case_params():
    for case in CASES:
        for opset in OPSETS:
            marks = []
            x = xfail_for("handwritten", case[0])
            if x is not None:
                marks.append(pytest.mark.xfail(reason=x.reason, strict=True))
            yield pytest.param(case, opset, id=f"{case[0]}-opset{opset}", marks=marks)


@pytest.mark.parametrize(("case", "opset"), list(_case_params()))
def test_case(case, opset):
    _, qualname, args, kwargs, eager = case
    expected = eager(*args, **kwargs)
    actual = harness.run_lowering(qualname, args, kwargs, opset)
    why = harness.compare(expected, actual)
    assert why is None, why


def _has_dims(x) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_has_dims(e) for e in x)
    return isinstance(x, torch.Tensor) and x.dim() > 0


@pytest.mark.parametrize("case", [c for c in CASES if _has_dims(c[2])], ids=lambda c: c[0])
def test_case_dynamic(case):
    """The same cases with every input dim symbolic: these ops must not refuse then."""
    _, qualname, args, kwargs, eager = case
    actual = harness.run_lowering(qualname, args, kwargs, dynamic=True)
    why = harness.compare(eager(*args, **kwargs), actual)
    assert why is None, why


# ---------------------------------------------------------------------- data-dependent sizes
#
# One model built with symbolic dims, then run on several inputs of other sizes: the
# output length comes from the data each time.


def _run_many(qualname, build_args, kwargs, eager, runs):
    model, feeds, flat = harness.build_model(qualname, build_args, kwargs, dynamic=True)
    sess = harness._session(model)
    names = [i.name for i in sess.get_inputs()]
    for run_args in runs:
        tensors = [a for a in run_args if isinstance(a, torch.Tensor)]
        got = sess.run(None, {n: t.numpy() for n, t in zip(names, tensors)})
        out_names = [o.name for o in sess.get_outputs()]
        by_name = dict(zip(out_names, got))
        actual = [by_name[r] if isinstance(r, str) else r for r in flat]
        why = harness.compare(eager(*run_args, **kwargs), actual)
        assert why is None, f"{qualname} on {[tuple(t.shape) for t in tensors]}: {why}"


def test_repeat_interleave_tensor_repeats_any_length():
    runs = [
        (_t(4, 2), torch.tensor([3, 0, 1, 2])),
        (_t(1, 2, seed=1), torch.tensor([5])),
        (_t(6, 2, seed=2), torch.tensor([0, 0, 0, 1, 0, 7])),
        (_t(3, 2, seed=3), torch.tensor([0, 0, 0])),
    ]
    _run_many("torch.repeat_interleave", runs[0], {"dim": 0}, torch.repeat_interleave, runs)


def test_repeat_interleave_broadcast_one_repeat_dynamic():
    runs = [(_t(4, 2), torch.tensor([3])), (_t(2, 2, seed=1), torch.tensor([1, 4]))]
    _run_many("torch.repeat_interleave", runs[0], {"dim": 0}, torch.repeat_interleave, runs)


def test_masked_scatter_any_number_of_trues():
    eager = lambda x, m, s: x.masked_scatter(m, s)  # noqa: E731
    runs = [
        (_t(3, 4), _t(3, 4, dtype=torch.bool, seed=1), _t(12, seed=2)),
        (_t(2, 5, seed=3), torch.ones(2, 5, dtype=torch.bool), _t(10, seed=4)),
        (_t(5, 1, seed=5), torch.zeros(5, 1, dtype=torch.bool), _t(3, seed=6)),
        (_t(1, 7, seed=7), _t(1, 7, dtype=torch.bool, seed=8), _t(20, seed=9)),
    ]
    _run_many("Tensor.masked_scatter", runs[0], {}, eager, runs)


# ---------------------------------------------------------------------- refusals
#
# (id, registry name, args, kwargs, a regex the LoweringError must match): each a case
# torch rejects too, or one ONNX cannot express faithfully.

REFUSALS: list[tuple] = [
    ("diff_0d", "torch.diff", (torch.tensor(1.0),), {}, "at least one-dimensional"),
    ("diff_negative_n", "torch.diff", (_t(3),), {"n": -1}, "non-negative"),
    ("repeat_interleave_0d_dim", "torch.repeat_interleave", (torch.tensor(1.0), 2), {"dim": 0}, "0-d"),
    ("repeat_interleave_float_repeats", "torch.repeat_interleave", (_t(3), _t(3)), {}, "Long or Int"),
    ("repeat_interleave_wrong_length", "torch.repeat_interleave", (_t(3), torch.tensor([1, 2])), {}, "same size"),
    ("meshgrid_2d", "torch.meshgrid", (_t(2, 2),), {}, "0D or 1D"),
    ("meshgrid_bad_indexing", "torch.meshgrid", (_t(2),), {"indexing": "xx"}, "indexing"),
    ("index_add_dtype_mismatch", "torch.index_add", (_t(3), 0, torch.tensor([0]), _t(1, dtype=torch.int64)), {},
     "same scalar type"),
    ("index_add_float_index", "torch.index_add", (_t(3), 0, _t(1), _t(1)), {}, "int64 for index"),
    ("index_add_float_alpha_int", "torch.index_add", (_t(3, dtype=torch.int64), 0, torch.tensor([0]),
     _t(1, dtype=torch.int64)), {"alpha": 0.5}, "alpha"),
    ("masked_scatter_int_mask", "Tensor.masked_scatter", (_t(3), _t(3, dtype=torch.int64), _t(3)), {}, "boolean"),
    ("masked_scatter_inplace_grows", "Tensor.masked_scatter_", (_t(3), _t(2, 3, dtype=torch.bool), _t(6)), {},
     "broadcast to self"),
    ("unfold_too_big", "Tensor.unfold", (_t(3), 0, 4, 1), {}, "maximum size"),
    ("unfold_step_0", "Tensor.unfold", (_t(3), 0, 1, 0), {}, "step"),
    ("fold_wrong_blocks", "torch.nn.functional.fold", (_t(1, 4, 5),), {"output_size": 3, "kernel_size": 2}, "sliding blocks"),
]


@pytest.mark.parametrize(("qualname", "args", "kwargs", "match"), [pytest.param(*r[1:], id=r[0]) for r in REFUSALS])
def test_refused(qualname, args, kwargs, match):
    with pytest.raises(harness.Refused, match=match):
        harness.run_lowering(qualname, args, kwargs)
