"""The second held-out export test set of issue 24: model configurations of libraries that
no measurement of the project has used, pinned before it is run, run once.

The first held-out set (`benchmarks/export_testset.py`) draws most of its models from
timm, torchvision and transformers, the libraries the development set comes from. This
one draws none: every configuration comes from a pure-Python library that appears nowhere
in `benchmarks/`, `tests/` or `corpora/` (nor in the issue-23 check test set): image
restoration networks of spandrel, protein language models of fair-esm, a linear-chain CRF
(pytorch-crf), normalizing flows of zuko (autoregressive inverses, spline
searches, bisection, an adaptive ODE solver), quantisers of vector-quantize-pytorch, and
attention variants of lucidrains' packages (perceiver, performer, nystrom, local,
rotary, conformer, MLP-mixers). Where a library's object is not a module whose forward
returns tensors (a flow returns a distribution, the CRF decodes to lists), a small
wrapper module below calls it the way a user's model would.

Every model is built from code with a tiny config and seeded random weights, in eval();
nothing is downloaded at run time, and nothing needs the network. Each case is measured
exactly as the first set's: untrace, the legacy tracer and `dynamo=True`, judged on
onnxruntime against eager PyTorch on inputs that differ from the example in values and
in batch, length or image size (`benchmarks/zoo/harness.py`).

The libraries are read from a folder put on sys.path (default `.testset2-libs/` at the
repository root), made by `--setup` with `pip download --no-deps` of the pinned versions:

    python benchmarks/export_testset2.py --setup
    python benchmarks/export_testset2.py --eager-only      # build and call each case; export nothing
    python benchmarks/export_testset2.py [--only NAME ...] [--library LIB] [--threads 1]
                                         [--exporters untrace,legacy,dynamo] [--timeout 300]
                                         [--json OUT.json] [--markdown OUT.md]
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from benchmarks.export_testset import cli, fetch  # noqa: E402
from benchmarks.zoo.cases import Case, CaseInputs, Inputs, generator, image_case, image_dynamic, seeded  # noqa: E402

LIBS = ROOT / ".testset2-libs"

# The libraries measured, and the pure-Python packages they import, at the versions the
# set was pinned with; `--setup` fetches exactly these.
PINNED = {
    "spandrel": "0.4.2",
    "fair-esm": "2.0.0",
    "pytorch-crf": "0.7.2",
    "zuko": "1.6.0",
    "vector-quantize-pytorch": "1.32.0",
    "perceiver-pytorch": "0.11.0",
    "performer-pytorch": "1.1.4",
    "nystrom-attention": "0.0.14",
    "conformer": "0.3.2",
    "local-attention": "1.11.2",
    "rotary-embedding-torch": "0.9.1",
    "mlp-mixer-pytorch": "0.3.1",
    "g-mlp-pytorch": "0.1.5",
    "res-mlp-pytorch": "0.0.6",
    # imported by the above
    "einops": "0.8.2",
    "einx": "0.4.3",
    "frozendict": "2.5.1",
    "loguru": "0.7.3",
    "torch-einops-utils": "0.2.0",
    "hyper-connections": "0.4.11",
    "axial-positional-embedding": "0.3.12",
}
# What the cases also import, from the project's virtualenv when pinned.
ALSO = {"torch": "2.13.0+cpu", "torchvision": "0.28.0", "numpy": "2.4.6", "safetensors": "0.8.0",
        "sympy": "1.14.0", "typing_extensions": "4.16.0"}


def setup(folder: Path = LIBS) -> None:
    fetch(folder, PINNED)


def _batches(one, base, other=None, other_label: str = "") -> CaseInputs:
    """Example `one(2, base, 0)`; checks: other values, batch 3, batch 1, and `other`
    (a length or size, labelled `other_label`) when the model allows it."""
    checks = [("other values", one(2, base, 1)), ("batch 3", one(3, base, 2)), ("batch 1", one(1, base, 3))]
    if other is not None:
        checks.append((other_label, one(2, other, 4)))
    return CaseInputs(one(2, base, 0), checks)


def _randn(*shape, offset: int) -> torch.Tensor:
    return torch.randn(*shape, generator=generator(offset))


# --- spandrel: image restoration and super-resolution -----------------------------------------

def _spandrel(architecture: str, class_name: str, **kwargs):
    def make():
        return getattr(importlib.import_module(f"spandrel.architectures.{architecture}"), class_name)(**kwargs)

    return make


def _image(library: str, name: str, make, size=(32, 32), *, other_size=None, channels=3, input_name="x") -> Case:
    """Batch 2 of `size`; with `other_size`, height and width are dynamic too."""
    return Case(name, library, seeded(make),
                image_case(size, dynamic_hw=other_size is not None, other_size=other_size, channels=channels),
                image_dynamic(other_size is not None, input_name))


# LaMa's forward takes an image and a mask.
def _lama_inputs() -> CaseInputs:
    def one(batch, size, offset):
        mask = (torch.rand(batch, 1, *size, generator=generator(offset + 50)) > 0.7).float()
        return Inputs((_randn(batch, 3, *size, offset=offset).sigmoid(), mask))

    return _batches(one, (64, 64), (96, 64), "size 96x64")


def _single_image_inputs() -> CaseInputs:
    """One image: SeemoRe's mixture of experts, in eval(), picks its expert by the values of
    a batch of one (`for i in topk_experts.squeeze(0)`). Checks: other values, twice, and
    another size."""

    def one(size, offset):
        return Inputs((_randn(1, 3, *size, offset=offset),))

    return CaseInputs(one((32, 32), 0), [("other values", one((32, 32), 1)), ("other values 2", one((32, 32), 2)),
                                         ("size 40x24", one((40, 24), 3))])


SPANDREL: list[Case] = [
    _image("spandrel", "Compact_x2", _spandrel("Compact", "Compact", num_feat=16, num_conv=4, upscale=2),
           other_size=(40, 24)),
    _image("spandrel", "RRDBNet_x2", _spandrel("ESRGAN", "ESRGAN", num_filters=16, num_blocks=2, scale=2),
           other_size=(40, 24)),
    _image("spandrel", "SwinIR_x2", _spandrel("SwinIR", "SwinIR", img_size=32, embed_dim=24, depths=[2, 2],
                                                 num_heads=[2, 2], window_size=8, mlp_ratio=2.0, upscale=2,
                                                 upsampler="pixelshuffledirect", drop_path_rate=0.0),
           other_size=(40, 24)),
    _image("spandrel", "SPAN_x2", _spandrel("SPAN", "SPAN", num_in_ch=3, num_out_ch=3, feature_channels=16,
                                               upscale=2), other_size=(40, 24)),
    _image("spandrel", "NAFNet", _spandrel("NAFNet", "NAFNet", width=8, middle_blk_num=1, enc_blk_nums=[1, 1],
                                              dec_blk_nums=[1, 1]), other_size=(40, 24), input_name="inp"),
    _image("spandrel", "SCUNet", _spandrel("SCUNet", "SCUNet", config=[1, 1, 1, 1, 1, 1, 1], dim=64,
                                              input_resolution=64), size=(64, 64), other_size=(72, 48),
           input_name="x0"),
    _image("spandrel", "RealCUGAN_UpCunet2x", _spandrel("RealCUGAN", "UpCunet2x"), size=(48, 48),
           other_size=(56, 40)),
    Case("LaMa", "spandrel", seeded(_spandrel("LaMa", "LaMa", in_nc=4, out_nc=3)), _lama_inputs,
         {"img": {0: "batch", 2: "height", 3: "width"}, "mask": {0: "batch", 2: "height", 3: "width"}}),
    _image("spandrel", "FBCNN", _spandrel("FBCNN", "FBCNN", nb=1), other_size=(48, 40)),
    Case("SeemoRe_x2", "spandrel", seeded(_spandrel("SeemoRe", "SeemoRe", scale=2, num_experts=3, num_layers=2,
                                                    embedding_dim=16, recursive=2, topk=1)),
         _single_image_inputs, {"x": {2: "height", 3: "width"}}),
    _image("spandrel", "OmniSR_x2", _spandrel("OmniSR", "OmniSR", num_feat=16, block_num=1, window_size=8,
                                                 up_scale=2), other_size=(40, 24)),
    _image("spandrel", "FFTformer", _spandrel("FFTformer", "FFTformer", dim=8, num_blocks=[1, 1, 1],
                                                 num_refinement_blocks=1, ffn_expansion_factor=2),
           other_size=(64, 32), input_name="inp_img"),
]

# --- fair-esm: protein language models --------------------------------------------------------

def _alphabet(name: str = "ESM-1b"):
    import esm

    return esm.data.Alphabet.from_architecture(name)


def _protein_tokens(batch: int, length: int, offset: int, *, padded: bool, alphabet: str = "ESM-1b") -> torch.Tensor:
    """<cls> residues <eos>, the second row `padded` (shorter, filled with <pad>)."""
    a = _alphabet(alphabet)
    residues = torch.tensor([a.get_idx(t) for t in "ACDEFGHIKLMNPQRSTVWY"])
    body = residues[torch.randint(0, len(residues), (batch, length), generator=generator(offset))]
    tokens = torch.cat([torch.full((batch, 1), a.cls_idx), body, torch.full((batch, 1), a.eos_idx)], dim=1)
    if padded and batch > 1:
        tokens[1, -4:] = a.padding_idx
        tokens[1, -5] = a.eos_idx
    return tokens


def _protein_case(*, kwargs=None, alphabet: str = "ESM-1b"):
    def make() -> CaseInputs:
        def one(batch, n, offset, padded=False):
            return Inputs((_protein_tokens(batch, n, offset, padded=padded, alphabet=alphabet),), dict(kwargs or {}))

        base = _batches(one, 10, 17, "length 17")
        return CaseInputs(base.example, [*base.checks, ("padded row", one(2, 10, 5, padded=True))])

    return make


def _esm2(**kwargs):
    def make():
        from esm.model.esm2 import ESM2

        return ESM2(num_layers=2, embed_dim=32, attention_heads=4, alphabet="ESM-1b", **kwargs)

    return make


def _esm1b():
    from argparse import Namespace

    from esm.model.esm1 import ProteinBertModel

    args = Namespace(arch="roberta_large", layers=2, embed_dim=32, ffn_embed_dim=64, attention_heads=4,
                     max_positions=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, final_bias=True)
    return ProteinBertModel(args, _alphabet("ESM-1b"))


def _msa_transformer():
    from argparse import Namespace

    from esm.model.msa_transformer import MSATransformer

    args = Namespace(layers=2, embed_dim=32, ffn_embed_dim=64, attention_heads=4, dropout=0.0,
                     attention_dropout=0.0, activation_dropout=0.0, max_tokens=2 ** 14, max_positions=64,
                     embed_positions_msa=True)
    return MSATransformer(args, _alphabet("MSA Transformer"))


def _msa_inputs() -> CaseInputs:
    def one(batch, shape, offset):
        rows, n = shape
        flat = _protein_tokens(batch * rows, n, offset, padded=False, alphabet="MSA Transformer")
        return Inputs((flat.reshape(batch, rows, n + 2)[:, :, :-1],))  # MSAs: <cls> and residues, no <eos>

    return _batches(one, (3, 8), (4, 12), "4 rows, length 12")


TOKENS = {"tokens": {0: "batch", 1: "sequence"}}

ESM: list[Case] = [
    Case("ESM2", "esm", seeded(_esm2()), _protein_case(), TOKENS),
    Case("ESM2_contacts", "esm", seeded(_esm2()), _protein_case(kwargs={"return_contacts": True}), TOKENS),
    Case("ESM1b", "esm", seeded(_esm1b), _protein_case(), TOKENS),
    Case("MSATransformer", "esm", seeded(_msa_transformer), _msa_inputs,
         {"tokens": {0: "batch", 1: "rows", 2: "sequence"}}),
]


# --- pytorch-crf: a linear-chain conditional random field ---------------------------------------

TAGS = 5


class CRFDecode(nn.Module):
    """Viterbi paths of a CRF as a (batch, length) tensor, -1 past each sequence's end."""

    def __init__(self, crf):
        super().__init__()
        self.crf = crf

    def forward(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        paths = self.crf.decode(emissions, mask)
        out = torch.full(mask.shape, -1, dtype=torch.long)
        for i, path in enumerate(paths):
            out[i, : len(path)] = torch.tensor(path, dtype=torch.long)
        return out


class BiLSTMCRFTagger(nn.Module):
    """The classic sequence tagger: embeddings, a bidirectional LSTM, a CRF; forward gives
    the negative log-likelihood of `tags` per sequence and the Viterbi paths."""

    def __init__(self, vocab: int = 50, dim: int = 16, hidden: int = 16):
        super().__init__()
        from torchcrf import CRF

        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, TAGS)
        self.crf = CRF(TAGS, batch_first=True)

    def forward(self, tokens: torch.Tensor, tags: torch.Tensor):
        mask = tokens.ne(0)
        emissions = self.proj(self.lstm(self.embed(tokens))[0])
        nll = -self.crf(emissions, tags, mask=mask, reduction="none")
        paths = self.crf.decode(emissions, mask)
        best = torch.zeros_like(tags)
        for i, path in enumerate(paths):
            best[i, : len(path)] = torch.tensor(path)
        return nll, best


