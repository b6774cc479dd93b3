"""Hand-written cases for the ops of issue 24 that library code calls and the OpInfo
samples do not reach: ``tensor_split`` with index tensors, ``arange``/``linspace`` with
0-d tensor bounds (graph inputs here, so the graph computes length and values), and
``grouped_mm`` -- against eager PyTorch on onnxruntime at opsets 17, 18, 20 and 23, and
again with every input dim symbolic.  Refusals are listed with the reason they give.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from . import harness

torch.set_grad_enabled(False)

OPSETS = (17, 18, 20, 23)
_t = harness.sample_tensor


def _s(v, dtype=None):
    """A 0-d tensor: a graph input of the case."""
    return torch.tensor(v, dtype=dtype)


def _arange(*args, **kwargs):
    return torch.arange(*[a.item() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)


def _linspace(start, end, steps, **kwargs):
    steps = steps.item() if isinstance(steps, torch.Tensor) else steps
    return torch.linspace(start, end, steps, **kwargs)


def _grouped_mm(a, b, offs=None, **kwargs):
    """Eager grouped_mm with the rows past offs[-1] (uninitialised memory in eager) zeroed,
    as the lowering gives them."""
    out = F.grouped_mm(a, b, offs=offs, **kwargs)
    if offs is not None and a.dim() == 2 and b.dim() == 3:
        out[int(offs[-1]):] = 0
    return out


def _offs(*values):
    return torch.tensor(values, dtype=torch.int32)


# (id, registry name, args, kwargs, eager callable); tensors become graph inputs.
CASES: list[tuple] = [
    # tensor_split
    ("tensor_split_index_tensor", "torch.tensor_split", (_t(3, 8), torch.tensor([1, 6, 3])), {"dim": 1},
     torch.tensor_split),
    ("tensor_split_index_tensor_negative", "Tensor.tensor_split", (_t(7, 2), torch.tensor([-2, 20])), {},
     lambda x, i: x.tensor_split(i)),
    ("tensor_split_sections_uneven", "torch.tensor_split", (_t(7, 3), 3), {}, torch.tensor_split),
    ("tensor_split_more_sections_than_rows", "torch.tensor_split", (_t(2, 3), 4), {}, torch.tensor_split),
    ("tensor_split_indices_kw", "Tensor.tensor_split", (_t(5, 4),), {"indices": [1, 3], "dim": -1},
     lambda x, **k: x.tensor_split(**k)),
    # arange over 0-d tensor bounds: integer and float dtypes, as torch picks them
    ("arange_int_end", "torch.arange", (_s(7),), {}, _arange),
    ("arange_int_start_end_step", "torch.arange", (_s(-3), _s(11), _s(4)), {}, _arange),
    ("arange_negative_step", "torch.arange", (_s(5), _s(-4), _s(-3)), {}, _arange),
    ("arange_empty", "torch.arange", (_s(5), _s(5)), {}, _arange),
    ("arange_float_end", "torch.arange", (_s(4.5),), {}, _arange),
    ("arange_float_step", "torch.arange", (0, _s(3), 0.3), {}, _arange),
    ("arange_float64_bound", "torch.arange", (_s(-1.25, torch.float64), 2, 0.5), {}, _arange),
    ("arange_int32_bound", "torch.arange", (_s(9, torch.int32),), {}, _arange),
    ("arange_float_bounds_int64", "torch.arange", (_s(0.5), _s(5.5), 1.5), {"dtype": torch.int64}, _arange),
    ("arange_float_bounds_int32", "torch.arange", (_s(-5.7), 2.5, _s(1.5)), {"dtype": torch.int32}, _arange),
    ("arange_int_bounds_float64", "torch.arange", (_s(2), _s(9), 2), {"dtype": torch.float64}, _arange),
    ("arange_float16", "torch.arange", (_s(0.0), _s(2.0), 0.25), {"dtype": torch.float16}, _arange),
    # linspace over 0-d tensor bounds and a graph step count
    ("linspace_tensor_bounds", "torch.linspace", (_s(-2.0), _s(3.5), 9), {}, _linspace),
    ("linspace_int_bounds_default_dtype", "torch.linspace", (_s(0), _s(10), 6), {}, _linspace),
    ("linspace_int64", "torch.linspace", (_s(-2.7), _s(7.9), 6), {"dtype": torch.int64}, _linspace),
    ("linspace_int32_descending", "torch.linspace", (_s(3), _s(-3), 4), {"dtype": torch.int32}, _linspace),
    ("linspace_float64", "torch.linspace", (_s(0.1, torch.float64), 1.0, 7), {"dtype": torch.float64}, _linspace),
    ("linspace_one_step", "torch.linspace", (_s(-2.5), _s(4.0), 1), {}, _linspace),
    ("linspace_zero_steps", "torch.linspace", (_s(-2.5), _s(4.0), 0), {}, _linspace),
    ("linspace_graph_steps", "torch.linspace", (0.0, 1.0, _s(11)), {}, _linspace),
    ("linspace_graph_steps_one", "torch.linspace", (_s(3.0), 1.0, _s(1)), {}, _linspace),
    ("linspace_many_steps", "torch.linspace", (_s(-1.0), _s(1.0), 101), {}, _linspace),
    # grouped_mm: the four forms, empty groups, rows past offs[-1], float16
    ("grouped_mm_2d_3d", "torch.nn.functional.grouped_mm", (_t(7, 16), _t(3, 16, 8, seed=1)),
     {"offs": _offs(2, 2, 7)}, _grouped_mm),
    ("grouped_mm_2d_3d_tail", "torch._grouped_mm", (_t(7, 16), _t(3, 16, 8, seed=1), _offs(0, 3, 5)), {},
     _grouped_mm),
    ("grouped_mm_3d_2d", "torch.nn.functional.grouped_mm", (_t(3, 2, 16), _t(16, 24, seed=1)),
     {"offs": _offs(8, 8, 24)}, _grouped_mm),
    ("grouped_mm_2d_2d", "torch.nn.functional.grouped_mm", (_t(2, 32), _t(32, 8, seed=1)),
     {"offs": _offs(0, 16, 32)}, _grouped_mm),
    ("grouped_mm_3d_3d", "torch._grouped_mm", (_t(3, 4, 16), _t(3, 16, 8, seed=1)), {}, _grouped_mm),
    ("grouped_mm_float16", "torch.nn.functional.grouped_mm", (_t(6, 16, dtype=torch.float16),
     _t(2, 16, 8, dtype=torch.float16, seed=1)), {"offs": _offs(1, 6)}, _grouped_mm),
]


@pytest.mark.parametrize(("case", "opset"), harness.case_params(CASES, OPSETS))
def test_case(case, opset):
    harness.check_case(case, opset)


# Cases that need a static dim and say so when it is symbolic (id -> message).
DYNAMIC_REFUSALS = {
    "tensor_split_index_tensor": "the number of indices",
    "tensor_split_index_tensor_negative": "the number of indices",
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES])
def test_case_dynamic(case):
    """The same cases with every input dim symbolic."""
    harness.check_case_dynamic(case, DYNAMIC_REFUSALS)


REFUSALS: list[tuple] = [
    ("tensor_split_graph_sections", "torch.tensor_split", (_t(6), _s(2)), {}, "sets the number of results"),
    ("tensor_split_int32_indices", "torch.tensor_split", (_t(6), torch.tensor([1], dtype=torch.int32)), {},
     "dtype of long"),
    ("tensor_split_2d_indices", "torch.tensor_split", (_t(6), torch.tensor([[1]])), {}, "one-dimensional"),
    ("tensor_split_0d_input", "torch.tensor_split", (_s(1.0), 1), {}, "at least a 1-dimensional"),
    ("tensor_split_zero_sections", "torch.tensor_split", (_t(3), 0), {}, "larger than 0"),
    ("hsplit_uneven", "torch.hsplit", (_t(2, 3), 2), {}, "not divisible"),
    ("arange_bool_bound", "torch.arange", (_s(True),), {}, "bool tensor as a bound"),
    ("linspace_1d_bound", "torch.linspace", (_t(1), 1.0, 3), {}, "0-dimensional start and end"),
    ("linspace_negative_steps", "torch.linspace", (0.0, 1.0, -1), {}, "non-negative"),
    ("linspace_float_steps", "torch.linspace", (0.0, 1.0, _s(3.0)), {}, "steps must be an int"),
    ("grouped_mm_bias", "torch._grouped_mm", (_t(4, 16), _t(2, 16, 8), _offs(2, 4), _t(2, 8)), {}, "Bias"),
    ("grouped_mm_float64", "torch._grouped_mm", (_t(4, 16, dtype=torch.float64), _t(2, 16, 8, dtype=torch.float64),
     _offs(2, 4)), {}, "Float32, BFloat16 or Float16"),
    ("grouped_mm_mixed_dtypes", "torch._grouped_mm", (_t(4, 16), _t(2, 16, 8, dtype=torch.float16), _offs(2, 4)),
     {}, "same dtype"),
    ("grouped_mm_int64_offs", "torch._grouped_mm", (_t(4, 16), _t(2, 16, 8), torch.tensor([2, 4])), {}, "int32"),
    ("grouped_mm_offs_count", "torch._grouped_mm", (_t(4, 16), _t(2, 16, 8), _offs(4)), {}, "batch sizes"),
    ("grouped_mm_3d_3d_offs", "torch._grouped_mm", (_t(2, 4, 16), _t(2, 16, 8), _offs(2, 4)), {},
     "no offset if both"),
    ("grouped_mm_out_dtype", "torch.nn.functional.grouped_mm", (_t(4, 16), _t(2, 16, 8)),
     {"offs": _offs(2, 4), "out_dtype": torch.float16}, "must match"),
    ("grouped_mm_k_mismatch", "torch._grouped_mm", (_t(4, 16), _t(2, 8, 8), _offs(2, 4)), {}, "contraction"),
]


@pytest.mark.parametrize(("qualname", "args", "kwargs", "match"), [pytest.param(*r[1:], id=r[0]) for r in REFUSALS])
def test_refused(qualname, args, kwargs, match):
    with pytest.raises(harness.Refused, match=match):
        harness.run_lowering(qualname, args, kwargs)
