"""Custom `torch.autograd.Function`s (issue 24): `MyFn.apply(x, ...)` lowers the Function's
`forward` from source with a `ctx` that keeps nothing for the graph: `save_for_backward`,
`mark_non_differentiable`, `mark_dirty`, attributes set for `backward` (and read back),
and `needs_input_grad` as eager gives it at inference. Each matches eager on onnxruntime
with a dynamic batch, also under a data-dependent `if` and loop."""

import torch
from torch import nn

from benchmarks.zoo import torchvision_ops
from tests.export.harness import export_and_compare

torchvision_ops.install()  # transformers' modeling code imports torchvision

from transformers.models.bloom.modeling_bloom import BloomGelu  # noqa: E402

DYNAMIC = {"x": {0: "batch"}}
INPUTS = [(torch.tensor([[1.0, 2.0, -0.7]]),), (torch.tensor([[-1.0, -2.0, 0.3], [3.0, 0.0, 0.5]]),),
          (torch.tensor([[-0.2, -0.1, -0.4], [-1.0, -2.0, -3.0], [0.5, 0.1, -4.0]]),)]


class ScaledClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, low=-1.0):
        ctx.save_for_backward(x)
        ctx.scale = scale
        y = torch.clamp(x * ctx.scale, min=low)  # an attribute forward set, read back
        mask = y > 0
        ctx.mark_non_differentiable(mask)
        ctx.set_materialize_grads(False)
        return y, mask

    @staticmethod
    def backward(ctx, grad_y, grad_mask):
        (x,) = ctx.saved_tensors
        return grad_y * ctx.scale * (x * ctx.scale > -1), None, None


class WeightedSum(torch.autograd.Function):
    """`needs_input_grad` in forward: eager gives True for a parameter (it requires grad)
    and False for the input, even under torch.no_grad()."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        out = x @ weight
        if ctx.needs_input_grad[1]:
            out = out + 1
        if ctx.needs_input_grad[0]:
            out = out * 100
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        return grad @ weight.t(), x.t() @ grad


class DoubleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class WithSymbolic(torch.autograd.Function):
    """The legacy tracer emits `symbolic`'s graph; untrace lowers forward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sigmoid() * x

    @staticmethod
    def symbolic(g, x):
        return g.op("Mul", x, g.op("Sigmoid", x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s + x * s * (1 - s))


class NewStyle(torch.autograd.Function):
    """forward without ctx, and a setup_context of its own."""

    @staticmethod
    def forward(x, k):
        return x.tanh() * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.k * (1 - x.tanh() ** 2), None


class UsesFunctions(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-1, 1, 9).reshape(3, 3))

    def forward(self, x):
        y, mask = ScaledClip.apply(x, 2.0)
        z = WeightedSum.apply(y, self.weight)
        return z * mask, WithSymbolic.apply(x), NewStyle.apply(x, 3.0), DoubleInPlace.apply(x.clone())


class FunctionsInDataRegions(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y, _ = ScaledClip.apply(x, 0.5, 0.0)
        else:
            y = WithSymbolic.apply(x)
        while y.sum() < 20:
            y = NewStyle.apply(y, 2.0) + y.abs() + 1  # grows every iteration
        return y


class Bloom(nn.Module):
    """transformers' BloomGelu: `GeLUFunction.apply(x)`, whose forward saves its input."""

    def __init__(self):
        super().__init__()
        self.act = BloomGelu()

    def forward(self, x):
        return self.act(x)


def test_function_forward_lowered_with_a_context_that_keeps_nothing():
    export_and_compare(UsesFunctions(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


def test_functions_under_a_data_dependent_if_and_loop():
    export_and_compare(FunctionsInDataRegions(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


def test_bloom_gelu_function():
    model = Bloom()
    export_and_compare(model, INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)
