"""Idioms of the decoder models' library code (transformers' rotary embeddings and their
config validation): container methods that change nothing, exceptions Python's builtins
raise on known values caught as in eager, and the dynamic rotary embedding's cache,
which changes the module under a data-dependent branch and is refused."""

from __future__ import annotations

import re
from typing import TypedDict

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "batch", 1: "sequence"}}


def _inputs(*shapes):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(*s, generator=g),) for s in shapes]


class RopeParameters(TypedDict):
    rope_type: str
    rope_theta: float


class StandardizesItsParameters(nn.Module):
    """modeling_rope_utils' standardize_rope_params, run in forward: `setdefault` on a dict
    of the config that already holds the keys."""

    def __init__(self):
        super().__init__()
        self.rope_parameters = {"rope_type": "dynamic", "rope_theta": 3.0}

    def forward(self, x):
        self.rope_parameters.setdefault("rope_type", "default")
        self.rope_parameters.pop("type", None)
        return x * self.rope_parameters["rope_theta"]


class AddsAParameter(nn.Module):
    def __init__(self):
        super().__init__()
        self.rope_parameters = {"rope_theta": 3.0}

    def forward(self, x):
        self.rope_parameters.setdefault("rope_type", "default")
        return x * self.rope_parameters["rope_theta"]


def _matches(value, expected) -> bool:
    """huggingface_hub's union validator: each type of the union tried in turn, the
    TypeError of a failed check (isinstance of a TypedDict raises one) caught."""
    try:
        return isinstance(value, expected)
    except TypeError:
        return isinstance(value, dict)


class ValidatesItsParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.rope_parameters = {"rope_type": "default", "rope_theta": 2.0}

    def forward(self, x):
        if _matches(self.rope_parameters, RopeParameters):
            return x * self.rope_parameters["rope_theta"]
        return x


class DynamicRotaryCache(nn.Module):
    """dynamic_rope_update: the frequencies recomputed, and the module changed, when the
    positions grow past the cached length; which calls grew it is history eager keeps."""

    def __init__(self):
        super().__init__()
        self.max_seq_len_cached = 4
        self.attention_scaling = 1.0

    def forward(self, x):
        seq_len = torch.max(torch.arange(x.shape[1])) + 1
        if seq_len > self.max_seq_len_cached:
            self.attention_scaling = 2.0
        return x * self.attention_scaling


def test_setdefault_of_a_present_key_and_pop_of_an_absent_one_change_nothing():
    model = StandardizesItsParameters()
    inputs = _inputs((2, 3), (3, 5))
    export_and_compare(model, inputs[0], inputs, dynamic_shapes=DYNAMIC)
    assert model.rope_parameters == {"rope_type": "dynamic", "rope_theta": 3.0}


def test_setdefault_that_adds_a_key_to_state_is_refused():
    message = ("`.setdefault()` changes `self.rope_parameters` (a dict that outlives the call): eager "
               "PyTorch keeps the change for the next call, which an exported graph cannot\nkeep per-call state in a "
               "local variable (`items = list(self.rope_parameters)` first, then change `items`)")
    with pytest.raises(LoweringError, match=re.escape(message)):
        export(AddsAParameter(), _inputs((2, 3))[0])


def test_a_type_error_of_isinstance_is_caught_as_in_eager():
    inputs = _inputs((2, 3), (3, 5))
    got = export_and_compare(ValidatesItsParameters(), inputs[0], inputs, dynamic_shapes=DYNAMIC)
    torch.testing.assert_close(torch.from_numpy(got[0]), inputs[-1][0] * 2.0)


def test_a_type_error_of_isinstance_not_caught_is_refused():
    class Checks(nn.Module):
        def forward(self, x):
            return x if isinstance({}, RopeParameters) else -x

    message = ("`isinstance(...)` failed at export time: TypeError('TypedDict does not support instance and class "
               "checks')")
    with pytest.raises(LoweringError, match=re.escape(message)):
        export(Checks(), _inputs((2, 3))[0])


