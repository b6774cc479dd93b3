"""The held-out export test sets are well-formed lists, checked without building a model
(their libraries are fetched by `--setup` only, and the sets are run once, by hand):
case keys are unique and found by key and by name, and the second set keeps to the rules
it was chosen by (benchmarks/README.md)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from benchmarks import export_testset, export_testset2

# Libraries the project measured before the second set was pinned (the development zoo,
# the first held-out set, the issue-23 check test set).
USED_BEFORE = {"timm", "torchvision", "transformers", "vit-pytorch", "x-transformers", "segmentation-models-pytorch",
               "efficientnet-pytorch", "ultralytics", "segment-anything", "diffusers", "monai", "kornia",
               "open-clip-torch", "speechbrain", "torch-geometric"}


@pytest.mark.parametrize("module", [export_testset, export_testset2])
def test_cases_are_found_by_key_and_by_name(module):
    keys = [c.key for c in module.CASES]
    assert len(keys) == len(set(keys))
    for case in module.CASES:
        assert export_testset.finder(module.CASES)(case.key) is case
    names = Counter(c.name for c in module.CASES)
    for case in module.CASES:
        if names[case.name] == 1:
            assert export_testset.finder(module.CASES)(case.name) is case


def test_the_second_set_keeps_to_its_rules():
    cases = export_testset2.CASES
    per_library = Counter(c.library for c in cases)
    assert len(cases) >= 40
    assert len(per_library) >= 5
    assert max(per_library.values()) <= 0.4 * len(cases)
    assert not USED_BEFORE & set(export_testset2.PINNED)
    assert all(re.fullmatch(r"\d+(\.\d+)*", v) for v in export_testset2.PINNED.values())
