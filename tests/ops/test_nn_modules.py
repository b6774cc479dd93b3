"""``nn`` module lowerings (and the functional forms without a usable OpInfo) against
eager PyTorch on onnxruntime: modules built with seeded random weights and buffers, in
``eval()``, in several configurations each; a representative subset at opsets 17, 18
and 23 and with a symbolic batch dim; training-mode refusals for every norm and
dropout; parameter names kept as initializer names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from lowering.errors import LoweringError
from lowering.graph import GraphBuilder, Value
from lowering.ops import ModuleCall, lookup
from lowering.ops.modules import lower_module

from . import harness
from .xfails import xfail_for

torch.set_grad_enabled(False)

OPSETS = (17, 18, 23)


def _t(*shape, seed=0, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=dtype)
    return torch.randint(0, 10, shape, generator=gen, dtype=dtype)


def _init(module: nn.Module, seed: int = 0) -> nn.Module:
    """Seeded random parameters *and* buffers (running stats too), then eval()."""
    gen = torch.Generator().manual_seed(seed)
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        if t.dtype.is_floating_point:
            v = torch.randn(t.shape, generator=gen, dtype=t.dtype)
            t.copy_(v.abs() + 0.5 if name.endswith("running_var") else v)
    return module.eval()


def _flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [e for item in x for e in _flat(item)]
    return [x]


def run_module(
    module: nn.Module,
    args: tuple,
    kwargs: dict | None = None,
    *,
    opset: int = 18,
    symbolic: dict[int, dict[int, str]] | None = None,
    path: str = "m",
) -> tuple[onnx.ModelProto | None, list[Any]]:
    """Lower ``module(*args, **kwargs)`` through the registry; tensor arguments become
    graph inputs (dims named in ``symbolic`` -- {arg position: {axis: name}} -- stay
    symbolic).  Returns the model and its outputs on onnxruntime (Python values passed
    through)."""
    kwargs = kwargs or {}
    g = GraphBuilder(opset)
    feeds: dict[str, np.ndarray] = {}

    def graph_arg(pos: Any, x: Any) -> Any:
        if not isinstance(x, torch.Tensor):
            return x
        name = f"in_{len(feeds)}"
        dims: list[Any] = list(x.shape)
        for axis, sym in (symbolic or {}).get(pos, {}).items():
            dims[axis] = sym
        feeds[name] = x.numpy()
        return g.add_input(name, x.dtype, tuple(dims))

    gargs = [graph_arg(i, a) for i, a in enumerate(args)]
    gkwargs = {k: graph_arg(k, v) for k, v in kwargs.items()}
    result = lower_module(g, ModuleCall(module, path, g), *gargs, **gkwargs)
    assert result is not NotImplemented, f"{type(module).__name__} has no lowering"
    flat = _flat(result)
    names = [g.add_output(r, f"out_{i}").name if isinstance(r, Value) else None for i, r in enumerate(flat)]
    if not g.outputs:
        return None, flat
    model = g.to_model()
    got = dict(zip([o.name for o in model.graph.output], harness._session(model).run(None, feeds)))
    return model, [got[n] if n is not None else r for n, r in zip(names, flat)]


def check_module(module: nn.Module, args: tuple, kwargs: dict | None = None, **kw) -> onnx.ModelProto | None:
    expected = module(*args, **(kwargs or {}))
    model, actual = run_module(module, args, kwargs, **kw)
    why = harness.compare(expected, actual)
    assert why is None, why
    return model


# ---------------------------------------------------------------------- module cases
#
# (id, module factory, args, kwargs).  Factories build with a fixed seed.

def _mha(**kw):
    return _init(nn.MultiheadAttention(8, 2, **kw), seed=3)


_causal = torch.triu(torch.full((3, 3), float("-inf")), 1)
_am_bool = torch.tensor([[False, True, False, False, True], [False, False, True, False, False], [True, False, False, False, False]])
_kpm = torch.tensor([[False, False, False, False, True], [False, True, False, False, False]])

MODULES: list[tuple[str, Callable[[], nn.Module], tuple, dict]] = [
    # linear
    ("linear", lambda: _init(nn.Linear(4, 3)), (_t(2, 4),), {}),
    ("linear_3d_nobias", lambda: _init(nn.Linear(4, 3, bias=False)), (_t(2, 5, 4),), {}),
    ("linear_1d", lambda: _init(nn.Linear(4, 3)), (_t(4),), {}),
    ("bilinear", lambda: _init(nn.Bilinear(3, 4, 5)), (_t(2, 3), _t(2, 4, seed=1)), {}),
    ("bilinear_batched", lambda: _init(nn.Bilinear(3, 4, 2, bias=False)), (_t(2, 6, 3), _t(2, 6, 4, seed=1)), {}),
    ("identity", lambda: nn.Identity(), (_t(2, 3),), {}),
    # convolutions
    ("conv1d", lambda: _init(nn.Conv1d(4, 6, 3)), (_t(2, 4, 10),), {}),
    ("conv1d_stride_pad_dilation", lambda: _init(nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2)), (_t(2, 4, 11),), {}),
    ("conv1d_groups_same", lambda: _init(nn.Conv1d(4, 8, 4, padding="same", dilation=3, groups=2)), (_t(2, 4, 13),), {}),
    ("conv1d_valid_unbatched", lambda: _init(nn.Conv1d(4, 2, 5, padding="valid", bias=False)), (_t(4, 9),), {}),
    ("conv2d", lambda: _init(nn.Conv2d(3, 5, 3, padding=1)), (_t(2, 3, 8, 7),), {}),
    ("conv2d_tuples", lambda: _init(nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2))), (_t(1, 3, 9, 8),), {}),
    ("conv2d_depthwise", lambda: _init(nn.Conv2d(4, 4, 3, groups=4, bias=False)), (_t(2, 4, 6, 6),), {}),
    ("conv2d_same_even_kernel", lambda: _init(nn.Conv2d(2, 3, 4, padding="same")), (_t(1, 2, 7, 6),), {}),
    ("conv3d", lambda: _init(nn.Conv3d(2, 3, 3, stride=(1, 2, 2), padding=1)), (_t(1, 2, 5, 6, 7),), {}),
    # padding_mode other than zeros: F.pad in that mode, then the convolution without padding (torch's _conv_forward)
    ("conv2d_reflect", lambda: _init(nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")), (_t(2, 3, 8, 7),), {}),
    ("conv2d_replicate_strided", lambda: _init(nn.Conv2d(3, 4, 3, stride=2, padding=(2, 1), padding_mode="replicate")),
     (_t(2, 3, 9, 8),), {}),
    ("conv2d_circular_same", lambda: _init(nn.Conv2d(2, 3, 4, padding="same", dilation=2, padding_mode="circular")),
     (_t(1, 2, 9, 10),), {}),
    ("conv1d_reflect_groups", lambda: _init(nn.Conv1d(4, 4, 3, padding=2, groups=2, padding_mode="reflect")), (_t(2, 4, 9),), {}),
    ("conv3d_replicate", lambda: _init(nn.Conv3d(2, 2, 3, padding=1, padding_mode="replicate")), (_t(1, 2, 4, 5, 6),), {}),
    ("conv_transpose1d", lambda: _init(nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1)), (_t(2, 4, 6),), {}),
    ("conv_transpose1d_groups_dilation", lambda: _init(nn.ConvTranspose1d(4, 6, 3, stride=3, groups=2, dilation=4, output_padding=2, padding=1)),
     (_t(2, 4, 5),), {}),
    ("conv_transpose2d", lambda: _init(nn.ConvTranspose2d(3, 2, (3, 4), stride=(2, 3), padding=(1, 0))), (_t(2, 3, 5, 4),), {}),
    ("conv_transpose2d_output_size", lambda: _init(nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)), (_t(1, 3, 4, 4),),
     {"output_size": [8, 8]}),
    ("conv_transpose3d", lambda: _init(nn.ConvTranspose3d(2, 2, 2, stride=2)), (_t(1, 2, 3, 3, 2),), {}),
    ("unfold", lambda: nn.Unfold((2, 3), dilation=1, padding=1, stride=(2, 1)), (_t(2, 3, 5, 6),), {}),
    # norms
    ("batchnorm1d_2d", lambda: _init(nn.BatchNorm1d(4)), (_t(3, 4),), {}),
    ("batchnorm1d_3d", lambda: _init(nn.BatchNorm1d(4, eps=1e-3)), (_t(3, 4, 5),), {}),
    ("batchnorm2d", lambda: _init(nn.BatchNorm2d(3)), (_t(2, 3, 4, 5),), {}),
    ("batchnorm2d_no_affine", lambda: _init(nn.BatchNorm2d(3, affine=False)), (_t(2, 3, 4, 5),), {}),
    ("batchnorm2d_no_running_stats", lambda: _init(nn.BatchNorm2d(3, track_running_stats=False)), (_t(4, 3, 4, 5),), {}),
    ("batchnorm3d", lambda: _init(nn.BatchNorm3d(2)), (_t(2, 2, 3, 4, 2),), {}),
    ("layernorm", lambda: _init(nn.LayerNorm(6)), (_t(2, 5, 6),), {}),
    ("layernorm_two_dims", lambda: _init(nn.LayerNorm((5, 6), eps=1e-3)), (_t(2, 5, 6),), {}),
    ("layernorm_no_affine", lambda: _init(nn.LayerNorm(6, elementwise_affine=False)), (_t(3, 6),), {}),
    ("layernorm_no_bias", lambda: _init(nn.LayerNorm(6, bias=False)), (_t(3, 6),), {}),
    ("groupnorm", lambda: _init(nn.GroupNorm(2, 4)), (_t(2, 4, 3, 5),), {}),
    ("groupnorm_no_affine_1d", lambda: _init(nn.GroupNorm(3, 6, affine=False, eps=1e-3)), (_t(2, 6, 7),), {}),
    ("groupnorm_per_channel", lambda: _init(nn.GroupNorm(4, 4)), (_t(2, 4, 5),), {}),
    ("instancenorm1d", lambda: _init(nn.InstanceNorm1d(3)), (_t(2, 3, 7),), {}),
    ("instancenorm1d_affine_unbatched", lambda: _init(nn.InstanceNorm1d(3, affine=True)), (_t(3, 7),), {}),
    ("instancenorm2d_affine", lambda: _init(nn.InstanceNorm2d(4, affine=True)), (_t(2, 4, 5, 6),), {}),
    ("instancenorm2d_running_stats", lambda: _init(nn.InstanceNorm2d(4, track_running_stats=True)), (_t(2, 4, 5, 6),), {}),
    ("rmsnorm", lambda: _init(nn.RMSNorm(6)), (_t(2, 3, 6),), {}),
    ("rmsnorm_eps_no_weight", lambda: _init(nn.RMSNorm((3, 6), eps=1e-4, elementwise_affine=False)), (_t(2, 3, 6),), {}),
    ("local_response_norm", lambda: nn.LocalResponseNorm(4, alpha=0.1), (_t(2, 6, 3, 4),), {}),
    # embedding
    ("embedding", lambda: _init(nn.Embedding(10, 4)), (torch.tensor([[1, 9, 0], [3, 3, 2]]),), {}),
    ("embedding_padding_idx", lambda: _init(nn.Embedding(10, 4, padding_idx=0)), (torch.tensor([0, 5, 0]),), {}),
    ("embedding_max_norm", lambda: _init(nn.Embedding(10, 4, max_norm=1.0)), (torch.tensor([[1, 9], [1, 2]]),), {}),
    ("embedding_max_norm_p1", lambda: _init(nn.Embedding(10, 4, max_norm=2.0, norm_type=1.0)), (torch.tensor([4, 7]),), {}),
    # dropout (eval)
    ("dropout", lambda: nn.Dropout(0.3).eval(), (_t(2, 5),), {}),
    ("dropout1d", lambda: nn.Dropout1d(0.3).eval(), (_t(2, 3, 5),), {}),
    ("dropout2d", lambda: nn.Dropout2d(0.3).eval(), (_t(2, 3, 4, 5),), {}),
    ("dropout3d", lambda: nn.Dropout3d().eval(), (_t(2, 3, 2, 4, 5),), {}),
    ("alpha_dropout", lambda: nn.AlphaDropout(0.2).eval(), (_t(2, 5),), {}),
    ("dropout_p0_training", lambda: nn.Dropout(0.0).train(), (_t(2, 5),), {}),
    # pooling
    ("maxpool1d", lambda: nn.MaxPool1d(3, stride=2, padding=1), (_t(2, 3, 9),), {}),
    ("maxpool1d_ceil_dilation", lambda: nn.MaxPool1d(2, stride=2, dilation=2, ceil_mode=True), (_t(2, 3, 10),), {}),
    ("maxpool2d", lambda: nn.MaxPool2d(2), (_t(2, 3, 8, 6),), {}),
    ("maxpool2d_ceil_pad", lambda: nn.MaxPool2d((3, 2), stride=(2, 3), padding=1, ceil_mode=True), (_t(1, 2, 8, 7),), {}),
    ("maxpool2d_unbatched", lambda: nn.MaxPool2d(3, 1, 1), (_t(2, 5, 5),), {}),
    ("maxpool3d", lambda: nn.MaxPool3d(2, stride=1, dilation=(1, 2, 1)), (_t(1, 2, 4, 5, 4),), {}),
    ("avgpool1d", lambda: nn.AvgPool1d(3, stride=2), (_t(2, 3, 9),), {}),
    ("avgpool1d_pad_exclude", lambda: nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), (_t(2, 3, 8),), {}),
    ("avgpool2d_ceil", lambda: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True), (_t(1, 3, 8, 7),), {}),
    ("avgpool2d_ceil_exclude", lambda: nn.AvgPool2d(2, stride=2, ceil_mode=True, count_include_pad=False), (_t(1, 3, 5, 7),), {}),
    ("avgpool2d_divisor", lambda: nn.AvgPool2d(2, divisor_override=3), (_t(1, 3, 6, 6),), {}),
    ("avgpool3d", lambda: nn.AvgPool3d((2, 2, 1), padding=(1, 0, 0)), (_t(1, 2, 4, 4, 3),), {}),
    ("adaptive_avg1d_one", lambda: nn.AdaptiveAvgPool1d(1), (_t(2, 3, 7),), {}),
    ("adaptive_avg2d_one", lambda: nn.AdaptiveAvgPool2d((1, 1)), (_t(2, 3, 7, 5),), {}),
    ("adaptive_avg2d_divisible", lambda: nn.AdaptiveAvgPool2d((2, 3)), (_t(2, 3, 8, 9),), {}),
    ("adaptive_avg2d_none", lambda: nn.AdaptiveAvgPool2d((None, 2)), (_t(2, 3, 5, 8),), {}),
    ("adaptive_avg2d_same", lambda: nn.AdaptiveAvgPool2d(4), (_t(1, 2, 4, 4),), {}),
    ("adaptive_avg3d_one", lambda: nn.AdaptiveAvgPool3d(1), (_t(1, 2, 3, 4, 5),), {}),
    ("adaptive_max2d_one", lambda: nn.AdaptiveMaxPool2d(1), (_t(2, 3, 7, 5),), {}),
    ("adaptive_max2d_divisible", lambda: nn.AdaptiveMaxPool2d((3, 2)), (_t(2, 3, 6, 8),), {}),
    ("adaptive_max1d_unbatched", lambda: nn.AdaptiveMaxPool1d(2), (_t(3, 8),), {}),
    # resizing
    ("upsample_nearest_scale", lambda: nn.Upsample(scale_factor=2), (_t(1, 2, 3, 4),), {}),
    ("upsample_nearest_size", lambda: nn.Upsample(size=(5, 7)), (_t(1, 2, 3, 4),), {}),
    ("upsample_nearest_down", lambda: nn.Upsample(scale_factor=0.5), (_t(1, 2, 6, 8),), {}),
    ("upsample_nearest_exact", lambda: nn.Upsample(size=(5, 3), mode="nearest-exact"), (_t(1, 2, 3, 4),), {}),
    ("upsample_linear", lambda: nn.Upsample(scale_factor=3, mode="linear"), (_t(1, 2, 5),), {}),
    ("upsample_bilinear", lambda: nn.Upsample(scale_factor=2, mode="bilinear"), (_t(1, 2, 3, 4),), {}),
    ("upsample_bilinear_align", lambda: nn.Upsample(size=(7, 5), mode="bilinear", align_corners=True), (_t(1, 2, 3, 4),), {}),
    ("upsample_bilinear_down", lambda: nn.Upsample(size=(2, 3), mode="bilinear"), (_t(1, 2, 5, 7),), {}),
    ("upsample_bicubic", lambda: nn.Upsample(scale_factor=2, mode="bicubic"), (_t(1, 2, 3, 4),), {}),
    ("upsample_bicubic_align", lambda: nn.Upsample(size=(6, 5), mode="bicubic", align_corners=True), (_t(1, 2, 3, 4),), {}),
    ("upsample_trilinear", lambda: nn.Upsample(scale_factor=(2, 1.5, 2), mode="trilinear"), (_t(1, 2, 2, 4, 3),), {}),
    ("upsample_recompute", lambda: nn.Upsample(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True), (_t(1, 2, 3, 5),), {}),
    ("upsampling_nearest2d", lambda: nn.UpsamplingNearest2d(scale_factor=3), (_t(1, 2, 2, 3),), {}),
    ("upsampling_bilinear2d", lambda: nn.UpsamplingBilinear2d(size=(4, 5)), (_t(1, 2, 2, 3),), {}),
    ("pixel_shuffle", lambda: nn.PixelShuffle(2), (_t(2, 8, 3, 4),), {}),
    ("pixel_shuffle_5d", lambda: nn.PixelShuffle(3), (_t(2, 2, 9, 2, 3),), {}),
    ("pixel_unshuffle", lambda: nn.PixelUnshuffle(2), (_t(2, 3, 4, 6),), {}),
    ("pixel_unshuffle_3d", lambda: nn.PixelUnshuffle(3), (_t(2, 6, 9),), {}),
    # shape modules
    ("flatten", lambda: nn.Flatten(), (_t(2, 3, 4, 5),), {}),
    ("flatten_range", lambda: nn.Flatten(0, 1), (_t(2, 3, 4),), {}),
    ("unflatten", lambda: nn.Unflatten(1, (2, 6)), (_t(3, 12, 2),), {}),
    ("zero_pad2d", lambda: nn.ZeroPad2d((1, 2, 0, 3)), (_t(1, 2, 3, 4),), {}),
    ("constant_pad1d", lambda: nn.ConstantPad1d(2, 3.5), (_t(2, 3, 4),), {}),
    ("reflection_pad2d", lambda: nn.ReflectionPad2d((2, 1, 1, 2)), (_t(1, 2, 4, 5),), {}),
    ("replication_pad3d", lambda: nn.ReplicationPad3d(1), (_t(1, 2, 2, 3, 2),), {}),
    ("circular_pad1d", lambda: nn.CircularPad1d((2, 1)), (_t(2, 3, 4),), {}),
    # distances
    ("cosine_similarity", lambda: nn.CosineSimilarity(dim=-1), (_t(3, 5), _t(3, 5, seed=1)), {}),
    ("cosine_similarity_broadcast", lambda: nn.CosineSimilarity(dim=1), (_t(2, 1, 4), _t(1, 3, 4, seed=1)), {}),
    ("pairwise_distance", lambda: nn.PairwiseDistance(), (_t(3, 5), _t(3, 5, seed=1)), {}),
    ("pairwise_distance_p1_keepdim", lambda: nn.PairwiseDistance(p=1.0, keepdim=True), (_t(3, 5), _t(5, seed=1)), {}),
    # containers
    ("sequential", lambda: _init(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 3), nn.Tanh()))), (_t(2, 4),), {}),
    ("sequential_conv_block", lambda: _init(nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU6(),
                                                          nn.AdaptiveAvgPool2d(1), nn.Flatten())), (_t(2, 3, 6, 6),), {}),
    # attention
    ("mha_self", lambda: _mha(batch_first=True), (_t(2, 3, 8),) * 3, {}),
    ("mha_seq_first_cross", lambda: _mha(), (_t(3, 2, 8), _t(5, 2, 8, seed=1), _t(5, 2, 8, seed=2)), {}),
    ("mha_no_weights", lambda: _mha(batch_first=True), (_t(2, 3, 8), _t(2, 5, 8, seed=1), _t(2, 5, 8, seed=2)),
     {"need_weights": False}),
    ("mha_per_head_weights", lambda: _mha(batch_first=True), (_t(2, 3, 8), _t(2, 5, 8, seed=1), _t(2, 5, 8, seed=1)),
     {"average_attn_weights": False}),
    ("mha_bool_masks", lambda: _mha(batch_first=True), (_t(2, 3, 8), _t(2, 5, 8, seed=1), _t(2, 5, 8, seed=2)),
     {"attn_mask": _am_bool, "key_padding_mask": _kpm}),
    ("mha_float_masks", lambda: _mha(), (_t(3, 2, 8), _t(5, 2, 8, seed=1), _t(5, 2, 8, seed=2)),
     {"attn_mask": _t(3, 5, seed=4), "key_padding_mask": _t(2, 5, seed=5)}),
    ("mha_3d_mask", lambda: _mha(batch_first=True), (_t(2, 3, 8), _t(2, 5, 8, seed=1), _t(2, 5, 8, seed=2)),
     {"attn_mask": _t(4, 3, 5, seed=6)}),
    ("mha_causal", lambda: _mha(batch_first=True), (_t(2, 3, 8),) * 3, {"attn_mask": _causal, "is_causal": True}),
    ("mha_unbatched", lambda: _mha(), (_t(3, 8), _t(5, 8, seed=1), _t(5, 8, seed=2)), {"attn_mask": _am_bool}),
    ("mha_no_bias", lambda: _init(nn.MultiheadAttention(8, 4, bias=False, batch_first=True), seed=5), (_t(2, 3, 8),) * 3, {}),
]

ACTIVATIONS: list[tuple[str, Callable[[], nn.Module]]] = [
    ("relu", nn.ReLU), ("relu6", nn.ReLU6), ("leaky_relu", lambda: nn.LeakyReLU(0.2)), ("elu", lambda: nn.ELU(0.7)),
    ("selu", nn.SELU), ("celu", lambda: nn.CELU(1.3)), ("gelu", nn.GELU), ("gelu_tanh", lambda: nn.GELU("tanh")),
    ("silu", nn.SiLU), ("mish", nn.Mish), ("hardswish", nn.Hardswish), ("hardsigmoid", nn.Hardsigmoid),
    ("hardtanh", lambda: nn.Hardtanh(-0.5, 1.5)), ("softplus", lambda: nn.Softplus(2.0, 3.0)), ("softsign", nn.Softsign),
    ("tanh", nn.Tanh), ("sigmoid", nn.Sigmoid), ("tanhshrink", nn.Tanhshrink), ("logsigmoid", nn.LogSigmoid),
    ("prelu", lambda: _init(nn.PReLU())), ("prelu_channels", lambda: _init(nn.PReLU(3))), ("glu", lambda: nn.GLU(-1)),
    ("threshold", lambda: nn.Threshold(0.1, -2.0)), ("softmax", lambda: nn.Softmax(1)), ("log_softmax", lambda: nn.LogSoftmax(-1)),
    ("softmin", lambda: nn.Softmin(0)), ("softmax_implicit_dim", nn.Softmax), ("softmax2d", nn.Softmax2d),
    ("hardshrink", lambda: nn.Hardshrink(0.3)), ("softshrink", lambda: nn.Softshrink(0.3)), ("rrelu_eval", lambda: nn.RReLU().eval()),
]
_ACT_INPUT = _t(2, 3, 4, 2, seed=7) * 3


def _params(cases, extra=lambda c: ()):
    for c in cases:
        marks = []
        x = xfail_for("handwritten", f"nn-{c[0]}")
        if x is not None:
            marks.append(pytest.mark.xfail(reason=x.reason, strict=True))
        yield pytest.param(c, id=c[0], marks=marks)


@pytest.mark.parametrize("case", list(_params(MODULES)))
def test_module(case):
    _, make, args, kwargs = case
    check_module(make(), args, kwargs)


@pytest.mark.parametrize("case", list(_params(ACTIVATIONS)))
def test_activation_module(case):
    _, make = case
    check_module(make(), (_ACT_INPUT,))


_OPSET_SUBSET = {
    "conv2d_tuples", "conv_transpose2d", "batchnorm2d", "layernorm", "groupnorm", "instancenorm2d_affine", "embedding",
    "maxpool2d_ceil_pad", "avgpool2d_ceil", "adaptive_avg2d_divisible", "upsample_bilinear", "upsample_nearest_scale",
    "pixel_shuffle", "mha_bool_masks", "sequential_conv_block", "rmsnorm",
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", [c for c in _params(MODULES) if c.id in _OPSET_SUBSET])
def test_module_opsets(case, opset):
    _, make, args, kwargs = case
    check_module(make(), args, kwargs, opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", [c for c in _params(ACTIVATIONS) if c.id in ("gelu", "gelu_tanh", "mish", "celu", "prelu_channels")])
def test_activation_opsets(case, opset):
    _, make = case
    check_module(make(), (_ACT_INPUT,), opset=opset)


# (id, {arg position: {axis: symbol}}) -- usually the batch dim, the sequence dim too
_SYMBOLIC = {
    "linear_3d_nobias": {0: {0: "batch", 1: "seq"}},
    "conv1d_groups_same": {0: {0: "batch", 2: "len"}},
    "conv2d_tuples": {0: {0: "batch"}},
    "conv2d_reflect": {0: {0: "batch", 2: "h", 3: "w"}},
    "conv2d_replicate_strided": {0: {0: "batch", 2: "h", 3: "w"}},
    "conv2d_circular_same": {0: {0: "batch", 2: "h", 3: "w"}},
    "conv1d_reflect_groups": {0: {0: "batch", 2: "len"}},
    "conv_transpose1d_groups_dilation": {0: {0: "batch"}},
    "batchnorm2d": {0: {0: "batch"}},
    "batchnorm2d_no_running_stats": {0: {0: "batch"}},
    "layernorm_two_dims": {0: {0: "batch"}},
    "groupnorm": {0: {0: "batch", 2: "h", 3: "w"}},
    "instancenorm1d": {0: {0: "batch", 2: "len"}},
    "embedding_max_norm": {0: {0: "batch", 1: "seq"}},
    "maxpool2d_ceil_pad": {0: {0: "batch", 2: "h", 3: "w"}},
    "avgpool2d_ceil_exclude": {0: {0: "batch", 2: "h", 3: "w"}},
    "adaptive_avg2d_one": {0: {0: "batch", 2: "h", 3: "w"}},
    "upsample_nearest_scale": {0: {0: "batch", 2: "h", 3: "w"}},
    "upsample_bilinear_align": {0: {0: "batch", 2: "h", 3: "w"}},
    "pixel_shuffle": {0: {0: "batch", 2: "h", 3: "w"}},
    "pixel_unshuffle": {0: {0: "batch", 2: "h", 3: "w"}},
    "flatten": {0: {0: "batch"}},
    "unflatten": {0: {0: "batch"}},
    "sequential_conv_block": {0: {0: "batch"}},
    "local_response_norm": {0: {0: "batch", 2: "h"}},
    "unfold": {0: {0: "batch", 2: "h", 3: "w"}},
    "mha_self": {0: {0: "batch", 1: "seq"}, 1: {0: "batch", 1: "seq"}, 2: {0: "batch", 1: "seq"}},
    "mha_bool_masks": {0: {0: "batch"}, 1: {0: "batch"}, 2: {0: "batch"}, "key_padding_mask": {0: "batch"}},
    "mha_seq_first_cross": {0: {1: "batch", 0: "tgt"}, 1: {1: "batch", 0: "src"}, 2: {1: "batch", 0: "src"}},
}


@pytest.mark.parametrize("case", [c for c in _params(MODULES) if c.id in _SYMBOLIC])
def test_module_symbolic_dims(case):
    name, make, args, kwargs = case
    check_module(make(), args, kwargs, symbolic=_SYMBOLIC[name])


def test_parameters_keep_their_paths():
    block = _init(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.Flatten(), nn.Linear(64, 2))))
    model = check_module(block, (_t(1, 3, 6, 6),), path="encoder")
    names = {i.name for i in model.graph.initializer}
    assert {"encoder.0.weight", "encoder.0.bias", "encoder.1.running_mean", "encoder.1.running_var", "encoder.2.1.weight"} <= names


def test_mha_parameter_names():
    model = check_module(_mha(batch_first=True), (_t(1, 2, 8),) * 3, path="attn")
    names = {i.name for i in model.graph.initializer}
    assert {"attn.in_proj_weight", "attn.in_proj_bias", "attn.out_proj.weight", "attn.out_proj.bias"} <= names


def _ops(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node if n.op_type != "Identity"]


def test_global_pool_and_single_ops():
    assert _ops(check_module(nn.AdaptiveAvgPool2d(1), (_t(2, 3, 5, 5),))) == ["GlobalAveragePool"]
    assert _ops(check_module(_init(nn.LayerNorm(6)), (_t(2, 6),))) == ["LayerNormalization"]
    assert _ops(check_module(nn.PixelShuffle(2), (_t(1, 8, 2, 2),))) == ["DepthToSpace"]
    assert _ops(check_module(_init(nn.BatchNorm2d(3)), (_t(1, 3, 2, 2),))) == ["BatchNormalization"]


# ---------------------------------------------------------------------- functional forms


def _sdpa_case(name, q, k, v, **kw):
    return (name, "torch.nn.functional.scaled_dot_product_attention", (q, k, v), kw, F.scaled_dot_product_attention)


_Q, _K, _V = _t(2, 2, 3, 4), _t(2, 2, 5, 4, seed=1), _t(2, 2, 5, 6, seed=2)
_sdpa_mask = torch.ones(3, 5, dtype=torch.bool)
_sdpa_mask[1] = False  # a fully masked row: torch gives zeros there

FUNCTIONAL: list[tuple[str, str, tuple, dict, Callable[..., Any]]] = [
    _sdpa_case("sdpa", _Q, _K, _V),
    _sdpa_case("sdpa_bool_mask", _Q, _K, _V, attn_mask=_sdpa_mask),
    _sdpa_case("sdpa_float_mask", _Q, _K, _V, attn_mask=_t(2, 1, 3, 5, seed=3)),
    _sdpa_case("sdpa_causal", _Q, _K, _V, is_causal=True),
    _sdpa_case("sdpa_scale", _Q, _K, _V, scale=0.3),
    _sdpa_case("sdpa_3d", _t(3, 4, 8), _t(3, 6, 8, seed=1), _t(3, 6, 8, seed=2), attn_mask=_t(4, 6, seed=3) > 0),
    ("F_embedding", "torch.nn.functional.embedding", (torch.tensor([[0, 2], [4, 4]]), _t(5, 3)), {}, F.embedding),
    ("F_embedding_max_norm", "torch.nn.functional.embedding", (torch.tensor([1, 3]), _t(5, 3)), {"max_norm": 0.5, "norm_type": 3.0},
     F.embedding),
    ("F_dropout_eval", "torch.nn.functional.dropout", (_t(3, 4),), {"training": False}, F.dropout),
    ("F_batch_norm_batch_stats", "torch.nn.functional.batch_norm", (_t(4, 3, 5), None, None, _t(3, seed=1), _t(3, seed=2)),
     {"training": True}, F.batch_norm),
    ("F_instance_norm_no_affine", "torch.nn.functional.instance_norm", (_t(2, 3, 4, 5),), {}, F.instance_norm),
    ("F_group_norm", "torch.nn.functional.group_norm", (_t(2, 6, 4), 3), {}, F.group_norm),
    ("F_layer_norm_weight_only", "torch.nn.functional.layer_norm", (_t(2, 4, 5), (5,), _t(5, seed=1)), {}, F.layer_norm),
    ("F_interpolate_nearest_size_int", "torch.nn.functional.interpolate", (_t(1, 2, 5),), {"size": 8}, F.interpolate),
    ("F_interpolate_area", "torch.nn.functional.interpolate", (_t(1, 2, 6, 8),), {"size": (3, 4), "mode": "area"}, F.interpolate),
    *[(f"F_interpolate_antialias_{mode}_{tag}", "torch.nn.functional.interpolate", (_t(1, 2, 14, 16),),
       {**how, "mode": mode, "antialias": True}, F.interpolate)
      for mode in ("bilinear", "bicubic")
      for tag, how in [("down", {"size": (5, 11)}), ("up", {"size": (20, 31)}), ("mixed", {"size": (7, 21)}),
                       ("scale_down", {"scale_factor": 0.25}), ("scale_up", {"scale_factor": (1.5, 2.0)})]],
    ("F_adaptive_max_pool3d", "torch.nn.functional.adaptive_max_pool3d", (_t(1, 2, 4, 4, 6), (2, 1, 3)), {}, F.adaptive_max_pool3d),
    ("F_avg_pool1d_ceil", "torch.nn.functional.avg_pool1d", (_t(2, 3, 8), 3, 2, 1, True), {}, F.avg_pool1d),
    ("F_unfold_dilation", "torch.nn.functional.unfold", (_t(1, 2, 6, 6), 2), {"dilation": 2, "padding": 1}, F.unfold),
    ("F_pixel_unshuffle_int", "torch.nn.functional.pixel_unshuffle", (_t(1, 2, 4, 4, dtype=torch.int64), 2), {}, F.pixel_unshuffle),
    ("F_pixel_shuffle_bool", "torch.nn.functional.pixel_shuffle", (_t(1, 4, 2, 3, dtype=torch.bool), 2), {}, F.pixel_shuffle),
    ("F_cosine_similarity_eps", "torch.nn.functional.cosine_similarity", (torch.zeros(2, 3), _t(2, 3)), {}, F.cosine_similarity),
    ("F_pairwise_distance_inf", "torch.nn.functional.pairwise_distance", (_t(4, 3), _t(4, 3, seed=1)), {"p": float("inf")},
     F.pairwise_distance),
    ("F_conv_transpose2d_output_padding", "torch.nn.functional.conv_transpose2d", (_t(1, 2, 3, 3), _t(2, 3, 3, 3, seed=1)),
     {"stride": 2, "output_padding": 1}, F.conv_transpose2d),
    ("F_local_response_norm_3d", "torch.nn.functional.local_response_norm", (_t(2, 5, 7), 3), {}, F.local_response_norm),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in FUNCTIONAL])
def test_functional(case):
    _, qualname, args, kwargs, eager = case
    expected = eager(*args, **kwargs)
    assert harness.compare(expected, harness.run_lowering(qualname, args, kwargs)) is None


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in FUNCTIONAL if c[0] in (
    "sdpa_bool_mask", "sdpa_causal", "sdpa_3d", "F_group_norm", "F_instance_norm_no_affine", "F_embedding",
)])
def test_functional_symbolic_dims(case):
    _, qualname, args, kwargs, eager = case
    expected = eager(*args, **kwargs)
    assert harness.compare(expected, harness.run_lowering(qualname, args, kwargs, dynamic=True)) is None


@pytest.mark.parametrize("opset", OPSETS)
def test_sdpa_opsets(opset):
    expected = F.scaled_dot_product_attention(_Q, _K, _V, attn_mask=_sdpa_mask)
    actual = harness.run_lowering("torch.nn.functional.scaled_dot_product_attention", (_Q, _K, _V), {"attn_mask": _sdpa_mask}, opset=opset)
    assert harness.compare(expected, actual) is None


# ---------------------------------------------------------------------- refusals


def _training(m: nn.Module) -> nn.Module:
    return _init(m).train()


TRAINING_REFUSALS: list[tuple[str, Callable[[], nn.Module], tuple]] = [
    ("batchnorm1d", lambda: _training(nn.BatchNorm1d(3)), (_t(4, 3),)),
    ("batchnorm2d", lambda: _training(nn.BatchNorm2d(3)), (_t(2, 3, 4, 4),)),
    ("batchnorm3d", lambda: _training(nn.BatchNorm3d(3)), (_t(2, 3, 2, 2, 2),)),
    ("instancenorm2d_running_stats", lambda: _training(nn.InstanceNorm2d(3, track_running_stats=True)), (_t(2, 3, 4, 4),)),
    ("dropout", lambda: nn.Dropout(0.5).train(), (_t(2, 3),)),
    ("dropout1d", lambda: nn.Dropout1d(0.5).train(), (_t(2, 3, 4),)),
    ("dropout2d", lambda: nn.Dropout2d(0.5).train(), (_t(2, 3, 4, 4),)),
    ("dropout3d", lambda: nn.Dropout3d(0.5).train(), (_t(2, 3, 2, 2, 2),)),
    ("alpha_dropout", lambda: nn.AlphaDropout(0.5).train(), (_t(2, 3),)),
    ("rrelu", lambda: nn.RReLU().train(), (_t(2, 3),)),
    ("mha_dropout", lambda: _mha(dropout=0.1, batch_first=True).train(), (_t(1, 2, 8),) * 3),
]


@pytest.mark.parametrize(("make", "args"), [pytest.param(m, a, id=n) for n, m, a in TRAINING_REFUSALS])
def test_training_mode_is_refused(make, args):
    with pytest.raises(LoweringError, match="training") as info:
        run_module(make(), args)
    assert "eval()" in (info.value.hint or "")


def test_instance_norm_without_running_stats_is_the_same_in_training():
    check_module(_training(nn.InstanceNorm1d(3, affine=True)), (_t(2, 3, 5),))


MODULE_REFUSALS: list[tuple[str, Callable[[], nn.Module], tuple, dict, str]] = [
    # torch raises: reflect padding must be less than the size, circular wraps around once at most
    ("conv_reflect_padding_too_wide", lambda: _init(nn.Conv2d(2, 2, 5, padding=4, padding_mode="reflect")), (_t(1, 2, 4, 4),), {},
     "less than the dimension size"),
    ("conv_circular_padding_too_wide", lambda: _init(nn.Conv1d(2, 2, 7, padding=5, padding_mode="circular")), (_t(1, 2, 3),), {},
     "more than once"),
    ("maxpool_indices", lambda: nn.MaxPool2d(2, return_indices=True), (_t(1, 2, 4, 4),), {}, "return_indices"),
    ("adaptive_uneven", lambda: nn.AdaptiveAvgPool2d((3, 3)), (_t(1, 2, 8, 8),), {}, "varying size"),
    ("adaptive_max_indices", lambda: nn.AdaptiveMaxPool2d(1, return_indices=True), (_t(1, 2, 4, 4),), {}, "return_indices"),
    ("mha_kdim", lambda: _init(nn.MultiheadAttention(8, 2, kdim=4, vdim=4)), (_t(3, 1, 8), _t(5, 1, 4), _t(5, 1, 4)), {}, "kdim"),
    ("mha_bias_kv", lambda: _init(nn.MultiheadAttention(8, 2, add_bias_kv=True)), (_t(3, 1, 8),) * 3, {}, "add_bias_kv"),
    ("upsample_inexact_scale", lambda: nn.Upsample(scale_factor=0.7, mode="bilinear"), (_t(1, 2, 10, 10),), {}, "float32"),
    ("upsample_unchanged_size", lambda: nn.Upsample(scale_factor=1.1), (_t(1, 2, 5, 5),), {}, "unchanged"),
    ("batchnorm_wrong_rank", lambda: _init(nn.BatchNorm2d(3)), (_t(3, 4, 4),), {}, "4D"),
]


@pytest.mark.parametrize(("make", "args", "kwargs", "match"), [pytest.param(*r[1:], id=r[0]) for r in MODULE_REFUSALS])
def test_module_refused(make, args, kwargs, match):
    with pytest.raises(LoweringError, match=match):
        run_module(make(), args, kwargs)


def test_symbolic_spatial_dims_refuse_adaptive_pool_to_other_sizes():
    with pytest.raises(LoweringError, match="varying size"):
        run_module(nn.AdaptiveAvgPool2d(2), (_t(1, 2, 4, 4),), symbolic={0: {2: "h"}})


def test_symbolic_dims_refuse_inexact_scale_factors():
    with pytest.raises(LoweringError, match="float32"):
        run_module(nn.Upsample(scale_factor=0.7), (_t(1, 2, 10, 10),), symbolic={0: {2: "h"}})


FUNCTIONAL_REFUSALS: list[tuple[str, str, tuple, dict]] = [
    ("dropout_training", "torch.nn.functional.dropout", (_t(2, 3),), {}),
    ("batch_norm_updates_stats", "torch.nn.functional.batch_norm", (_t(2, 3), torch.zeros(3), torch.ones(3)), {"training": True}),
    ("sdpa_dropout", "torch.nn.functional.scaled_dot_product_attention", (_Q, _K, _V), {"dropout_p": 0.1}),
    ("sdpa_gqa", "torch.nn.functional.scaled_dot_product_attention", (_Q, _K, _V), {"enable_gqa": True}),
    ("conv_int", "torch.nn.functional.conv1d", (_t(1, 2, 5, dtype=torch.int64), _t(2, 2, 3, dtype=torch.int64)), {}),
    ("conv_same_strided", "torch.nn.functional.conv1d", (_t(1, 2, 5), _t(2, 2, 3)), {"stride": 2, "padding": "same"}),
    ("interpolate_antialias_align_corners", "torch.nn.functional.interpolate", (_t(1, 2, 4, 4),),
     {"size": 2, "mode": "bilinear", "antialias": True, "align_corners": True}),
    ("avg_pool_divisor_ceil", "torch.nn.functional.avg_pool2d", (_t(1, 2, 5, 5), 2), {"ceil_mode": True, "divisor_override": 2}),
]


@pytest.mark.parametrize(("qualname", "args", "kwargs"), [pytest.param(*r[1:], id=r[0]) for r in FUNCTIONAL_REFUSALS])
def test_functional_refused(qualname, args, kwargs):
    with pytest.raises(harness.Refused):
        harness.run_lowering(qualname, args, kwargs)


# ---------------------------------------------------------------------- dispatch


class _UserBlock(nn.Module):
    def forward(self, x):
        return x * 2


def test_lower_module_returns_not_implemented_for_unregistered_classes():
    g = GraphBuilder(18)
    x = g.add_input("x", torch.float32, (2, 3))
    assert lower_module(g, ModuleCall(_UserBlock(), "blk", g), x) is NotImplemented


def test_sequential_with_an_unregistered_child_names_it():
    seq = nn.Sequential(nn.ReLU(), _UserBlock())
    with pytest.raises(LoweringError, match="_UserBlock") as info:
        run_module(seq, (_t(2, 3),), path="body")
    assert "body.1" in str(info.value)


def test_every_module_class_in_the_cases_is_registered_at_every_opset():
    classes = {type(make()) for _, make, _, _ in MODULES} | {type(make()) for _, make in ACTIVATIONS}
    for cls in classes:
        for opset in range(17, 24):
            assert lookup(f"torch.nn.{cls.__name__}", opset) is not None, (cls, opset)
