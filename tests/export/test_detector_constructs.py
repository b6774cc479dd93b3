"""The constructs torchvision's detectors need besides their operators, each as a small
program checked against eager PyTorch on onnxruntime on several inputs: dynamic axes of
the tensors in a list input, plain objects made in forward (`ImageList`), a module cache
reassigned to what it holds, sizes rounded with `math.ceil`, image sizes scaled by a
factor computed from dynamic sizes (in double precision, as Python computes it),
`torch.where(condition)`."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


def _images(sizes, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(3, h, w, generator=g) for h, w in sizes]


# ---------------------------------------------------------------- dynamic_shapes of list items


class SumOfImages(nn.Module):
    def forward(self, images):
        return [img.mean(0) * img.shape[1] + img.shape[2] for img in images]


def test_each_tensor_of_a_list_input_gets_its_own_dynamic_axes():
    example = _images([(4, 5), (6, 3)], 0)
    dynamic = {"images": [{1: "h0", 2: "w0"}, {1: "h1", 2: "w1"}]}
    export_and_compare(SumOfImages(), (example,), [(example,), (_images([(7, 2), (3, 9)], 1),),
                                                   (_images([(4, 5), (1, 1)], 2),)], dynamic_shapes=dynamic)
    proto = export(SumOfImages(), (example,), dynamic_shapes=dynamic)
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in proto.graph.input]
    assert dims == [[3, "h0", "w0"], [3, "h1", "w1"]]


def test_list_items_take_per_axis_lists_and_none_as_torch_export_does():
    example = _images([(4, 5), (6, 3)], 0)
    proto = export(SumOfImages(), (example,), dynamic_shapes={"images": [(None, "h", None), None]})
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in proto.graph.input]
    assert dims == [[3, "h", 5], [3, 6, 3]]


class TwoInputs(nn.Module):
    def forward(self, x, images):
        return x.sum() + images[0].sum()


@pytest.mark.parametrize("dynamic, message", [
    ({"imgs": [{1: "h"}]}, "dynamic_shapes names 'imgs', which TwoInputs.forward is not given (its arguments: x, images)"),
    ({"images": {1: "h"}}, "dynamic_shapes[images] must be a list of 1 specs, one per item of the list argument, "
                           "got {1: 'h'}"),
    ({"images": [{3: "h"}]}, "dynamic_shapes[images[0]]: axis 3 is out of range for a tensor of rank 3"),
    ({"x": [{0: "n"}]}, "dynamic_shapes[x] has 1 entries for a tensor of rank 2"),
    (({0: "n"},), "dynamic_shapes has 1 entries, but TwoInputs.forward is given 2 arguments (x, images)"),
], ids=["unknown-name", "list-needs-a-list", "axis-out-of-range", "tensor-axes", "positional-length"])
def test_a_dynamic_shapes_spec_that_does_not_fit_is_refused(dynamic, message):
    with pytest.raises(LoweringError) as info:
        export(TwoInputs(), (torch.zeros(2, 3), _images([(4, 5)], 0)), dynamic_shapes=dynamic)
    assert str(info.value) == message


# ---------------------------------------------------------------- plain objects made in forward


class Batch:
    def __init__(self, tensors, sizes):
        self.tensors = tensors
        self.image_sizes = sizes

    def scaled(self, k):
        return Batch(self.tensors * k, self.image_sizes)


class UsesBatch(nn.Module):
    def forward(self, x):
        batch = Batch(x, [(x.shape[1], x.shape[2])])
        batch.tensors = batch.tensors + 1
        other = batch.scaled(2)
        return other.tensors.sum(0) + other.image_sizes[0][0]


def test_a_plain_object_made_in_forward_holds_graph_values():
    x = torch.randn(2, 3, 4)
    export_and_compare(UsesBatch(), (x,), [(x,), (torch.randn(5, 3, 7),)], dynamic_shapes={"x": {0: "b", 2: "w"}})


class SetsAttributeInBranch(nn.Module):
    def forward(self, x):
        batch = Batch(x, [])
        if x.sum() > 0:
            batch.tensors = x * 2
        return batch.tensors


def test_setting_an_attribute_of_an_object_made_outside_a_data_dependent_branch_is_refused():
    with pytest.raises(LoweringError) as info:
        export(SetsAttributeInBranch(), (torch.randn(3),))
    line = SetsAttributeInBranch.forward.__code__.co_firstlineno + 3
    assert str(info.value) == (
        f"{__file__}:{line}: `batch.tensors` is changed inside a data-dependent branch or loop: whether eager "
        "PyTorch changes it depends on tensor data, and untrace does not carry it through the graph\n"
        "keep per-call state in local variables, or change it outside the data-dependent branch")


# ---------------------------------------------------------------- module state reassigned as it was


class Anchors(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell_anchors = [torch.tensor([[-1.0, -1.0, 1.0, 1.0]]), torch.tensor([[-2.0, -1.0, 2.0, 1.0]])]

    def forward(self, x):
        self.cell_anchors = [a.to(dtype=x.dtype) for a in self.cell_anchors]
        return torch.cat(self.cell_anchors) * x.sum()


class ChangesCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell_anchors = [torch.ones(2)]

    def forward(self, x):
        self.cell_anchors = [a * 2 for a in self.cell_anchors]
        return self.cell_anchors[0] * x


def test_a_module_attribute_reassigned_to_what_it_holds_exports():
    x = torch.randn(3)
    export_and_compare(Anchors(), (x,), [(x,), (-x,)])


def test_a_module_attribute_changed_in_forward_is_still_refused():
    with pytest.raises(LoweringError) as info:
        export(ChangesCache(), (torch.randn(2),))
    line = ChangesCache.forward.__code__.co_firstlineno + 1
    assert str(info.value) == (
        f"{__file__}:{line}: `self.cell_anchors` is read before forward assigns it: eager PyTorch reads the value the "
        "previous call left there, which an exported graph cannot keep\nkeep per-call state in local variables "
        "(pass it as an argument)")


# ---------------------------------------------------------------- sizes computed from dynamic sizes


class PadToMultiple(nn.Module):
    """GeneralizedRCNNTransform.batch_images' size: each side up to a multiple of 32."""

    def forward(self, x):
        h = int(math.ceil(float(x.shape[1]) / 32.0) * 32)
        w = math.floor(x.shape[2] / 8) * 8
        out = x.new_full([x.shape[0], h, w], 0)
        out[:, : x.shape[1], : min(w, x.shape[2])].copy_(x[:, :, :w])
        return out


