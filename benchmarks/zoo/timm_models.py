"""timm models with random weights (`pretrained=False`, nothing downloaded).

Every model takes 64x64 images (eva02_tiny_patch14_224 56x56, a multiple of its patch),
the transformers built for that size with `img_size` (and swin with 4x4 windows) to keep
the run small; tiny_vit_5m_224 has no such argument and keeps 224. Batch is dynamic
everywhere; height and width too on the cases named `*_dynamic_hw` and on
vit_tiny_patch16_224 with `dynamic_img_size=True`.
"""

from __future__ import annotations

from benchmarks.zoo.cases import Case, image_case, image_dynamic, seeded


def _timm(name: str, **kwargs):
    def build():
        import timm

        return timm.create_model(name, pretrained=False, **kwargs)

    return seeded(build)


def _case(name: str, model: str | None = None, size: tuple[int, int] = (64, 64), *,
          dynamic_hw: bool = False, **kwargs) -> Case:
    return Case(name, "timm", _timm(model or name, **kwargs),
                image_case(size, dynamic_hw=dynamic_hw), image_dynamic(dynamic_hw))


SMALL = dict(img_size=64)

CASES: list[Case] = [
    _case("resnet18"),
    _case("efficientnet_b0"),
    _case("efficientnet_b0_dynamic_hw", "efficientnet_b0", dynamic_hw=True),
    _case("mobilenetv3_small_100"),
    _case("vit_tiny_patch16_224", **SMALL),
    _case("vit_tiny_patch16_224_dynamic_img_size", "vit_tiny_patch16_224", dynamic_hw=True, dynamic_img_size=True,
          **SMALL),
    _case("convnext_atto"),
    _case("convnext_atto_dynamic_hw", "convnext_atto", dynamic_hw=True),
    _case("deit_tiny_patch16_224", **SMALL),
    _case("swin_tiny_patch4_window7_224", window_size=4, **SMALL),
    _case("regnetx_002"),
    _case("densenet121"),
    _case("levit_128s", **SMALL),
    _case("mixer_b16_224", **SMALL),
    _case("mobilevit_xxs"),
    _case("ghostnet_100"),
    _case("resnest14d"),
    _case("tiny_vit_5m_224", size=(224, 224)),
    _case("eva02_tiny_patch14_224", size=(56, 56), img_size=56),
    _case("maxvit_nano_rw_256", **SMALL),
    _case("fastvit_t8"),
    _case("hrnet_w18_small"),
    _case("xcit_nano_12_p16_224", **SMALL),
]
