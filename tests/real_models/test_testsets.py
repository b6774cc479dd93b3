"""The held-out export test sets are well-formed lists, checked without building a model
(their libraries are fetched by `--setup` only, and the sets are run once, by hand):
case keys are unique and found by key and by name, and the second, third and fourth sets
keep to the rules they were chosen by (benchmarks/README.md)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from benchmarks import export_testset, export_testset2, export_testset3, export_testset4

# Libraries the project measured before the second set was pinned (the development zoo,
# the first held-out set, the issue-23 check test set).
USED_BEFORE = {"timm", "torchvision", "transformers", "vit-pytorch", "x-transformers", "segmentation-models-pytorch",
               "efficientnet-pytorch", "ultralytics", "segment-anything", "diffusers", "monai", "kornia",
               "open-clip-torch", "speechbrain", "torch-geometric"}
# ... and before the third: the second set's libraries and the second issue-23 check test set.
SECOND_SET = {"spandrel", "zuko", "vector-quantize-pytorch", "fair-esm", "pytorch-crf", "perceiver-pytorch",
              "performer-pytorch", "nystrom-attention", "local-attention", "conformer", "rotary-embedding-torch",
              "mlp-mixer-pytorch", "g-mlp-pytorch", "res-mlp-pytorch"}
SECOND_CHECK_SET = {"mmdet", "mmsegmentation", "pyannote.audio", "torchgeo", "python-doctr", "espnet", "neuralforecast"}
USED_BEFORE_THIRD = USED_BEFORE | SECOND_SET | SECOND_CHECK_SET
# ... and before the fourth: the third set's libraries and the third issue-23 check test set.
THIRD_SET = {"rtdl-revisiting-models", "tab-transformer-pytorch", "pytorch-tabnet", "ncps", "pytorch-tcn",
             "egnn-pytorch", "megabyte-pytorch", "palm-pytorch", "coca-pytorch", "axial-attention", "lambda-networks",
             "halonet-pytorch", "bottleneck-transformer-pytorch", "segformer-pytorch"}
THIRD_CHECK_SET = {"asteroid", "e3nn", "lightly", "nnunetv2", "pytorch-forecasting", "pytorch-tabular", "torchaudio"}
USED_BEFORE_FOURTH = USED_BEFORE_THIRD | THIRD_SET | THIRD_CHECK_SET


def _normalized(names) -> set[str]:
    return {re.sub(r"[-_.]+", "-", n).lower() for n in names}


@pytest.mark.parametrize("module", [export_testset, export_testset2, export_testset3, export_testset4])
def test_cases_are_found_by_key_and_by_name(module):
    keys = [c.key for c in module.CASES]
    assert len(keys) == len(set(keys))
    for case in module.CASES:
        assert export_testset.finder(module.CASES)(case.key) is case
    names = Counter(c.name for c in module.CASES)
    for case in module.CASES:
        if names[case.name] == 1:
            assert export_testset.finder(module.CASES)(case.name) is case


@pytest.mark.parametrize("module, used_before", [(export_testset2, USED_BEFORE),
                                                 (export_testset3, USED_BEFORE_THIRD),
                                                 (export_testset4, USED_BEFORE_FOURTH)])
def test_the_later_sets_keep_to_their_rules(module, used_before):
    cases = module.CASES
    per_library = Counter(c.library for c in cases)
    assert len(cases) >= 40
    assert len(per_library) >= 5
    assert max(per_library.values()) <= 0.4 * len(cases)
    assert not _normalized(used_before) & _normalized(module.PINNED)
    assert all(re.fullmatch(r"\d+(\.\d+)*", v) for v in module.PINNED.values())


def test_the_third_set_measures_no_library_of_the_earlier_sets():
    """Its libraries share only helper packages (einops and the like) with the earlier
    sets' folders, never a measured library."""
    measured_before = _normalized(SECOND_SET) | _normalized({"vit-pytorch", "x-transformers",
                                                             "segmentation-models-pytorch", "efficientnet-pytorch"})
    shared = _normalized(export_testset3.PINNED) & (_normalized(export_testset.PINNED)
                                                    | _normalized(export_testset2.PINNED))
    assert not shared & measured_before
    assert shared <= {"einops", "einx", "frozendict", "loguru", "torch-einops-utils", "hyper-connections"}
    assert export_testset3.LIBS.name == ".testset3-libs"


def test_the_fourth_set_measures_no_library_of_the_earlier_sets():
    """Its libraries share only helper packages with the earlier sets' folders: einops and
    torch-einops-utils, neither measured."""
    measured_before = _normalized(SECOND_SET | THIRD_SET) | _normalized(
        {"vit-pytorch", "x-transformers", "segmentation-models-pytorch", "efficientnet-pytorch"})
    earlier = export_testset.PINNED | export_testset2.PINNED | export_testset3.PINNED
    shared = _normalized(export_testset4.PINNED) & _normalized(earlier)
    assert not _normalized(export_testset4.PINNED) & measured_before
    assert shared <= {"einops", "torch-einops-utils"}
    assert len({c.library for c in export_testset4.CASES}) >= 10
    assert export_testset4.LIBS.name == ".testset4-libs"