def test_ceil_and_floor_of_dynamic_sizes_match_eager():
    x = torch.randn(2, 5, 17)
    export_and_compare(PadToMultiple(), (x,), [(x,), (torch.randn(2, 64, 8),), (torch.randn(2, 33, 40),)],
                       dynamic_shapes={"x": {1: "h", 2: "w"}})


class ResizeToFit(nn.Module):
    """GeneralizedRCNNTransform.resize: the scale is a Python float of the sizes, and the
    output size floor(size * scale) in double precision (a float32 product gives 128 where
    Python gives 127 for a side of 103)."""

    def forward(self, x):
        lo, hi = min(x.shape[-2:]), max(x.shape[-2:])
        scale = min(128 / lo, 160 / hi)
        y = F.interpolate(x[None], scale_factor=scale, mode="bilinear", recompute_scale_factor=True,
                          align_corners=False)[0]
        return y, y.shape[-1] * scale


def test_a_scale_factor_from_dynamic_sizes_gives_eagers_output_size():
    g = torch.Generator().manual_seed(0)
    cases = [(torch.rand(3, h, w, generator=g),) for h, w in ((103, 120), (107, 140), (150, 150), (140, 110))]
    # onnxruntime's bilinear Resize differs from torch by up to ~5e-5 at these sizes, static or not.
    export_and_compare(ResizeToFit(), cases[0], cases, dynamic_shapes={"x": {1: "h", 2: "w"}}, atol=1e-4)


class PythonFloats(nn.Module):
    def forward(self, x):
        ratio = x.shape[0] / x.shape[1]  # a Python float of sizes: a double, also when it meets a tensor
        return x * ratio, torch.arange(3) * ratio, ratio * 3 - x.shape[1]


def test_python_floats_of_sizes_are_doubles_that_meet_tensors_as_python_floats_do():
    x = torch.randn(7, 3)
    export_and_compare(PythonFloats(), (x,), [(x,), (torch.randn(5, 9),)], dynamic_shapes={"x": {0: "n", 1: "m"}})


class WhereIndices(nn.Module):
    def forward(self, scores):
        keep = torch.where(scores > 0.5)[0]
        rows, cols = torch.where(scores.reshape(-1, 2) > 0.2)
        return scores[keep], rows, cols


def test_where_with_a_condition_alone_gives_the_indices():
    g = torch.Generator().manual_seed(2)
    cases = [(torch.rand(8, generator=g),), (torch.rand(12, generator=g),), (torch.zeros(4),)]
    export_and_compare(WhereIndices(), cases[0], cases, dynamic_shapes={"scores": {0: "n"}})
