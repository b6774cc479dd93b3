"""``F.grid_sample`` as ONNX GridSample.

GridSample-16 takes 4-D inputs (N, C, H, W) with modes ``bilinear``/``nearest``/
``bicubic``; GridSample-20 renames them ``linear``/``nearest``/``cubic`` and adds
volumetric (5-D) inputs.  torch's ``padding_mode`` (zeros/border/reflection) and
``align_corners`` map one to one, so every 4-D call lowers from opset 17 and 5-D calls
(``bilinear`` is trilinear there; torch has no 5-D bicubic) from opset 20.  Below that a
5-D call is refused with the opset to use: a decomposition into Gathers would be a
different graph to get right, not a faithful one for free.  onnxruntime implements
GridSample-16 for float32 only, so other float dtypes need opset 20 too.
"""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import require_value
from lowering.ops.registry import register

_MODES_16 = {"bilinear": "bilinear", "nearest": "nearest", "bicubic": "bicubic"}
_MODES_20 = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
_PADDING = ("zeros", "border", "reflection")


def _grid_sample(g: GraphBuilder, input, grid, mode, padding_mode, align_corners, modes: dict[str, str]) -> Value:
    x = require_value(g, input, "grid_sample")
    gr = require_value(g, grid, "grid_sample", "grid")
    if not is_float(x.dtype):
        raise g.error(f"grid_sample: expected a floating point input, got {x.dtype} (torch raises)")
    if gr.dtype != x.dtype:
        raise g.error(f"grid_sample: expected input and grid to have the same dtype, got {x.dtype} and {gr.dtype} (torch raises)")
    if mode not in modes:
        raise g.error(f"grid_sample: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got {mode!r} (torch raises)")
    if padding_mode not in _PADDING:
        raise g.error(f"grid_sample: expected padding_mode to be 'zeros', 'border', or 'reflection', got {padding_mode!r} (torch raises)")
    rank = x.rank
    if rank not in (4, 5):
        raise g.error(f"grid_sample: expected a 4-D or 5-D input, got rank {rank} (torch raises)")
    if gr.rank != rank:
        raise g.error(f"grid_sample: grid and input must have the same rank, got {gr.rank} and {rank} (torch raises)")
    last = gr.shape[-1]
    if isinstance(last, int) and last != rank - 2:
        raise g.error(f"grid_sample: grid has to have size {rank - 2} in its last dimension, got {last} (torch raises)")
    if rank == 5 and mode == "bicubic":
        raise g.error("grid_sample: bicubic interpolation only supports 4D input (torch raises)")
    if rank == 5 and g.opset < 20:
        raise g.error(
            f"grid_sample of a 5-D (volumetric) input needs ONNX GridSample-20; opset {g.opset} has only the 4-D form",
            hint="export with opset >= 20",
        )
    if x.dtype != torch.float32 and g.opset < 20:
        raise g.error(
            f"grid_sample of a {x.dtype} input at opset {g.opset}: onnxruntime runs GridSample-16 in float32 only",
            hint="export with opset >= 20, or cast input and grid to float32",
        )
    if align_corners is None:
        align_corners = False  # torch's default (it warns when not given)
    if isinstance(align_corners, Value) or not isinstance(align_corners, bool):
        raise g.error("grid_sample: align_corners must be a Python bool known at export time")
    return g.op("GridSample", x, gr, mode=modes[mode], padding_mode=padding_mode, align_corners=int(align_corners))


@register("torch.nn.functional.grid_sample", opsets=(17, 19))
def grid_sample(g, input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """grid_sample(Tensor input, Tensor grid, str mode="bilinear", str padding_mode="zeros", bool? align_corners=None) -> Tensor
    (GridSample-16: 4-D inputs)"""
    return _grid_sample(g, input, grid, mode, padding_mode, align_corners, _MODES_16)


@register("torch.nn.functional.grid_sample", opsets=(20, 23))
def grid_sample_20(g, input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """grid_sample(Tensor input, Tensor grid, str mode="bilinear", str padding_mode="zeros", bool? align_corners=None) -> Tensor
    (GridSample-20: 4-D and 5-D inputs)"""
    return _grid_sample(g, input, grid, mode, padding_mode, align_corners, _MODES_20)
