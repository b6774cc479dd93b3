"""Output comparison metrics."""

import math

import numpy as np
import torch

from lowering.verification.compare import compare, flatten


def test_identical_outputs_match_with_zero_error():
    a = [np.array([1.0, -2.0, 3.0], dtype=np.float32)]
    c = compare(a, a, rtol=1e-4, atol=1e-5)
    assert c.match and c.max_abs == 0.0 and c.max_rel == 0.0 and math.isclose(c.cosine, 1.0)


def test_metrics_of_a_known_difference():
    got = [np.array([1.0, 2.0, 4.0])]
    want = [np.array([1.0, 2.0, 2.0])]
    c = compare(got, want, rtol=1e-4, atol=1e-5)
    assert not c.match
    assert c.max_abs == 2.0 and c.max_rel == 1.0
    assert math.isclose(c.cosine, (1 + 4 + 8) / (math.sqrt(21) * 3))


def test_tolerances_decide_the_match():
    got, want = [np.array([1.00005])], [np.array([1.0])]
    assert compare(got, want, rtol=1e-4, atol=0).match
    assert not compare(got, want, rtol=1e-6, atol=1e-6).match


def test_shape_and_count_disagreements():
    c = compare([np.zeros((2, 3))], [np.zeros((3, 2))], rtol=1e-4, atol=1e-5)
    assert not c.match and not c.shapes_agree and "shape" in c.error
    c = compare([np.zeros(2)], [np.zeros(2), np.zeros(1)], rtol=1e-4, atol=1e-5)
    assert not c.match and "1 outputs, eager has 2" in c.error


def test_nan_matches_nan_in_place_and_metrics_stay_json_safe():
    a = [np.array([np.nan, 1.0])]
    assert compare(a, a, rtol=1e-4, atol=1e-5).match
    c = compare([np.array([1.0, 1.0])], [np.array([np.nan, 1.0])], rtol=1e-4, atol=1e-5)
    assert not c.match and c.max_abs is None  # inf is not JSON


def test_zero_outputs_have_cosine_one_and_empty_outputs_match():
    assert compare([np.zeros(3)], [np.zeros(3)], rtol=0, atol=0).cosine == 1.0
    assert compare([np.zeros((0, 4))], [np.zeros((0, 4))], rtol=0, atol=0).match


def test_flatten_nested_outputs_in_order():
    out = (torch.ones(1), {"a": torch.zeros(2), "b": [torch.full((1,), 3.0), None]}, 5)
    leaves = flatten(out)
    assert [leaf.tolist() for leaf in leaves] == [[1.0], [0.0, 0.0], [3.0], 5]
