"""transformers models from tiny Config objects (random weights, nothing downloaded).

Every model is what a user gets from `AutoModel.from_config(config)` with the library's
default attention implementation (sdpa where the model has it, else eager), the
output as `ModelOutput` (return_dict, the default) and `use_cache=False`: an export of
one forward pass has no cache to return. Hidden size 32, 2 layers, 4 heads, vocabulary
of 99. Text inputs are `input_ids` and `attention_mask`, batch and sequence dynamic;
checks include a right-padded row and another length. Vision models take 32x32 (DETR,
Segformer: dynamic height and width), Whisper's encoder 60 mel frames (its only length),
Wav2Vec2 400 samples (dynamic length).
"""

from __future__ import annotations

from typing import Callable

import torch

from benchmarks.zoo.cases import (Case, CaseInputs, Inputs, generator, image_case, image_dynamic, seeded,
                                  text_case, text_dynamic)

VOCAB = 99
TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=37, max_position_embeddings=64, use_cache=False)
# Special tokens inside the tiny vocabulary (GPT2's, Whisper's and CLIP's defaults are not).
GPT2 = dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64, use_cache=False,
            bos_token_id=1, eos_token_id=2)


def _model(model_class: str, config_class: str, **config) -> Callable[[], torch.nn.Module]:
    def build():
        import transformers

        cfg = getattr(transformers, config_class)(**config)
        return getattr(transformers, model_class)(cfg)

    return seeded(build)


def _text(name: str, model_class: str, config_class: str, *, extra=None, extra_names=(), **config) -> Case:
    return Case(name, "transformers", _model(model_class, config_class, **config),
                text_case(VOCAB, extra=extra), text_dynamic(extra_names=extra_names))


def _token_types(ids: torch.Tensor) -> dict:
    types = torch.zeros_like(ids)
    types[:, ids.shape[1] // 2:] = 1
    return {"token_type_ids": types}


def _vision(name: str, model_class: str, config_class: str, *, size=(32, 32), dynamic_hw=False, **config) -> Case:
    return Case(name, "transformers", _model(model_class, config_class, **config),
                image_case(size, dynamic_hw=dynamic_hw, other_size=(48, 40)),
                image_dynamic(dynamic_hw, "pixel_values"))


def _whisper_encoder():
    import transformers

    config = transformers.WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, d_model=32, encoder_layers=2,
                                        encoder_attention_heads=4, decoder_layers=2, decoder_attention_heads=4,
                                        encoder_ffn_dim=37, decoder_ffn_dim=37, max_source_positions=30,
                                        max_target_positions=32, use_cache=False,
                                        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    return transformers.WhisperModel(config).get_encoder()


def _whisper_inputs() -> CaseInputs:
    def features(batch, offset):
        return Inputs((torch.randn(batch, 16, 60, generator=generator(offset)),))

    return CaseInputs(features(2, 0), [("other values", features(2, 1)), ("batch 3", features(3, 2)),
                                       ("batch 1", features(1, 3))])


def _wav2vec2():
    import transformers

    config = transformers.Wav2Vec2Config(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=4, intermediate_size=37, conv_dim=(16, 16),
                                         conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=16,
                                         num_conv_pos_embedding_groups=4, do_stable_layer_norm=True,
                                         feat_extract_norm="layer")
    return transformers.Wav2Vec2Model(config)


def _wav2vec2_inputs() -> CaseInputs:
    def audio(batch, n, offset, padded=False):
        mask = torch.ones(batch, n, dtype=torch.long)
        if padded:
            mask[1, -100:] = 0
        return Inputs((), {"input_values": torch.randn(batch, n, generator=generator(offset)), "attention_mask": mask})

    return CaseInputs(audio(2, 400, 0), [("other values", audio(2, 400, 1)), ("batch 3", audio(3, 400, 2)),
                                         ("padded row", audio(2, 400, 3, padded=True)),
                                         ("length 560", audio(2, 560, 4))])


def _detr():
    import transformers

    backbone = transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                                         out_features=["stage2"])
    config = transformers.DetrConfig(backbone_config=backbone, d_model=32, encoder_layers=1, decoder_layers=1,
                                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37,
                                     decoder_ffn_dim=37, num_queries=10, num_labels=5, use_timm_backbone=False)
    return transformers.DetrForObjectDetection(config)


CASES: list[Case] = [
    _text("Bert", "BertModel", "BertConfig", extra=_token_types, extra_names=("token_type_ids",), **TEXT),
    _text("GPT2", "GPT2Model", "GPT2Config", **GPT2),
    _text("GPT2LMHead", "GPT2LMHeadModel", "GPT2Config", **GPT2),
    _text("T5Encoder", "T5EncoderModel", "T5Config", vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=37, num_layers=2,
          num_heads=4, use_cache=False),
    _text("Llama", "LlamaModel", "LlamaConfig", num_key_value_heads=2, **TEXT),
    _text("LlamaForCausalLM", "LlamaForCausalLM", "LlamaConfig", num_key_value_heads=2, **TEXT),
    _text("Mistral", "MistralModel", "MistralConfig", num_key_value_heads=2, **TEXT),
    _text("Qwen2", "Qwen2Model", "Qwen2Config", num_key_value_heads=2, **TEXT),
    _vision("ViT", "ViTModel", "ViTConfig", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=37, image_size=32, patch_size=8),
    Case("WhisperEncoder", "transformers", seeded(_whisper_encoder), _whisper_inputs,
         {"input_features": {0: "batch"}}),
    _text("DistilBert", "DistilBertModel", "DistilBertConfig", vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4,
          hidden_dim=37, max_position_embeddings=64),
    _text("RoBERTa", "RobertaModel", "RobertaConfig", **TEXT),
    _text("BART", "BartModel", "BartConfig", vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
          encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37,
          max_position_embeddings=64, use_cache=False),
    _text("CLIPText", "CLIPTextModel", "CLIPTextConfig", pad_token_id=0, bos_token_id=1, eos_token_id=2, **TEXT),
    _vision("Swin", "SwinModel", "SwinConfig", image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
            num_heads=[2, 4], window_size=4),
    Case("DETR", "transformers", seeded(_detr), image_case((64, 64), dynamic_hw=True, other_size=(96, 80)),
         image_dynamic(True, "pixel_values")),
    _text("Albert", "AlbertModel", "AlbertConfig", embedding_size=16, **TEXT),
    _text("Electra", "ElectraModel", "ElectraConfig", embedding_size=16, **TEXT),
    _text("GPTNeoX", "GPTNeoXModel", "GPTNeoXConfig", **TEXT),
    _text("Phi", "PhiModel", "PhiConfig", **TEXT),
    Case("Wav2Vec2", "transformers", seeded(_wav2vec2), _wav2vec2_inputs,
         {"input_values": {0: "batch", 1: "samples"}, "attention_mask": {0: "batch", 1: "samples"}}),
    _text("DebertaV2", "DebertaV2Model", "DebertaV2Config", **TEXT),
    _vision("ConvNext", "ConvNextModel", "ConvNextConfig", hidden_sizes=[8, 16], depths=[1, 1], num_stages=2),
    _vision("Segformer", "SegformerForSemanticSegmentation", "SegformerConfig", dynamic_hw=True,
            num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2],
            decoder_hidden_size=32, num_labels=5, strides=[4, 2], patch_sizes=[7, 3]),
]
