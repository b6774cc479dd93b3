"""The held-out export test set of issue 24: real model configurations that the work on
untrace's lowering never looked at, pinned before that work began, run once at the end.

None of these is in `benchmarks/zoo/` (the development set of `benchmarks/real_models.py`):
other timm families, other transformers architectures (encoder-decoder, state-space,
mixture-of-experts, vision-language), other torchvision tasks (video, keypoints,
segmentation, detection), and four libraries the zoo does not use: vit-pytorch,
x-transformers, segmentation-models-pytorch and efficientnet-pytorch. Every model is
built from code with a tiny config and seeded random weights, in eval(); nothing is
downloaded at run time.

Each case is exported by untrace, the legacy tracer (`torch.onnx.export(dynamo=False)`)
and `dynamo=True`, and judged on onnxruntime against eager PyTorch on inputs that differ
from the example in values and in batch, length or image size (the zoo's harness:
`benchmarks/zoo/harness.py` says how outputs are compared). Each case runs in its own
forked process with a time limit per exporter.

The four extra libraries are pure Python and not dependencies of untrace. They are read
from a folder put on sys.path (default `.testset-libs/` at the repository root, made by
`--setup`, which runs `pip download --no-deps` of the pinned versions and unpacks them):

    python benchmarks/export_testset.py --setup
    python benchmarks/export_testset.py --eager-only      # build and call each case; export nothing
    python benchmarks/export_testset.py [--only NAME ...] [--library LIB] [--threads 1]
                                        [--exporters untrace,legacy,dynamo] [--timeout 300]
                                        [--json OUT.json] [--markdown OUT.md]

Prints one row per model with each exporter's status, then the counts per exporter and
library and the median untrace/legacy export time (the same table as real_models.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from benchmarks.real_models import add_run_options, exporters_of, run_and_report  # noqa: E402
from benchmarks.zoo.cases import (Case, CaseInputs, Inputs, generator, image_case, image_dynamic,  # noqa: E402
                                  seeded, text_case, text_dynamic, token_ids)
from benchmarks.zoo.torchvision_models import RCNN, _detector_case  # noqa: E402

LIBS = ROOT / ".testset-libs"

# The pure-Python libraries (and the dependencies they import) at the versions the set was
# pinned with; `--setup` fetches exactly these.
PINNED = {
    "vit-pytorch": "1.26.11",
    "x-transformers": "2.31.10",
    "segmentation-models-pytorch": "0.6.0",
    "efficientnet-pytorch": "0.7.1",
    "einops": "0.8.2",
    "einx": "0.4.3",
    "frozendict": "2.5.1",
    "loguru": "0.7.3",
    "torch-einops-utils": "0.2.0",
}
# The libraries the zoo also uses, at the versions of /work/main's virtualenv when pinned.
ALSO = {"torch": "2.13.0+cpu", "timm": "1.0.31", "torchvision": "0.28.0", "transformers": "5.24.0"}


# --- timm ---------------------------------------------------------------------------------

def _timm(name: str, model: str | None = None, size=(64, 64), *, dynamic_hw=False, **kwargs) -> Case:
    def build():
        import timm

        return timm.create_model(model or name, pretrained=False, **kwargs)

    return Case(name, "timm", seeded(build), image_case(size, dynamic_hw=dynamic_hw), image_dynamic(dynamic_hw))


SMALL = dict(img_size=64)

TIMM: list[Case] = [
    _timm("cait_xxs24_224", **SMALL),
    _timm("pit_ti_224", **SMALL),
    _timm("convit_tiny", **SMALL),
    _timm("pvt_v2_b0", dynamic_hw=True),
    _timm("edgenext_xx_small"),
    _timm("efficientformerv2_s0", **SMALL),
    _timm("mobilevitv2_050"),
    _timm("rexnet_100"),
    _timm("lcnet_050", dynamic_hw=True),
    _timm("dla34"),
    _timm("gcvit_xxtiny", **SMALL),
    _timm("coatnet_nano_rw_224", **SMALL),
    _timm("mambaout_femto", dynamic_hw=True),
    _timm("hgnetv2_b0"),
    _timm("repvit_m1"),
    _timm("sequencer2d_s"),
    _timm("res2net50_26w_4s"),
    _timm("inception_next_tiny"),
]


# --- torchvision ----------------------------------------------------------------------------

def _tv(name: str, **kwargs):
    def build():
        import torchvision

        return torchvision.models.get_model(name, weights=None, **kwargs)

    return seeded(build)


def _video_inputs(frames=8, size=(32, 32)):
    def make() -> CaseInputs:
        def clip(batch, t, s, offset):
            return Inputs((torch.randn(batch, 3, t, *s, generator=generator(offset)),))

        return CaseInputs(clip(2, frames, size, 0), [("other values", clip(2, frames, size, 1)),
                                                     ("batch 3", clip(3, frames, size, 2)),
                                                     ("batch 1", clip(1, frames, size, 3))])

    return make


def _video(name: str, frames=8, size=(32, 32), **kwargs) -> Case:
    return Case(name, "torchvision", _tv(name, **kwargs), _video_inputs(frames, size), {"x": {0: "batch"}})


def _segmentation(name: str, **kwargs) -> Case:
    return Case(name, "torchvision", _tv(name, weights_backbone=None, **kwargs), image_case((64, 64), dynamic_hw=True),
                image_dynamic(True))


TORCHVISION: list[Case] = [
    _video("r3d_18"),
    _video("mc3_18"),
    _video("r2plus1d_18"),
    _segmentation("fcn_resnet50", aux_loss=False, num_classes=5),
    _segmentation("deeplabv3_resnet50", aux_loss=False, num_classes=5),
    _detector_case("keypointrcnn_resnet50_fpn",
                   ("rpn.head", "roi_heads.box_head", "roi_heads.box_predictor", "roi_heads.keypoint_predictor"),
                   num_keypoints=5, **RCNN),
    _detector_case("fasterrcnn_resnet50_fpn_v2", ("rpn.head", "roi_heads.box_head", "roi_heads.box_predictor"),
                   **RCNN),
    Case("mnasnet0_5", "torchvision", _tv("mnasnet0_5"), image_case((64, 64)), image_dynamic(False)),
    Case("convnext_tiny", "torchvision", _tv("convnext_tiny"), image_case((64, 64), dynamic_hw=True),
         image_dynamic(True)),
]


# --- transformers ---------------------------------------------------------------------------

VOCAB = 99
TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=37, max_position_embeddings=64, use_cache=False)
SEQ2SEQ = dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64,
               use_cache=False, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)


def _hf(model_class: str, config_class: str, **config):
    def build():
        import transformers

        return getattr(transformers, model_class)(getattr(transformers, config_class)(**config))

    return seeded(build)


def _decoder_ids(ids: torch.Tensor) -> dict:
    # The decoder reads the input shifted by one, as a seq2seq model is fed in training.
    return {"decoder_input_ids": torch.roll(ids, 1, dims=1)}


def _text(name: str, model_class: str, config_class: str, *, mask=True, extra=None, extra_names=(), **config) -> Case:
    return Case(name, "transformers", _hf(model_class, config_class, **config),
                text_case(VOCAB, mask=mask, extra=extra), text_dynamic(mask, extra_names))


def _seq2seq(name: str, model_class: str, config_class: str, **config) -> Case:
    return _text(name, model_class, config_class, extra=_decoder_ids, extra_names=("decoder_input_ids",), **config)


def _vision(name: str, model_class: str, config_class: str, *, size=(32, 32), dynamic_hw=False, **config) -> Case:
    return Case(name, "transformers", _hf(model_class, config_class, **config),
                image_case(size, dynamic_hw=dynamic_hw, other_size=(48, 40)), image_dynamic(dynamic_hw, "pixel_values"))


def _text_image_inputs(size=(32, 32), length=7) -> CaseInputs:
    def one(batch, n, offset):
        return Inputs((), {"input_ids": token_ids(batch, n, VOCAB, offset),
                           "pixel_values": torch.randn(batch, 3, *size, generator=generator(offset + 100)),
                           "attention_mask": torch.ones(batch, n, dtype=torch.long)})

    return CaseInputs(one(2, length, 0), [("other values", one(2, length, 1)), ("batch 3", one(3, length, 2)),
                                          ("length 11", one(2, 11, 3))])


def _clip_like(name: str, model_class: str, config_class: str, text_config_class: str, vision_config_class: str,
               **text) -> Case:
    def build():
        import transformers

        text_config = getattr(transformers, text_config_class)(**TEXT, **text)
        vision_config = getattr(transformers, vision_config_class)(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, image_size=32,
            patch_size=8)
        config = getattr(transformers, config_class)(text_config=text_config.to_dict(),
                                                     vision_config=vision_config.to_dict(), projection_dim=16)
        return getattr(transformers, model_class)(config)

    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
               "pixel_values": {0: "batch"}}
    return Case(name, "transformers", seeded(build), _text_image_inputs, dynamic)


# An intermediate size that is a multiple of 16: the grouped matmul of the experts needs
# 16-byte strides.
MOE = dict(TEXT, num_key_value_heads=2, intermediate_size=32)

TRANSFORMERS: list[Case] = [
    _seq2seq("T5Model", "T5Model", "T5Config", vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=37, num_layers=2,
             num_heads=4, use_cache=False, decoder_start_token_id=0),
    _seq2seq("MarianMT", "MarianMTModel", "MarianConfig", **SEQ2SEQ),
    _seq2seq("Pegasus", "PegasusModel", "PegasusConfig", **SEQ2SEQ),
    _text("Mamba", "MambaModel", "MambaConfig", mask=False, vocab_size=VOCAB, hidden_size=32, state_size=8,
          num_hidden_layers=2, expand=2, conv_kernel=4, use_cache=False),
    _text("Mixtral", "MixtralModel", "MixtralConfig", num_local_experts=4, num_experts_per_tok=2, **MOE),
    _text("Qwen2Moe", "Qwen2MoeModel", "Qwen2MoeConfig", num_experts=4, num_experts_per_tok=2,
          moe_intermediate_size=16, shared_expert_intermediate_size=16, **MOE),
    _text("Olmoe", "OlmoeModel", "OlmoeConfig", num_experts=4, num_experts_per_tok=2, **MOE),
    _clip_like("CLIP", "CLIPModel", "CLIPConfig", "CLIPTextConfig", "CLIPVisionConfig",
               pad_token_id=0, bos_token_id=1, eos_token_id=2),
    _vision("SiglipVision", "SiglipVisionModel", "SiglipVisionConfig", hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=37, image_size=32, patch_size=8),
    _text("Gemma2", "Gemma2Model", "Gemma2Config", num_key_value_heads=2, head_dim=8, **TEXT),
    _text("Falcon", "FalconModel", "FalconConfig", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
          num_attention_heads=4, use_cache=False),
    _text("Bloom", "BloomModel", "BloomConfig", vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4,
          use_cache=False),
    _text("OPT", "OPTModel", "OPTConfig", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
          num_attention_heads=4, ffn_dim=37, max_position_embeddings=64, word_embed_proj_dim=32, use_cache=False),
    _vision("Dinov2", "Dinov2Model", "Dinov2Config", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=37, image_size=32, patch_size=8),
    _vision("MobileViT", "MobileViTModel", "MobileViTConfig", image_size=64, size=(64, 64),
            hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32]),
]


# --- libraries the zoo does not use -----------------------------------------------------------

def _lib(library: str, name: str, make, size=(64, 64), *, dynamic_hw=False, input_name="x") -> Case:
    return Case(name, library, seeded(make), image_case(size, dynamic_hw=dynamic_hw),
                image_dynamic(dynamic_hw, input_name))


def _vit_pytorch(class_name: str, module: str = "vit_pytorch", **kwargs):
    def make():
        import importlib

        return getattr(importlib.import_module(module), class_name)(**kwargs)

    return make


VIT = dict(image_size=64, patch_size=16, num_classes=10, dim=32, depth=2, heads=4, mlp_dim=64)


def _x_transformers_decoder():
    from x_transformers import Decoder, TransformerWrapper

    return TransformerWrapper(num_tokens=VOCAB, max_seq_len=64, attn_layers=Decoder(dim=32, depth=2, heads=4))


def _x_transformers_encoder():
    from x_transformers import Encoder, TransformerWrapper

    return TransformerWrapper(num_tokens=VOCAB, max_seq_len=64,
                              attn_layers=Encoder(dim=32, depth=2, heads=4, rotary_pos_emb=True, ff_glu=True))


def _token_case(name: str, make) -> Case:
    def inputs() -> CaseInputs:
        def one(batch, n, offset):
            return Inputs((token_ids(batch, n, VOCAB, offset),))

        return CaseInputs(one(2, 8, 0), [("other values", one(2, 8, 1)), ("batch 3", one(3, 8, 2)),
                                          ("length 13", one(2, 13, 3))])

    return Case(name, "x_transformers", seeded(make), inputs, {"x": {0: "batch", 1: "sequence"}})


def _smp(architecture: str, **kwargs):
    def make():
        import segmentation_models_pytorch as smp

        return getattr(smp, architecture)(encoder_name="resnet18", encoder_weights=None, classes=3, **kwargs)

    return make


def _efficientnet(name: str):
    def make():
        from efficientnet_pytorch import EfficientNet

        return EfficientNet.from_name(name, num_classes=10)

    return make


OTHER: list[Case] = [
    _lib("vit_pytorch", "ViT", _vit_pytorch("ViT", **VIT), input_name="img"),
    _lib("vit_pytorch", "SimpleViT", _vit_pytorch("SimpleViT", **VIT), input_name="img"),
    _lib("vit_pytorch", "CaiT", _vit_pytorch("CaiT", "vit_pytorch.cait", cls_depth=1, **VIT), input_name="img"),
    _lib("vit_pytorch", "DeepViT", _vit_pytorch("DeepViT", "vit_pytorch.deepvit", **VIT), input_name="img"),
    _lib("vit_pytorch", "CrossFormer", _vit_pytorch("CrossFormer", "vit_pytorch.crossformer", num_classes=10,
                                                    dim=(32, 64, 128, 256), depth=(1, 1, 1, 1),
                                                    global_window_size=(2, 2, 1, 1), local_window_size=2),
         size=(64, 64), input_name="x"),
    _token_case("TransformerWrapperDecoder", _x_transformers_decoder),
    _token_case("TransformerWrapperEncoderRotary", _x_transformers_encoder),
    _lib("smp", "Unet_resnet18", _smp("Unet"), dynamic_hw=True),
    _lib("smp", "FPN_resnet18", _smp("FPN"), dynamic_hw=True),
    _lib("smp", "DeepLabV3Plus_resnet18", _smp("DeepLabV3Plus"), dynamic_hw=True),
    _lib("smp", "Linknet_resnet18", _smp("Linknet"), dynamic_hw=True),
    _lib("efficientnet_pytorch", "efficientnet-b0", _efficientnet("efficientnet-b0"), input_name="inputs"),
    _lib("efficientnet_pytorch", "efficientnet-b1", _efficientnet("efficientnet-b1"), input_name="inputs"),
]

CASES: list[Case] = [*TIMM, *TORCHVISION, *TRANSFORMERS, *OTHER]
LIBRARIES = sorted({c.library for c in CASES})


# --- running --------------------------------------------------------------------------------

def fetch(folder: Path, pinned: dict[str, str], sdist_packages: tuple[str, ...] = ()) -> None:
    """`pip download --no-deps` of `pinned` ({distribution: version}) into `folder`: wheels
    unpacked there, and of an sdist (a library that ships no wheel) only its package
    folders named in `sdist_packages`."""
    import shutil
    import tarfile

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        archives, unpacked = Path(tmp) / "archives", Path(tmp) / "unpacked"
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(archives),
                        *(f"{n}=={v}" for n, v in pinned.items())], check=True)
        for archive in sorted(archives.iterdir()):
            if archive.suffix == ".whl":
                zipfile.ZipFile(archive).extractall(folder)
            else:
                with tarfile.open(archive) as tar:
                    tar.extractall(unpacked, filter="data")
        for package in sdist_packages:
            shutil.copytree(next(unpacked.glob(f"*/{package}")), folder / package, dirs_exist_ok=True)


def setup(folder: Path = LIBS) -> None:
    """The pinned pure-Python libraries, unpacked into `folder` (efficientnet-pytorch ships
    an sdist only: its package folder is enough)."""
    fetch(folder, PINNED, ("efficientnet_pytorch",))


def finder(cases: list[Case]):
    """The case of `cases` by key (`library/name`) or name."""

    def find(key: str) -> Case:
        matches = [c for c in cases if key in (c.key, c.name)]
        if len(matches) != 1:
            raise KeyError(f"{key!r} names {len(matches)} cases (known: {', '.join(c.key for c in cases)})")
        return matches[0]

    return find


find = finder(CASES)


def eager_only(cases: list[Case]) -> int:
    """Each case built and called in eager PyTorch on its example and every check input,
    and nothing else (no exporter runs): what pinning a test set may do. A case fails when
    it raises, when forward's parameters do not name its dynamic axes, when it returns no
    tensor or a non-finite one, when two seeded builds disagree on the example, or when a
    second call of the same model does (forward changed the model). Returns 1 on any
    failure."""
    import traceback

    import numpy as np

    from benchmarks.zoo.harness import _check_dynamic_names, eager_outputs, install_torchvision_ops

    def same(a, b) -> bool:
        return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
                                        for (_, x), (_, y) in zip(a, b))

    install_torchvision_ops()
    failed = 0
    for case in cases:
        try:
            inputs = case.inputs()
            model = case.build()
            _check_dynamic_names(case, model)
            first = eager_outputs(model, inputs.example)
            if not first:
                raise ValueError("forward returns no tensor")
            if not same(first, eager_outputs(case.build(), inputs.example)):
                raise ValueError("two seeded builds disagree on the example")
            if not same(first, eager_outputs(model, inputs.example)):
                raise ValueError("a second call of the same model disagrees with the first")
            outputs = [eager_outputs(model, check) for _, check in inputs.checks]
            for path, value in [leaf for leaves in [first, *outputs] for leaf in leaves]:
                if value.dtype.kind == "f" and not np.isfinite(value).all():
                    raise ValueError(f"{path} is not finite")
            shapes = [[list(t.shape) for _, t in leaves] for leaves in outputs]
            print(f"ok    {case.key:48} {len(first)} outputs, example {[list(t.shape) for _, t in first]}, "
                  f"checks {shapes}", flush=True)
        except Exception as exc:  # noqa: BLE001 - a case that does not run eagerly is reported, not raised
            failed += 1
            print(f"FAIL  {case.key:48} {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            traceback.print_exc(limit=-3)
    print(f"{len(cases) - failed} of {len(cases)} cases run eagerly")
    return 1 if failed else 0


def cli(argv, *, description: str, cases: list[Case], libs: Path, setup) -> int:
    """The command line of a held-out test set: `--setup` fetches its libraries into
    `--libs`; `--eager-only` only builds and calls each case; otherwise each case is
    measured by real_models' run loop."""
    libraries = sorted({c.library for c in cases})
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--setup", action="store_true", help="fetch the pinned libraries into --libs and stop")
    parser.add_argument("--libs", type=Path, default=libs)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--library", choices=libraries)
    parser.add_argument("--eager-only", action="store_true",
                        help="build and call each case in eager PyTorch on all its inputs; export nothing")
    add_run_options(parser)
    args = parser.parse_args(argv)
    if args.setup:
        setup(args.libs)
        return 0
    sys.path.insert(0, str(args.libs))
    find_case = finder(cases)
    chosen = [find_case(n) for n in args.only] if args.only else list(cases)
    chosen = [c for c in chosen if args.library is None or c.library == args.library]
    if args.eager_only:
        return eager_only(chosen)
    exporters = exporters_of(parser, args)
    return run_and_report(chosen, exporters, args, find_case)


def main(argv=None) -> int:
    return cli(argv, description=__doc__.splitlines()[0], cases=CASES, libs=LIBS, setup=setup)


if __name__ == "__main__":
    sys.exit(main())