def _lengths_mask(batch: int, n: int, offset: int) -> torch.Tensor:
    """Sequences of different lengths (the first full, the others at least 1 long)."""
    lengths = torch.randint(1, n + 1, (batch,), generator=generator(offset + 200))
    lengths[0] = n
    return torch.arange(n)[None, :] < lengths[:, None]


def _crf_inputs(*, with_tags: bool, batch_first: bool, mask_dtype=torch.uint8, kwargs=None):
    def make() -> CaseInputs:
        def one(batch, n, offset):
            emissions = _randn(batch, n, TAGS, offset=offset)
            tags = torch.randint(0, TAGS, (batch, n), generator=generator(offset + 100))
            mask = _lengths_mask(batch, n, offset).to(mask_dtype)
            if not batch_first:
                emissions, tags, mask = emissions.transpose(0, 1), tags.t(), mask.t()
            args = (emissions, tags, mask) if with_tags else (emissions, mask)
            return Inputs(args, dict(kwargs or {}))

        return _batches(one, 7, 12, "length 12")

    return make


def _crf(batch_first: bool):
    def make():
        from torchcrf import CRF

        return CRF(TAGS, batch_first=batch_first)

    return make


def _crf_dynamic(names, batch_first: bool) -> dict:
    axes = {0: "batch", 1: "sequence"} if batch_first else {0: "sequence", 1: "batch"}
    return {n: axes for n in names}


