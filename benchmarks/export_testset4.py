"""The fourth held-out export test set of issue 24: model configurations of libraries that
no measurement of the project has used, pinned before it is run, run once.

Like the second and third sets (`benchmarks/export_testset2.py`, `export_testset3.py`),
every configuration comes from a pure-Python library that appears nowhere in
`benchmarks/`, `tests/` or `corpora/`: not the zoo's or the first set's, not the second
or third set's, not the issue-23 check test sets'. The kinds differ from the earlier
sets': selective state spaces with a parallel scan or a Python loop over time,
bidirectional, and a hybrid with attention and experts (mambapy), recurrences computed
in log space by cumulative sums (minGRU-pytorch), signal processing by sinc filters, FFT
convolutions and fractional resampling (julius), music source separation from waveforms
and spectrograms (demucs), implicit neural representations with sine activations on a
coordinate grid (siren-pytorch), soft mixtures of experts (soft-moe-pytorch), soft
subword tokenization by block scores (charformer-pytorch), attention over point clouds
and rigid frames (point-transformer-pytorch, invariant-point-attention), agent-token
attention (agent-attention-pytorch), U-nets with nested U-nets (x-unet), fixed-count iterations
over images (hamburger-pytorch's matrix factorization, GLOM's column consensus),
Kronecker and global self-attention over images (kronecker-attention-pytorch,
gsa-pytorch), and token-shift and ReLU-attention language models (token-shift-gpt,
rela-transformer). Where a user feeds a library's model a condition it takes only as a
tuple of tensors (siren-pytorch's modulations) or continues a recurrence from a given
state, a small wrapper module below calls it the way a user's model would.

Every model is built from code with a tiny config and seeded random weights, in eval();
nothing is downloaded at run time, and nothing needs the network. Each case is measured
exactly as the earlier sets': untrace, the legacy tracer and `dynamo=True`, judged on
onnxruntime against eager PyTorch on inputs that differ from the example in values and
in batch, length, number of points or residues, image size, clip shape or signal length
(`benchmarks/zoo/harness.py`).

The libraries are read from a folder put on sys.path (default `.testset4-libs/` at the
repository root), made by `--setup` with `pip download --no-deps` of the pinned versions:

    python benchmarks/export_testset4.py --setup
    python benchmarks/export_testset4.py --eager-only      # build and call each case; export nothing
    python benchmarks/export_testset4.py [--only NAME ...] [--library LIB] [--threads 1]
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
from benchmarks.export_testset2 import _batches, _image, _lengths_mask, _randn, _sequence_case  # noqa: E402
from benchmarks.export_testset3 import _build, _id_inputs, _ids_dynamic  # noqa: E402
from benchmarks.zoo.cases import Case, CaseInputs, Inputs, generator, seeded  # noqa: E402

LIBS = ROOT / ".testset4-libs"

# The libraries measured, and the pure-Python packages they import, at the versions the
# set was pinned with; `--setup` fetches exactly these.
PINNED = {
    "mambapy": "1.2.0",
    "minGRU-pytorch": "0.2.1",
    "julius": "0.2.8",
    "demucs": "4.1.0",
    "siren-pytorch": "0.1.7",
    "soft-moe-pytorch": "0.1.9",
    "charformer-pytorch": "0.0.4",
    "point-transformer-pytorch": "0.1.5",
    "invariant-point-attention": "0.2.2",
    "agent-attention-pytorch": "0.1.7",
    "x-unet": "0.5.0",
    "hamburger-pytorch": "0.0.3",
    "glom-pytorch": "0.0.14",
    "kronecker-attention-pytorch": "0.0.6",
    "gsa-pytorch": "0.2.2",
    "token-shift-gpt": "0.0.2",
    "rela-transformer": "0.0.7",
    # imported by the above
    "einops": "0.8.2",
    "torch-einops-utils": "0.2.0",
}
# What the cases also import, from the project's virtualenv when pinned.
ALSO = {"torch": "2.13.0+cpu", "numpy": "2.4.6", "packaging": "26.4", "typing_extensions": "4.16.0"}


def setup(folder: Path = LIBS) -> None:
    fetch(folder, PINNED)


def _ids_case(library: str, name: str, make, length=12, other_length=17, input_name="x") -> Case:
    return Case(name, library, seeded(make), _id_inputs(length, other_length), _ids_dynamic(input_name))


# --- state spaces and recurrences: mambapy, minGRU-pytorch ---------------------------------------

DIM = 16


def _mamba(module: str, class_name: str, config: str = "MambaConfig", **kwargs):
    def make():
        lib = importlib.import_module(module)
        return getattr(lib, class_name)(getattr(lib, config)(**kwargs))

    return make


class PrevHiddenMinGRU(nn.Module):
    """A minGRU continuing from a given hidden state (a chunk of a longer stream), returning
    its outputs and the hidden state to continue from (minGRU's flag for that is a bool
    argument, not a tensor)."""

    def __init__(self):
        super().__init__()
        from minGRU_pytorch.minGRU import minGRU

        self.cell = minGRU(DIM, expansion_factor=1.5)

    def forward(self, x: torch.Tensor, prev_hidden: torch.Tensor):
        return self.cell(x, prev_hidden, return_next_prev_hidden=True)


def _prev_hidden_inputs() -> CaseInputs:
    def one(batch, n, offset):
        # minGRU's hidden states are positive (its log-space scan takes their log)
        return Inputs((_randn(batch, n, DIM, offset=offset), torch.rand(batch, 1, 24, generator=generator(offset + 900))
                       + 0.1))

    return _batches(one, 10, 16, "length 16")


RECURRENCES: list[Case] = [
    _sequence_case("mambapy", "Mamba_parallel_scan", _mamba("mambapy.mamba", "Mamba", d_model=DIM, n_layers=2,
                                                            d_state=8), DIM, length=16, other_length=13),
    _sequence_case("mambapy", "Mamba_sequential_scan", _mamba("mambapy.mamba", "Mamba", d_model=DIM, n_layers=2,
                                                              d_state=8, pscan=False), DIM, length=9,
                   other_length=14),
    _sequence_case("mambapy", "Mamba_inner_layernorms_mup", _mamba("mambapy.mamba", "Mamba", d_model=DIM,
                                                                   n_layers=1, d_state=4, dt_rank=4,
                                                                   inner_layernorms=True, mup=True,
                                                                   mup_base_width=8, bias=True), DIM),
    _sequence_case("mambapy", "VMamba_bidirectional", _mamba("mambapy.vim", "VMamba", d_model=DIM, n_layers=2,
                                                             d_state=8), DIM, length=12, other_length=7),
    _ids_case("mambapy", "JambaLM_experts",
              _mamba("mambapy.jamba", "JambaLM", "JambaLMConfig", d_model=DIM, n_layers=4, mlp_size=32, d_state=8,
                     num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                     vocab_size=64, attn_layer_offset=1, attn_layer_period=2, expert_layer_offset=1,
                     expert_layer_period=2), 12, 9, input_name="tokens"),
    _sequence_case("minGRU_pytorch", "minGRU_expanded", _build("minGRU_pytorch.minGRU", "minGRU", dim=DIM,
                                                               expansion_factor=2.0), DIM),
    _sequence_case("minGRU_pytorch", "minLSTM", _build("minGRU_pytorch.minLSTM", "minLSTM", dim=DIM), DIM),
    Case("minGRU_prev_hidden", "minGRU_pytorch", seeded(PrevHiddenMinGRU), _prev_hidden_inputs,
         {"x": {0: "batch", 1: "sequence"}, "prev_hidden": {0: "batch"}}),
    _ids_case("minGRU_pytorch", "minLM_lstm_conv",
              _build("minGRU_pytorch.minLM", "minLM", num_tokens=64, dim=DIM, depth=2, use_lstm=True,
                     enable_conv=True), 12, 17),
]


# --- signals and audio: julius, demucs ------------------------------------------------------------


def _signal_case(library: str, name: str, make, *, channels=(2,), length=400, other_length=523,
                 input_name="input") -> Case:
    """(batch, *channels, length) signals; checks: other values, batch 3, batch 1, another
    length."""

    def inputs() -> CaseInputs:
        def one(batch, n, offset):
            return Inputs((_randn(batch, *channels, n, offset=offset),))

        return _batches(one, length, other_length, f"length {other_length}")

    return Case(name, library, seeded(make), inputs, {input_name: {0: "batch", len(channels) + 1: "time"}})


SIGNALS: list[Case] = [
    _signal_case("julius", "ResampleFrac_5_to_3", _build("julius", "ResampleFrac", old_sr=5, new_sr=3, zeros=8),
                 input_name="x"),
    _signal_case("julius", "LowPassFilters_conv", _build("julius", "LowPassFilters", cutoffs=[0.05, 0.2], fft=False)),
    _signal_case("julius", "BandPassFilter_fft_stride",
                 _build("julius", "BandPassFilter", cutoff_low=0.1, cutoff_high=0.3, stride=2, fft=True)),
    _signal_case("julius", "HighPassFilters_unpadded", _build("julius", "HighPassFilters", cutoffs=[0.1, 0.25],
                                                              pad=False, zeros=4)),
    _signal_case("julius", "SplitBands", _build("julius", "SplitBands", sample_rate=16000, n_bands=4)),
    _signal_case("julius", "FFTConv1d_strided", _build("julius", "FFTConv1d", in_channels=2, out_channels=4,
                                                       kernel_size=33, stride=2, padding=4)),
    _signal_case("demucs", "Demucs_waveform",
                 _build("demucs.demucs", "Demucs", sources=["a", "b"], audio_channels=2, channels=8, depth=3,
                        lstm_layers=1, kernel_size=4, stride=2, norm_starts=2, norm_groups=2, dconv_comp=4,
                        dconv_attn=2, dconv_lstm=3, resample=False, samplerate=400, segment=2),
                 length=600, other_length=777, input_name="mix"),
    _signal_case("demucs", "HDemucs_hybrid",
                 _build("demucs.hdemucs", "HDemucs", sources=["a", "b"], audio_channels=2, channels=8, depth=3,
                        nfft=64, norm_starts=2, norm_groups=2, dconv_comp=4, dconv_attn=3, dconv_lstm=3,
                        samplerate=800, segment=1),
                 length=800, other_length=950, input_name="mix"),
    _signal_case("demucs", "HTDemucs_cross_transformer",
                 _build("demucs.htdemucs", "HTDemucs", sources=["a", "b"], audio_channels=2, channels=8, depth=3,
                        nfft=256, norm_starts=2, norm_groups=2, dconv_comp=4, bottom_channels=16, t_layers=2,
                        t_heads=2, samplerate=800, segment=1),
                 length=800, other_length=700, input_name="mix"),
]


# --- implicit representations: siren-pytorch ---------------------------------------------------


def _coordinates_inputs(dim_in=2):
    def make() -> CaseInputs:
        def one(batch, _, offset):
            coords = torch.rand(batch, dim_in, generator=generator(offset)) * 2 - 1
            return Inputs((coords,))

        return _batches(one, None)

    return make


class ModulatedSiren(nn.Module):
    """A SIREN whose hidden layers are modulated by a latent code's projection, one vector
    shared by all coordinates (siren-pytorch's `mods` takes a tuple of them, one a layer)."""

    def __init__(self):
        super().__init__()
        from siren_pytorch import SirenNet

        self.net = SirenNet(dim_in=2, dim_hidden=16, dim_out=3, num_layers=3, final_activation=nn.Sigmoid())
        self.to_mods = nn.Linear(8, 16)

    def forward(self, coords: torch.Tensor, latent: torch.Tensor) -> torch.Tensor:
        mod = self.to_mods(latent).relu()
        return self.net(coords, (mod, mod, mod))


def _modulated_inputs() -> CaseInputs:
    def one(batch, _, offset):
        return Inputs((torch.rand(batch, 2, generator=generator(offset)) * 2 - 1, _randn(8, offset=offset + 700)))

    return _batches(one, None)


def _siren_wrapper():
    from siren_pytorch import SirenNet, SirenWrapper

    return SirenWrapper(SirenNet(dim_in=2, dim_hidden=16, dim_out=3, num_layers=3), image_width=6, image_height=5,
                        latent_dim=8)


def _latent_inputs() -> CaseInputs:
    latent = lambda offset: Inputs((), {"latent": _randn(8, offset=offset)})  # noqa: E731
    return CaseInputs(latent(0), [("other values", latent(1)), ("third latent", latent(2))])


SIREN: list[Case] = [
    Case("SirenNet", "siren_pytorch", seeded(_build("siren_pytorch", "SirenNet", dim_in=2, dim_hidden=16, dim_out=1,
                                                    num_layers=3, w0_initial=30.0)),
         _coordinates_inputs(), {"x": {0: "points"}}),
    Case("SirenNet_modulated", "siren_pytorch", seeded(ModulatedSiren), _modulated_inputs,
         {"coords": {0: "points"}}),
    Case("SirenWrapper_latent_image", "siren_pytorch", seeded(_siren_wrapper), _latent_inputs, {}),
]


# --- conditional computation: soft-moe-pytorch ------------------------------------------------------

CONDITIONAL: list[Case] = [
    _sequence_case("soft_moe_pytorch", "SoftMoE_slots",
                   _build("soft_moe_pytorch", "SoftMoE", dim=DIM, num_experts=4, num_slots=2, expert_mult=2), DIM),
    _sequence_case("soft_moe_pytorch", "SoftMoE_geglu_layernorm_masked",
                   _build("soft_moe_pytorch", "SoftMoE", dim=DIM, seq_len=8, num_experts=2, expert_mult=2,
                          geglu=True, use_layernorm=True), DIM, mask=True),
    _sequence_case("soft_moe_pytorch", "DynamicSlotsSoftMoE_masked",
                   _build("soft_moe_pytorch", "DynamicSlotsSoftMoE", dim=DIM, num_experts=4, expert_mult=2),
                   DIM, length=8, other_length=13, mask=True),
]


# --- tokens, points, rigid frames: charformer, point transformer, IPA, agent attention -------------


GBST_CASES: list[Case] = [
    Case("GBST", "charformer_pytorch", seeded(_build("charformer_pytorch", "GBST", num_tokens=64, dim=DIM,
                                                      max_block_size=4, downsample_factor=4)),
         _id_inputs(16, 22), _ids_dynamic("x")),
    Case("GBST_masked_blocks_offsets", "charformer_pytorch",
         seeded(_build("charformer_pytorch", "GBST", num_tokens=64, dim=DIM, blocks=((1, 0), (2, 0), (3, 1), (4, 2)),
                       downsample_factor=2, score_consensus_attn=False)),
         _id_inputs(12, 17, mask=True), _ids_dynamic("x", mask=True)),
]


def _points_inputs(*, mask=False, points=10, other_points=14):
    def make() -> CaseInputs:
        def one(batch, n, offset):
            args = (_randn(batch, n, DIM, offset=offset), _randn(batch, n, 3, offset=offset + 100))
            return Inputs(args, {"mask": _lengths_mask(batch, n, offset)} if mask else {})

        return _batches(one, points, other_points, f"{other_points} points")

    return make


def _points_dynamic(mask=False) -> dict:
    axes = {"x": {0: "batch", 1: "points"}, "pos": {0: "batch", 1: "points"}}
    return {**axes, **({"mask": {0: "batch", 1: "points"}} if mask else {})}


def _rotations(batch: int, n: int, offset: int) -> torch.Tensor:
    """(batch, n, 3, 3) proper rotations: the Q of random matrices, signed to det +1."""
    q, _ = torch.linalg.qr(_randn(batch, n, 3, 3, offset=offset))
    return q * torch.linalg.det(q)[..., None, None]


def _frames_inputs(*, pairwise: int = 0, mask=False):
    """Residues (batch, n, 16) with rigid frames (rotations, translations); with
    `pairwise`, a pair representation (batch, n, n, pairwise)."""

    def make() -> CaseInputs:
        def one(batch, n, offset):
            args = [_randn(batch, n, DIM, offset=offset)]
            if pairwise:
                args.append(_randn(batch, n, n, pairwise, offset=offset + 100))
            kwargs = {"rotations": _rotations(batch, n, offset + 200),
                      "translations": _randn(batch, n, 3, offset=offset + 300)}
            if mask:
                kwargs["mask"] = _lengths_mask(batch, n, offset)
            return Inputs(tuple(args), kwargs)

        return _batches(one, 7, 11, "11 residues")

    return make


def _frames_dynamic(first: str, pairwise=False, mask=False) -> dict:
    axes = {first: {0: "batch", 1: "residues"}, "rotations": {0: "batch", 1: "residues"},
            "translations": {0: "batch", 1: "residues"}}
    if pairwise:
        axes["pairwise_repr"] = {0: "batch", 1: "residues", 2: "residues"}
    if mask:
        axes["mask"] = {0: "batch", 1: "residues"}
    return axes


IPA = dict(dim=DIM, heads=2, scalar_key_dim=8, scalar_value_dim=8, point_key_dim=4, point_value_dim=4)

STRUCTURE: list[Case] = [
    *GBST_CASES,
    Case("PointTransformerLayer", "point_transformer_pytorch",
         seeded(_build("point_transformer_pytorch", "PointTransformerLayer", dim=DIM, pos_mlp_hidden_dim=16,
                       attn_mlp_hidden_mult=2)),
         _points_inputs(), _points_dynamic()),
    Case("MultiheadPointTransformerLayer_knn_masked", "point_transformer_pytorch",
         seeded(_build("point_transformer_pytorch", "MultiheadPointTransformerLayer", dim=DIM, heads=2, dim_head=8,
                       pos_mlp_hidden_dim=16, attn_mlp_hidden_mult=2, num_neighbors=4)),
         _points_inputs(mask=True), _points_dynamic(mask=True)),
    Case("InvariantPointAttention_pairwise_masked", "invariant_point_attention",
         seeded(_build("invariant_point_attention", "InvariantPointAttention", pairwise_repr_dim=4, **IPA)),
         _frames_inputs(pairwise=4, mask=True), _frames_dynamic("single_repr", pairwise=True, mask=True)),
    Case("InvariantPointAttention_no_pairwise", "invariant_point_attention",
         seeded(_build("invariant_point_attention", "InvariantPointAttention", require_pairwise_repr=False, **IPA)),
         _frames_inputs(), _frames_dynamic("single_repr")),
    _sequence_case("agent_attention_pytorch", "AgentTransformer_masked",
                   _build("agent_attention_pytorch", "AgentTransformer", dim=DIM, num_agent_tokens=4, depth=2,
                          heads=2, dim_head=8, ff_mult=2), DIM, mask=True),
    _sequence_case("agent_attention_pytorch", "AgentSelfAttention_combined_agents",
                   _build("agent_attention_pytorch", "AgentSelfAttention", dim=DIM, num_agent_tokens=3, heads=2,
                          dim_head=8, talking_heads=False, combine_agent_tokens=True), DIM),
]


# --- U-nets: x-unet ---------------------------------------------------------------------------


def _clip_inputs() -> CaseInputs:
    """(batch, 8, frames, height, width) clips; height and width multiples of 8 (three
    halvings)."""

    def one(batch, shape, offset):
        return Inputs((_randn(batch, 8, *shape, offset=offset),))

    return _batches(one, (2, 16, 16), (3, 24, 16), "3 frames of 24x16")

UNETS: list[Case] = [
    _image("x_unet", "XUnet_attention_xattnres",
           _build("x_unet", "XUnet", dim=8, dim_mults=(1, 2, 4), num_blocks_per_stage=(1, 1, 1),
                  num_self_attn_per_stage=(0, 0, 1), nested_unet_depths=(0, 0, 0), attn_heads=2, attn_dim_head=8,
                  use_xattnres=True, weight_standardize=True), (16, 16), other_size=(24, 32)),
    _image("x_unet", "XUnet_nested_convnext",
           _build("x_unet", "XUnet", dim=8, dim_mults=(1, 2), num_blocks_per_stage=(1, 1),
                  num_self_attn_per_stage=(0, 0), nested_unet_depths=(2, 1), nested_unet_dim=8, use_convnext=True,
                  consolidate_upsample_fmaps=False), (16, 16), other_size=(32, 16)),
    Case("NestedResidualUnet_clip", "x_unet", seeded(_build("x_unet", "NestedResidualUnet", dim=8, depth=3,
                                                             dim_inner=8, add_residual=True)),
         _clip_inputs, {"x": {0: "batch", 2: "frames", 3: "height", 4: "width"}}),
]


# --- iterations and attention over images: hamburger, GLOM, Kronecker and global self-attention ----------


def _glom(**kwargs):
    return _build("glom_pytorch", "Glom", dim=16, levels=3, image_size=16, patch_size=4, **kwargs)


IMAGE_ITERATIONS: list[Case] = [
    _image("hamburger_pytorch", "Hamburger_NMF", _build("hamburger_pytorch", "Hamburger", dim=16, n=64, inner_dim=16,
                                                       ratio=4, K=6), (8, 8), channels=16),
    _image("hamburger_pytorch", "Hamburger_NMF_one_step", _build("hamburger_pytorch", "Hamburger", dim=8, n=48,
                                                                ratio=2, K=1), (6, 8), channels=8),
    _image("glom_pytorch", "Glom_column_iterations", _glom(), (16, 16), input_name="img"),
    _image("glom_pytorch", "Glom_local_consensus_self", _glom(consensus_self=True, local_consensus_radius=1),
           (16, 16), input_name="img"),
    _image("kronecker_attention_pytorch", "KroneckerSelfAttention",
           _build("kronecker_attention_pytorch", "KroneckerSelfAttention", dim=16, heads=2, dim_heads=8), (8, 8),
           other_size=(12, 6), channels=16),
    _image("gsa_pytorch", "GSA_content_only", _build("gsa_pytorch", "GSA", dim=16, heads=2, dim_key=8,
                                                     norm_queries=True), (8, 8), other_size=(12, 10), channels=16,
           input_name="img"),
    _image("gsa_pytorch", "GSA_relative_positions", _build("gsa_pytorch", "GSA", dim=16, dim_out=24,
                                                           rel_pos_length=8, heads=2, dim_key=8), (8, 8),
           other_size=(6, 8), channels=16, input_name="img"),
]

# --- token language models: token-shift-gpt, ReLA -----------------------------------------------------------

TOKEN_MODELS: list[Case] = [
    _ids_case("token_shift_gpt", "TokenShiftGPT",
              _build("token_shift_gpt", "TokenShiftGPT", num_tokens=64, dim=16, max_seq_len=32, depth=2, ff_mult=2)),
    Case("ReLATransformer_causal_masked", "rela_transformer",
         seeded(_build("rela_transformer", "ReLATransformer", num_tokens=64, dim=16, depth=2, max_seq_len=32,
                       heads=2, dim_head=8, ff_mult=2)),
         _id_inputs(12, 17, mask=True), _ids_dynamic("x", mask=True)),
    _ids_case("rela_transformer", "ReLATransformer_memory_relu_squared",
              _build("rela_transformer", "ReLATransformer", num_tokens=64, dim=16, depth=2, max_seq_len=32,
                     causal=False, heads=2, dim_head=8, num_memory_kv=2, relu_squared=True)),
]

CASES: list[Case] = [*RECURRENCES, *SIGNALS, *SIREN, *CONDITIONAL, *STRUCTURE, *UNETS, *IMAGE_ITERATIONS,
                     *TOKEN_MODELS]


def main(argv=None) -> int:
    return cli(argv, description=__doc__.splitlines()[0], cases=CASES, libs=LIBS, setup=setup)


if __name__ == "__main__":
    sys.exit(main())
