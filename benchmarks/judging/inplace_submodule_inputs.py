"""Evidence for judged UT301 findings: an in-place write into the forward input of a module
that is only ever a submodule, traced as part of the whole model.

    python benchmarks/judging/inplace_submodule_inputs.py

Two families of sites:

- the wav2vec2 family's encoders (`hidden_states[~expand_attention_mask] = 0` in
  `WavLMEncoder.forward` and its copies), whose `hidden_states` is the model's feature
  projection output;
- timm's inplace activations (`x.sigmoid_()`, `x.tanh_()` in `layers/activations.py`),
  built by the blocks' `create_act_layer(act_layer, inplace=True)` and fed a BN output.

and, as neighbours, tiny callers of timm's `Sigmoid(inplace=True)` that read the tensor
they handed it again, hand it a view of a tensor they read again, or hand it their own
forward input.

Each tiny random-weight model (eval mode) is exported whole with
`torch.onnx.export(dynamo=False)` (batch and length/size dynamic) from one example, then
run on onnxruntime against eager PyTorch on other inputs (other batch, other lengths,
other padding, other values). Printed per model: the number of elements the in-place
write changes on the example (so the write is not a no-op), the largest difference
between onnxruntime and eager per input, and whether eager left the caller's input
tensors unchanged.
"""

from __future__ import annotations

import io
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.zoo import torchvision_ops

torchvision_ops.install()

import numpy as np
import onnxruntime
import timm
import torch
import transformers

TOLERANCE = 1e-4
SPEECH = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
              conv_dim=(8, 8), conv_stride=(2, 2), conv_kernel=(3, 3), num_conv_pos_embeddings=4,
              num_conv_pos_embedding_groups=2, attn_implementation="eager")
SPEECH_MODELS = {
    "WavLMModel": (transformers.WavLMConfig, transformers.WavLMModel, {}),
    "WavLMModel do_stable_layer_norm": (transformers.WavLMConfig, transformers.WavLMModel,
                                        dict(do_stable_layer_norm=True, feat_extract_norm="layer")),
    "Wav2Vec2Model do_stable_layer_norm": (transformers.Wav2Vec2Config, transformers.Wav2Vec2Model,
                                           dict(do_stable_layer_norm=True, feat_extract_norm="layer")),
    "HubertModel do_stable_layer_norm": (transformers.HubertConfig, transformers.HubertModel,
                                         dict(do_stable_layer_norm=True, feat_extract_norm="layer")),
    "SEWModel": (transformers.SEWConfig, transformers.SEWModel, dict(squeeze_factor=2)),
    "UniSpeechModel do_stable_layer_norm": (transformers.UniSpeechConfig, transformers.UniSpeechModel,
                                            dict(do_stable_layer_norm=True, feat_extract_norm="layer")),
    "UniSpeechSatModel do_stable_layer_norm": (transformers.UniSpeechSatConfig, transformers.UniSpeechSatModel,
                                               dict(do_stable_layer_norm=True, feat_extract_norm="layer")),
    "Wav2Vec2ConformerModel": (transformers.Wav2Vec2ConformerConfig, transformers.Wav2Vec2ConformerModel,
                               dict(position_embeddings_type="relative")),
}
# (batch, samples, valid samples per row): every input pads at least one row, differently
SPEECH_INPUTS = [(2, 64, (64, 40)), (3, 96, (50, 96, 70)), (1, 80, (33,)), (4, 48, (48, 20, 31, 9))]
# timm's blocks build `act_layer(inplace=True)`; 'sigmoid' and 'tanh' resolve to its own
# Sigmoid / Tanh classes (layers/activations.py), the others to torch's native modules
TIMM_MODELS = {"mobilenetv3_small_050 act_layer=sigmoid": ("mobilenetv3_small_050", "sigmoid"),
               "efficientnet_b0 act_layer=tanh": ("efficientnet_b0", "tanh")}
TIMM_INPUTS = [(2, 64), (1, 96), (3, 64), (2, 128)]