def _tagger_inputs() -> CaseInputs:
    def one(batch, n, offset):
        mask = _lengths_mask(batch, n, offset)
        tokens = torch.randint(1, 50, (batch, n), generator=generator(offset)) * mask
        tags = torch.randint(0, TAGS, (batch, n), generator=generator(offset + 100)) * mask
        return Inputs((tokens, tags))

    return _batches(one, 7, 12, "length 12")


CRF: list[Case] = [
    Case("CRF_loglik", "torchcrf", seeded(_crf(True)),
         _crf_inputs(with_tags=True, batch_first=True), _crf_dynamic(("emissions", "tags", "mask"), True)),
    Case("CRF_loglik_time_major_token_mean", "torchcrf", seeded(_crf(False)),
         _crf_inputs(with_tags=True, batch_first=False, kwargs={"reduction": "token_mean"}),
         _crf_dynamic(("emissions", "tags", "mask"), False)),
    Case("CRF_viterbi_decode", "torchcrf", seeded(lambda: CRFDecode(_crf(True)())),
         _crf_inputs(with_tags=False, batch_first=True, mask_dtype=torch.bool),
         _crf_dynamic(("emissions", "mask"), True)),
    Case("BiLSTM_CRF_tagger", "torchcrf", seeded(BiLSTMCRFTagger), _tagger_inputs,
         {"tokens": {0: "batch", 1: "sequence"}, "tags": {0: "batch", 1: "sequence"}}),
]


