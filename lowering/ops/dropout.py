"""Dropout: the ``F.*dropout*`` functions and the ``nn.*Dropout*`` modules, lowered to the
identity in eval mode (``training=False``) and refused where they would draw a random
mask (call ``model.eval()``).
"""

from __future__ import annotations

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops._nn_common import _refuse_training
from lowering.ops.registry import ModuleCall, register

# ---------------------------------------------------------------------------- dropout


def _dropout(g: GraphBuilder, name: str, input, p, training) -> Value:
    x = require_value(g, input, name)
    if not 0.0 <= float(p) <= 1.0:
        raise g.error(f"{name}: dropout probability has to be between 0 and 1, but got {p} (torch raises)")
    if training and p > 0:
        raise g.error(
            f"{name} with training=True draws a random mask",
            hint="call model.eval() before exporting (or pass training=False)",
        )
    return x


@register("torch.nn.functional.dropout")
def dropout(g, input, p=0.5, training=True, inplace=False):
    """dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout", input, p, training)


@register("torch.nn.functional.dropout1d")
def dropout1d(g, input, p=0.5, training=True, inplace=False):
    """dropout1d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout1d", input, p, training)


@register("torch.nn.functional.dropout2d")
def dropout2d(g, input, p=0.5, training=True, inplace=False):
    """dropout2d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout2d", input, p, training)


@register("torch.nn.functional.dropout3d")
def dropout3d(g, input, p=0.5, training=True, inplace=False):
    """dropout3d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout3d", input, p, training)


@register("torch.nn.functional.alpha_dropout")
def alpha_dropout(g, input, p=0.5, training=False, inplace=False):
    """alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor"""
    return _dropout(g, "alpha_dropout", input, p, training)


@register("torch.nn.functional.feature_alpha_dropout")
def feature_alpha_dropout(g, input, p=0.5, training=False, inplace=False):
    """feature_alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor"""
    return _dropout(g, "feature_alpha_dropout", input, p, training)


def _dropout_module(name: str):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        if m.training and m.p > 0:
            _refuse_training(g, mod, f"{name} draws a random mask")
        return _dropout(g, name, input, m.p, False)

    lower.__name__ = name.lower() + "_module"
    lower.__doc__ = f"{name}.forward(input) -> input in eval mode"
    return lower


for _name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
    register(f"torch.nn.{_name}")(_dropout_module(_name))