class ReusesPreActivation(torch.nn.Module):
    """A caller that reads the tensor it handed an inplace activation again."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.act = timm.layers.activations.Sigmoid(inplace=True)

    def forward(self, x):
        y = self.conv(x)
        return self.act(y) + y


class HandsAView(ReusesPreActivation):
    """A caller that hands an inplace activation a view and reads its base again."""

    def forward(self, x):
        y = self.conv(x)
        self.act(y[:, :2])
        return y * 1


class PassesItsInput(ReusesPreActivation):
    """A caller that hands an inplace activation its own forward input."""

    def forward(self, x):
        return self.conv(self.act(x))


NEIGHBOURS = (ReusesPreActivation, HandsAView, PassesItsInput)


def speech_inputs(batch: int, samples: int, valid: tuple, generator) -> dict:
    mask = torch.zeros(batch, samples, dtype=torch.long)
    for row, n in enumerate(valid):
        mask[row, :n] = 1
    return {"input_values": torch.randn(batch, samples, generator=generator), "attention_mask": mask}


def image_inputs(batch: int, size: int, generator) -> dict:
    return {"x": torch.randn(batch, 3, size, size, generator=generator)}


def count_writes(modules: list, changed: list):
    """Hooks that count, per call, the elements the modules' in-place writes change."""
    def before(module, args, kwargs):
        module._untrace_before = args[0].clone()

    def after(module, args, kwargs, output):
        changed.append(int((module._untrace_before != args[0]).sum()))

    for module in modules:
        module.register_forward_pre_hook(before, with_kwargs=True)
        module.register_forward_hook(after, with_kwargs=True)


def export(model, example: dict, dynamic_axes: dict) -> onnxruntime.InferenceSession:
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, tuple(example.values()), buffer, dynamo=False, opset_version=17,
                          input_names=list(example), output_names=["out"], dynamic_axes=dynamic_axes)
    return onnxruntime.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])


def compare(name: str, model, session, inputs: list[dict], first_output) -> None:
    for feeds in inputs:
        kept = {k: v.clone() for k, v in feeds.items()}
        with torch.no_grad():
            expected = first_output(model(**feeds))
        unchanged = all(torch.equal(kept[k], feeds[k]) for k in feeds)
        got = session.run(None, {k: v.numpy() for k, v in kept.items()})[0]  # the values the caller passed
        difference = float(np.abs(got - expected.numpy()).max()) if got.shape == tuple(expected.shape) else float("inf")
        shape = "x".join(str(d) for d in next(iter(feeds.values())).shape)
        verdict = "agrees" if difference <= TOLERANCE else "DISAGREES"
        print(f"  input {shape}: max |onnxruntime - eager| = {difference:.2e} ({verdict}); "
              f"eager left the caller's inputs unchanged: {unchanged}")


def probe_speech(name: str, config_class, model_class, options: dict, generator) -> None:
    model = model_class(config_class(**SPEECH, **options)).eval()
    changed: list[int] = []
    count_writes([model.encoder], changed)
    inputs = [speech_inputs(*shape, generator) for shape in SPEECH_INPUTS]
    with torch.no_grad():
        model(**inputs[0])
    session = export(model, inputs[0], {"input_values": {0: "batch", 1: "samples"},
                                        "attention_mask": {0: "batch", 1: "samples"}})
    print(f"{name}: the {type(model.encoder).__name__}'s `hidden_states[~mask] = 0` changes {changed[0]} elements on the example")
    compare(name, model, session, inputs, lambda out: out.last_hidden_state)


def probe_timm(name: str, architecture: str, act: str, generator) -> None:
    model = timm.create_model(architecture, pretrained=False, act_layer=act, num_classes=10).eval()
    activation = timm.layers.get_act_layer(act)
    inplace = [m for m in model.modules() if type(m).__module__ == "timm.layers.activations" and getattr(m, "inplace", False)]
    changed: list[int] = []
    count_writes(inplace, changed)
    inputs = [image_inputs(*shape, generator) for shape in TIMM_INPUTS]
    with torch.no_grad():
        model(**inputs[0])
    session = export(model, inputs[0], {"x": {0: "batch", 2: "height", 3: "width"}})
    print(f"{name}: {len(inplace)} inplace {type(inplace[0]).__name__} modules of timm.layers.activations "
          f"(factory returned a {activation.__name__}); their writes change {sum(changed)} elements on the example")
    compare(name, model, session, inputs, lambda out: out)


def probe_neighbour(model_class, generator) -> None:
    model = model_class().eval()
    inputs = [image_inputs(*shape, generator) for shape in TIMM_INPUTS]
    session = export(model, {k: v.clone() for k, v in inputs[0].items()}, {"x": {0: "batch", 2: "height", 3: "width"}})
    print(f"{model_class.__name__}: {model_class.__doc__}")
    compare(model_class.__name__, model, session, inputs, lambda out: out)


if __name__ == "__main__":
    warnings.filterwarnings("ignore")  # the tracer's warnings are about other constructs of the models
    generator = torch.Generator().manual_seed(0)
    for name, (config_class, model_class, options) in SPEECH_MODELS.items():
        probe_speech(name, config_class, model_class, options, generator)
    for name, (architecture, act) in TIMM_MODELS.items():
        probe_timm(name, architecture, act, generator)
    for model_class in NEIGHBOURS:
        probe_neighbour(model_class, generator)