# --- zuko: normalizing flows ------------------------------------------------------------

FEATURES, CONTEXT = 3, 2


class ZukoLogProb(nn.Module):
    """log p(x | c) of a zuko flow: the flow, called with the context, is a distribution."""

    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return self.flow(c).log_prob(x)


class ZukoInverse(nn.Module):
    """x = T^-1(z | c): a zuko flow's transform inverted (how it samples, without the noise)."""

    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def forward(self, z: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return self.flow(c).transform.inv(z)


def _zuko(wrapper, class_name: str, **kwargs):
    def make():
        import zuko

        return wrapper(getattr(zuko.flows, class_name)(features=FEATURES, context=CONTEXT, **kwargs))

    return make


def _flow_inputs() -> CaseInputs:
    """(batch, features) points and (batch, context) contexts; checks: other values, batch
    3, batch 1, batch 17."""

    def one(batch, _, offset):
        return Inputs((_randn(batch, FEATURES, offset=offset), _randn(batch, CONTEXT, offset=offset + 100)))

    base = _batches(one, None)
    return CaseInputs(base.example, [*base.checks, ("batch 17", one(17, None, 5))])


def _flow_case(library: str, name: str, make, first: str, second: str) -> Case:
    return Case(name, library, seeded(make), _flow_inputs, {first: {0: "batch"}, second: {0: "batch"}})


HIDDEN = dict(hidden_features=[16, 16])

ZUKO: list[Case] = [
    _flow_case("zuko", "MAF_logprob", _zuko(ZukoLogProb, "MAF", transforms=2, **HIDDEN), "x", "c"),
    _flow_case("zuko", "MAF_inverse", _zuko(ZukoInverse, "MAF", transforms=2, **HIDDEN), "z", "c"),
    _flow_case("zuko", "NSF_logprob", _zuko(ZukoLogProb, "NSF", bins=6, transforms=2, **HIDDEN), "x", "c"),
    _flow_case("zuko", "NSF_inverse", _zuko(ZukoInverse, "NSF", bins=6, transforms=2, **HIDDEN), "z", "c"),
    _flow_case("zuko", "NAF_inverse_bisection", _zuko(ZukoInverse, "NAF", transforms=1, signal=4,
                                                        network=dict(hidden_features=[8, 8]), **HIDDEN), "z", "c"),
    _flow_case("zuko", "UNAF_logprob_quadrature", _zuko(ZukoLogProb, "UNAF", transforms=1, signal=4,
                                                          network=dict(hidden_features=[8, 8]), **HIDDEN), "x", "c"),
    _flow_case("zuko", "CNF_logprob_adaptive_ode", _zuko(ZukoLogProb, "CNF", **HIDDEN), "x", "c"),
    _flow_case("zuko", "RealNVP_inverse", _zuko(ZukoInverse, "RealNVP", transforms=2, **HIDDEN), "z", "c"),
    _flow_case("zuko", "BPF_logprob", _zuko(ZukoLogProb, "BPF", degree=6, transforms=2, **HIDDEN), "x", "c"),
]


# --- vector-quantize-pytorch: quantisers ------------------------------------------------------------

def _vq(class_name: str, **kwargs):
    def make():
        import vector_quantize_pytorch

        return getattr(vector_quantize_pytorch, class_name)(**kwargs)

    return make


def _sequence_case(library: str, name: str, make, dim: int, *, length=8, other_length=13, input_name="x",
                   mask=False) -> Case:
    """(batch, length, dim) features; with `mask`, a boolean padding mask (batch, length)."""

    def inputs() -> CaseInputs:
        def one(batch, n, offset):
            x = _randn(batch, n, dim, offset=offset)
            return Inputs((x, _lengths_mask(batch, n, offset))) if mask else Inputs((x,))

        return _batches(one, length, other_length, f"length {other_length}")

    dynamic = {input_name: {0: "batch", 1: "sequence"}}
    if mask:
        dynamic["mask"] = {0: "batch", 1: "sequence"}
    return Case(name, library, seeded(make), inputs, dynamic)


VQ = "vector_quantize_pytorch"
VECTOR_QUANTIZE: list[Case] = [
    _sequence_case(VQ, "VectorQuantize_cosine", _vq("VectorQuantize", dim=16, codebook_size=32, codebook_dim=8,
                                                     use_cosine_sim=True), 16),
    _sequence_case(VQ, "ResidualVQ", _vq("ResidualVQ", dim=16, num_quantizers=3, codebook_size=32), 16),
    _sequence_case(VQ, "FSQ", _vq("FSQ", levels=[8, 5, 5], dim=16), 16, input_name="z"),
    _sequence_case(VQ, "LFQ", _vq("LFQ", dim=16, codebook_size=256), 16),
    _sequence_case(VQ, "ResidualFSQ", _vq("ResidualFSQ", levels=[8, 5, 5], num_quantizers=3, dim=16), 16),
]


# --- attention and MLP variants of lucidrains' packages ------------------------------------------------

VOCAB = 64


def _token_inputs(length=16, other_length=24, *, mask=False):
    def make() -> CaseInputs:
        def one(batch, n, offset):
            ids = torch.randint(0, VOCAB, (batch, n), generator=generator(offset))
            return Inputs((ids, _lengths_mask(batch, n, offset))) if mask else Inputs((ids,))

        return _batches(one, length, other_length, f"length {other_length}")

    return make


def _tokens_dynamic(mask=False, name="x") -> dict:
    return {name: {0: "batch", 1: "sequence"}, **({"mask": {0: "batch", 1: "sequence"}} if mask else {})}


def _perceiver():
    from perceiver_pytorch import Perceiver

    return Perceiver(input_channels=3, input_axis=2, num_freq_bands=4, max_freq=8.0, depth=2, num_latents=8,
                     latent_dim=32, cross_heads=1, latent_heads=4, cross_dim_head=8, latent_dim_head=8,
                     num_classes=10, self_per_cross_attn=1)


def _perceiver_inputs() -> CaseInputs:
    def one(batch, size, offset):  # channels last: (batch, height, width, channels)
        return Inputs((_randn(batch, *size, 3, offset=offset),))

    return _batches(one, (8, 8), (12, 6), "size 12x6")


class PerceiverIOTokens(nn.Module):
    """Perceiver IO over token embeddings, decoded at one query per input position."""

    def __init__(self):
        super().__init__()
        from perceiver_pytorch import PerceiverIO

        self.embed = nn.Embedding(VOCAB, 32)
        self.positions = nn.Embedding(64, 32)
        self.io = PerceiverIO(depth=2, dim=32, queries_dim=32, logits_dim=VOCAB, num_latents=8, latent_dim=32,
                              cross_heads=1, latent_heads=4, cross_dim_head=8, latent_dim_head=8)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        positions = self.positions(torch.arange(n, device=x.device))
        data = self.embed(x) + positions
        queries = positions.unsqueeze(0).expand(x.shape[0], -1, -1)
        return self.io(data, mask=mask, queries=queries)


def _performer(**kwargs):
    def make():
        from performer_pytorch import PerformerLM

        return PerformerLM(num_tokens=VOCAB, max_seq_len=64, dim=32, depth=2, heads=4, dim_head=8, nb_features=16,
                           **kwargs)

    return make


def _nystromformer():
    from nystrom_attention import Nystromformer

    return Nystromformer(dim=32, depth=2, dim_head=8, heads=4, num_landmarks=4, pinv_iterations=6,
                         attn_values_residual_conv_kernel=5)


def _nystrom_attention():
    from nystrom_attention import NystromAttention

    return NystromAttention(dim=32, dim_head=8, heads=4, num_landmarks=4, pinv_iterations=4, residual=False)


def _conformer():
    from conformer import Conformer

    return Conformer(dim=32, depth=2, dim_head=8, heads=4, ff_mult=2, conv_expansion_factor=2, conv_kernel_size=7)


def _local_transformer():
    from local_attention import LocalTransformer

    return LocalTransformer(num_tokens=VOCAB, max_seq_len=64, dim=32, depth=2, causal=True,
                            local_attn_window_size=4, dim_head=8, heads=4, ff_mult=2, num_residual_streams=1)


class LocalSelfAttention(nn.Module):
    """Multi-head self-attention whose attention is local_attention's windowed kernel
    (non-causal, one window back and forward, padded to whole windows)."""

    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        from local_attention import LocalAttention

        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)
        self.attention = LocalAttention(window_size=4, causal=False, look_backward=1, look_forward=1, autopad=True,
                                        dim=dim // heads, use_rotary_pos_emb=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        out = self.attention(q, k, v, mask=mask)
        return self.out(out.transpose(1, 2).reshape(b, n, d))


class RotarySelfAttention(nn.Module):
    """Causal self-attention with rotary position embeddings (rotary-embedding-torch's
    cached frequencies, with xpos scaling)."""

    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        from rotary_embedding_torch import RotaryEmbedding

        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)
        self.rotary = RotaryEmbedding(dim=dim // heads // 2, use_xpos=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        q, k = self.rotary.rotate_queries_and_keys(q, k)
        out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(out.transpose(1, 2).reshape(b, n, d))


def _mixer():
    from mlp_mixer_pytorch import MLPMixer

    return MLPMixer(image_size=32, channels=3, patch_size=8, dim=32, depth=2, num_classes=10)


def _gmlp():
    from g_mlp_pytorch import gMLP

    return gMLP(num_tokens=VOCAB, dim=32, depth=2, seq_len=16, causal=True, circulant_matrix=True, heads=2)


def _resmlp():
    from res_mlp_pytorch import ResMLP

    return ResMLP(image_size=32, patch_size=8, dim=32, depth=2, num_classes=10)


ATTENTION: list[Case] = [
    Case("Perceiver_image", "perceiver_pytorch", seeded(_perceiver), _perceiver_inputs,
         {"data": {0: "batch", 1: "height", 2: "width"}}),
    Case("PerceiverIO_tokens", "perceiver_pytorch", seeded(PerceiverIOTokens), _token_inputs(mask=True),
         _tokens_dynamic(mask=True)),
    Case("PerformerLM_causal", "performer_pytorch", seeded(_performer(causal=True)), _token_inputs(),
         _tokens_dynamic()),
    Case("PerformerLM_local_heads", "performer_pytorch",
         seeded(_performer(local_attn_heads=2, local_window_size=8, ff_glu=True)), _token_inputs(),
         _tokens_dynamic()),
    _sequence_case("nystrom_attention", "Nystromformer_masked", _nystromformer, 32, length=10, other_length=15,
                   mask=True),
    _sequence_case("nystrom_attention", "NystromAttention", _nystrom_attention, 32, length=10, other_length=15),
    _sequence_case("conformer", "Conformer", _conformer, 32, length=10, other_length=15),
    Case("LocalTransformer_causal", "local_attention", seeded(_local_transformer), _token_inputs(),
         _tokens_dynamic()),
    _sequence_case("local_attention", "LocalAttention_autopad", LocalSelfAttention, 32, length=10, other_length=15,
                   mask=True),
    _sequence_case("rotary_embedding_torch", "RotarySelfAttention_xpos", RotarySelfAttention, 32, length=10,
                   other_length=15),
    _image("mlp_mixer_pytorch", "MLPMixer", _mixer, input_name="input"),
    Case("gMLP_causal_circulant", "g_mlp_pytorch", seeded(_gmlp), _token_inputs(16, None), {"x": {0: "batch"}}),
    _image("res_mlp_pytorch", "ResMLP", _resmlp, input_name="input"),
]

CASES: list[Case] = [*SPANDREL, *ESM, *CRF, *ZUKO, *VECTOR_QUANTIZE, *ATTENTION]


def main(argv=None) -> int:
    return cli(argv, description=__doc__.splitlines()[0], cases=CASES, libs=LIBS, setup=setup)


if __name__ == "__main__":
    sys.exit(main())