def test_a_module_change_under_a_data_dependent_branch_is_refused():
    message = ("`self.attention_scaling` (the module's state) is changed inside a data-dependent branch or loop: "
               "whether eager PyTorch changes it depends on tensor data, and untrace does not carry it through the "
               "graph\nkeep per-call state in local variables, or change it outside the data-dependent branch")
    model = DynamicRotaryCache()
    with pytest.raises(LoweringError, match=re.escape(message)):
        export(model, _inputs((2, 3))[0], dynamic_shapes=DYNAMIC)
    assert model.attention_scaling == 1.0


def _packed_sequences(position_ids):
    """masking_utils' find_packed_sequence_indices: None when every row is one sequence,
    decided on the positions' values."""
    packed = (torch.diff(position_ids, prepend=position_ids[:, :1] - 1, dim=-1) != 1).cumsum(-1)
    if (packed[:, -1] == 0).all():
        return None
    return packed


class MasksPackedSequences(nn.Module):
    def forward(self, x):
        packed = _packed_sequences(torch.arange(x.shape[1]).expand(x.shape[0], -1))
        return x if packed is None else x * (packed == 0)


def _first_row_or_none(x, keep: bool):
    if not keep:
        return None
    if x.sum() > 0:
        return x[:1]
    return -x[:1]


class KeepsTheFirstRow(nn.Module):
    def forward(self, x):
        first = _first_row_or_none(x, keep=True)
        return x if _first_row_or_none(x, keep=False) is not None else x - first


class MasksGivenPackedSequences(nn.Module):
    def forward(self, x, position_ids):
        packed = _packed_sequences(position_ids)
        return x if packed is None else x * (packed == 0)


class MasksPackedSequencesPerRow(nn.Module):
    def forward(self, x, position_ids):
        total = x.new_zeros(())
        for i in range(x.shape[0]):
            packed = _packed_sequences(position_ids[i:i + 1])
            total = total + (x[i].sum() if packed is None else (x[i] * (packed[0] == 0)).sum())
        return total


def test_a_none_returned_under_a_data_dependent_if_lowers_the_code_after_it_once_per_side():
    export_and_compare(MasksPackedSequences(), _inputs((2, 3))[0], _inputs((2, 3), (3, 5)), dynamic_shapes=DYNAMIC)
    positions = torch.arange(5).expand(2, -1)
    restarts = torch.tensor([[0, 1, 0, 1, 2], [0, 1, 2, 3, 4]])
    inputs = [(x, p) for (x,), p in zip(_inputs((2, 5), (2, 5)), (positions, restarts))]
    export_and_compare(MasksGivenPackedSequences(), inputs[0], inputs,
                       dynamic_shapes={**DYNAMIC, "position_ids": {0: "batch", 1: "sequence"}})


def test_a_none_returned_under_a_data_dependent_if_inside_a_graph_loop_is_refused():
    message = ("the function returns None or a value depending on a data-dependent `if` (an early `return None` "
               "under it): ONNX has no value that is None for some inputs only; the code after it cannot be lowered "
               f"once per side here: inside a graph loop (line {MasksPackedSequencesPerRow.forward.__code__.co_firstlineno + 2})"
               "\nreturn a tensor on every path (an empty or all-False one where None is returned), or decide the "
               "early return by a Python value")
    inputs = (_inputs((2, 5))[0][0], torch.arange(5).expand(2, -1))
    with pytest.raises(LoweringError, match=re.escape(message)):
        export(MasksPackedSequencesPerRow(), inputs, dynamic_shapes={**DYNAMIC, "position_ids": {0: "batch", 1: "sequence"}})


def test_a_none_returned_on_a_python_condition_and_data_dependent_returns_export():
    inputs = [(torch.ones(2, 3),), (-torch.ones(3, 5),), *_inputs((2, 4))]
    export_and_compare(KeepsTheFirstRow(), inputs[0], inputs, dynamic_shapes=DYNAMIC)
