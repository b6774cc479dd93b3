"""The third held-out export test set of issue 24: model configurations of libraries that
no measurement of the project has used, pinned before it is run, run once.

Like the second set (`benchmarks/export_testset2.py`), every configuration comes from a
pure-Python library that appears nowhere in `benchmarks/`, `tests/` or `corpora/`: not the
zoo's or the first set's, not the second set's, not the issue-23 check test sets'. The
kinds differ from the second set's: tabular networks (rtdl's revisiting models,
tab-transformer-pytorch, TabNet's ghost batch norm and sparsemax/entmax masks),
continuous-time recurrences stepped in Python over time (ncps' CfC and LTC, with neural
circuit wirings), temporal convolutions (pytorch-tcn), E(n)-equivariant graph networks on
coordinates, with nearest neighbours and adjacency degrees (egnn-pytorch), a multiscale
byte model and a pathways decoder with greedy generation loops (MEGABYTE-pytorch,
PaLM-pytorch), a contrastive captioner (CoCa-pytorch), and attention over images and
clips of lucidrains' packages not used so far (axial, lambda, halo, bottleneck,
Segformer). Where a user drives a library's model in a loop (greedy decoding), feeds it
a condition or cuts its output (MEGABYTE's padded patches), a small wrapper module below
calls it the way a user's model would.

Every model is built from code with a tiny config and seeded random weights, in eval();
nothing is downloaded at run time, and nothing needs the network. Each case is measured
exactly as the first and second sets': untrace, the legacy tracer and `dynamo=True`,
judged on onnxruntime against eager PyTorch on inputs that differ from the example in
values and in batch, length, graph size or image size (`benchmarks/zoo/harness.py`).

The libraries are read from a folder put on sys.path (default `.testset3-libs/` at the
repository root), made by `--setup` with `pip download --no-deps` of the pinned versions:

    python benchmarks/export_testset3.py --setup
    python benchmarks/export_testset3.py --eager-only      # build and call each case; export nothing
    python benchmarks/export_testset3.py [--only NAME ...] [--library LIB] [--threads 1]
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
from benchmarks.export_testset2 import _batches, _image, _lengths_mask, _randn  # noqa: E402
from benchmarks.zoo.cases import Case, CaseInputs, Inputs, generator, seeded  # noqa: E402

LIBS = ROOT / ".testset3-libs"

# The libraries measured, and the pure-Python packages they import, at the versions the
# set was pinned with; `--setup` fetches exactly these.
PINNED = {
    "rtdl-revisiting-models": "0.0.2",
    "tab-transformer-pytorch": "0.6.1",
    "pytorch-tabnet": "4.1.0",
    "ncps": "1.0.1",
    "pytorch-tcn": "1.2.3",
    "egnn-pytorch": "0.2.8",
    "megabyte-pytorch": "0.3.6",
    "palm-pytorch": "0.2.2",
    "coca-pytorch": "0.1.0",
    "axial-attention": "0.6.1",
    "lambda-networks": "0.4.0",
    "halonet-pytorch": "0.0.5",
    "bottleneck-transformer-pytorch": "0.1.4",
    "segformer-pytorch": "0.0.6",
    # imported by the above
    "einops": "0.8.2",
    "einx": "0.4.3",
    "frozendict": "2.5.1",
    "loguru": "0.7.3",
    "torch-einops-utils": "0.2.0",
    "hyper-connections": "0.4.11",
    "discrete-continuous-embed-readout": "0.2.12",
    "x-mlps-pytorch": "0.6.9",
    "beartype": "0.23.1",
}
# What the cases also import, from the project's virtualenv when pinned.
ALSO = {"torch": "2.13.0+cpu", "numpy": "2.4.6", "packaging": "26.4", "typing_extensions": "4.16.0"}


def setup(folder: Path = LIBS) -> None:
    fetch(folder, PINNED)


def _python_seeded(make):
    """`make` with Python's `random` seeded too: hyper-connections picks each layer's
    initial residual stream with `random.randrange`."""

    def build():
        import random

        random.seed(0)
        return make()

    return build


def _build(module: str, name: str, **kwargs):
    def make():
        return getattr(importlib.import_module(module), name)(**kwargs)

    return make


def _with_batch_17(base: CaseInputs, one) -> CaseInputs:
    """`base` and a check of batch 17 (`one(17, None, 5)`: rows without a length)."""
    return CaseInputs(base.example, [*base.checks, ("batch 17", one(17, None, 5))])


# --- tabular: rtdl's revisiting models, tab-transformer-pytorch, TabNet ---------------------------

CONT, CATEGORIES = 4, (3, 5, 4)


def _categories(batch: int, offset: int, *, special: bool = False) -> torch.Tensor:
    """(batch, 3) category indices; with `special`, some are -1 or -2 (tab-transformer's
    special tokens)."""
    cats = torch.stack([torch.randint(0, c, (batch,), generator=generator(offset + 300 + i))
                        for i, c in enumerate(CATEGORIES)], dim=1)
    if special:
        cats[0, 0] = -1
        cats[-1, 2] = -2
    return cats


def _tabular_inputs(*, continuous: bool = True, categorical: bool = False, cat_first: bool = False,
                    special_check: bool = False, kwargs=None):
    """Rows of continuous features and/or category indices; checks: other values, batch 3,
    batch 1, batch 17, and with `special_check` a batch with special tokens."""

    def make() -> CaseInputs:
        def one(batch, _, offset, special=False):
            args = []
            if continuous:
                args.append(_randn(batch, CONT, offset=offset))
            if categorical:
                args.append(_categories(batch, offset, special=special))
            if cat_first:
                args.reverse()
            return Inputs(tuple(args), dict(kwargs or {}))

        base = _with_batch_17(_batches(one, None), one)
        if special_check:
            return CaseInputs(base.example, [*base.checks, ("special tokens", one(4, None, 6, special=True))])
        return base

    return make


def _rows(*names) -> dict:
    return {n: {0: "batch"} for n in names}


RTDL = "rtdl_revisiting_models"
FT = dict(n_blocks=2, d_block=16, attention_n_heads=4, attention_dropout=0.0, ffn_d_hidden=None,
          ffn_d_hidden_multiplier=4 / 3, ffn_dropout=0.0, residual_dropout=0.0)


def _rtdl_default_ft():
    from rtdl_revisiting_models import FTTransformer

    return FTTransformer(n_cont_features=CONT, cat_cardinalities=list(CATEGORIES), d_out=2,
                         **FTTransformer.get_default_kwargs(n_blocks=1))


def _rtdl_mlp_case(name, class_name, **kwargs) -> Case:
    return Case(name, RTDL, seeded(_build(RTDL, class_name, d_in=CONT, **kwargs)), _tabular_inputs(), _rows("x"))


RTDL_CASES: list[Case] = [
    _rtdl_mlp_case("MLP", "MLP", d_out=1, n_blocks=2, d_block=16, dropout=0.0),
    _rtdl_mlp_case("ResNet", "ResNet", d_out=3, n_blocks=2, d_block=16, d_hidden=None, d_hidden_multiplier=2.0,
                   dropout1=0.0, dropout2=0.0),
    Case("FTTransformer", RTDL, seeded(_build(RTDL, "FTTransformer", n_cont_features=CONT,
                                              cat_cardinalities=list(CATEGORIES), d_out=1, **FT)),
         _tabular_inputs(categorical=True), _rows("x_cont", "x_cat")),
    Case("FTTransformer_linformer_relu", RTDL,
         seeded(_build(RTDL, "FTTransformer", n_cont_features=CONT, cat_cardinalities=list(CATEGORIES), d_out=1,
                       linformer_kv_compression_ratio=0.5,
                       linformer_kv_compression_sharing="headwise", ffn_activation="ReLU", **FT)),
         _tabular_inputs(categorical=True), _rows("x_cont", "x_cat")),
    Case("FTTransformer_default_1block", RTDL, seeded(_rtdl_default_ft), _tabular_inputs(categorical=True),
         _rows("x_cont", "x_cat")),
]

TAB = "tab_transformer_pytorch"
TAB_TRANSFORMER = dict(categories=CATEGORIES, num_continuous=CONT, dim=16, depth=2, heads=4, dim_head=8)


def _tab(class_name: str, **kwargs):
    """A tab-transformer-pytorch model (four residual streams by default, hyper-connections'
    choice of stream seeded); a TabTransformer's MLP gets an activation (its default None
    is passed on to the MLP as a module)."""

    def make():
        options = {**TAB_TRANSFORMER, **kwargs}
        if class_name == "TabTransformer":
            options.setdefault("mlp_act", nn.SiLU())
        return getattr(importlib.import_module(TAB), class_name)(**options)

    return _python_seeded(make)


def _tab_transformer_mean_std():
    from tab_transformer_pytorch import TabTransformer

    mean_std = torch.stack([torch.randn(CONT), torch.rand(CONT) + 0.5], dim=-1)
    return TabTransformer(**TAB_TRANSFORMER, dim_out=2, continuous_mean_std=mean_std, use_shared_categ_embed=False,
                          num_residual_streams=1, mlp_hidden_mults=(2,), mlp_act=nn.ReLU())


TAB_CASES: list[Case] = [
    Case("TabTransformer", TAB, seeded(_tab("TabTransformer", dim_out=1)),
         _tabular_inputs(categorical=True, cat_first=True, special_check=True), _rows("x_categ", "x_cont")),
    Case("TabTransformer_mean_std_one_stream", TAB, seeded(_tab_transformer_mean_std),
         _tabular_inputs(categorical=True, cat_first=True, special_check=True), _rows("x_categ", "x_cont")),
    Case("FTTransformer", TAB, seeded(_tab("FTTransformer", dim_out=2)),
         _tabular_inputs(categorical=True, cat_first=True), _rows("x_categ", "x_numer")),
    Case("FTTransformer_attention_maps", TAB,
         seeded(_tab("FTTransformer", dim_out=1, num_residual_streams=1)),
         _tabular_inputs(categorical=True, cat_first=True, kwargs={"return_attn": True}),
         _rows("x_categ", "x_numer")),
]

TABNET = "pytorch_tabnet"


def _tabnet_rows_inputs(*, categorical: bool):
    """TabNet reads one float matrix; with `categorical`, its first two columns hold
    category indices. Checks add batch 9 (three ghost batches of 4)."""

    def make() -> CaseInputs:
        def one(batch, _, offset):
            x = _randn(batch, 6, offset=offset)
            if categorical:
                x[:, 0] = torch.randint(0, 4, (batch,), generator=generator(offset + 400)).float()
                x[:, 1] = torch.randint(0, 5, (batch,), generator=generator(offset + 401)).float()
            return Inputs((x,))

        base = _with_batch_17(_batches(one, None), one)
        return CaseInputs(base.example, [*base.checks, ("batch 9", one(9, None, 6))])

    return make


def _tabnet(**kwargs):
    """pytorch-tabnet's network; each feature its own group unless `group_attention_matrix`
    says otherwise (what its TabModel passes when no groups are given)."""

    def make():
        from pytorch_tabnet.tab_network import TabNet

        return TabNet(input_dim=6, n_d=8, n_a=8, virtual_batch_size=4,
                      **{"group_attention_matrix": torch.eye(6), **kwargs})

    return make


def _tabnet_grouped():
    from pytorch_tabnet.tab_network import TabNet

    groups = torch.tensor([[0.5, 0.5, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 1 / 3, 1 / 3, 1 / 3]])
    return TabNet(input_dim=6, output_dim=2, n_d=8, n_a=8, n_steps=2, virtual_batch_size=4,
                  group_attention_matrix=groups)


TABNET_CASES: list[Case] = [
    Case("TabNet_sparsemax", TABNET, seeded(_tabnet(output_dim=3, n_steps=3)),
         _tabnet_rows_inputs(categorical=False), _rows("x")),
    Case("TabNet_entmax_embeddings", TABNET,
         seeded(_tabnet(output_dim=2, n_steps=2, cat_idxs=[0, 1], cat_dims=[4, 5], cat_emb_dim=[2, 3],
                        mask_type="entmax")),
         _tabnet_rows_inputs(categorical=True), _rows("x")),
    Case("TabNet_grouped_features", TABNET, seeded(_tabnet_grouped), _tabnet_rows_inputs(categorical=False),
         _rows("x")),
]


# --- recurrences and temporal convolutions: ncps, pytorch-tcn ----------------------------------------

FEATURES = 4


def _series_inputs(*, time_major: bool = False, channels_first: bool = False, length=10, other_length=16,
                   timespans: bool = False):
    """(batch, length, 4) series (or time-major, or channels-first); with `timespans`, the
    elapsed time of each step, one irregular time grid for the whole batch (1, length):
    ncps squeezes each step's timespans, so a per-row (batch, length) grid does not
    broadcast against the hidden state."""

    def make() -> CaseInputs:
        def one(batch, n, offset):
            x = _randn(batch, n, FEATURES, offset=offset)
            if time_major:
                x = x.transpose(0, 1).contiguous()
            if channels_first:
                x = x.transpose(1, 2).contiguous()
            if timespans:
                ts = 0.5 + torch.rand(1, n, generator=generator(offset + 500))
                return Inputs((x,), {"timespans": ts})
            return Inputs((x,))

        return _batches(one, length, other_length, f"length {other_length}")

    return make


def _series_dynamic(name: str, *, time_major=False, channels_first=False, timespans=False) -> dict:
    axes = {0: "sequence", 1: "batch"} if time_major else ({0: "batch", 2: "sequence"} if channels_first
                                                           else {0: "batch", 1: "sequence"})
    return {name: axes, **({"timespans": {1: "sequence"}} if timespans else {})}


def _ncps(class_name: str, wiring=None, **kwargs):
    def make():
        import ncps.torch
        import ncps.wirings

        options = dict(kwargs)
        units = getattr(ncps.wirings, wiring[0])(*wiring[1:]) if wiring else options.pop("units")
        return getattr(ncps.torch, class_name)(FEATURES, units, **options)

    return make


def _ncps_case(name, make, **series) -> Case:
    return Case(name, "ncps", seeded(make), _series_inputs(**series), _series_dynamic("input", **series))


def _state_inputs() -> CaseInputs:
    """A series and the recurrence's initial hidden state (batch, 12)."""

    def one(batch, n, offset):
        return Inputs((_randn(batch, n, FEATURES, offset=offset), _randn(batch, 12, offset=offset + 900)))

    return _batches(one, 10, 16, "length 16")


NCPS: list[Case] = [
    _ncps_case("CfC", _ncps("CfC", units=16)),
    _ncps_case("CfC_mixed_memory_last", _ncps("CfC", units=16, proj_size=3, mixed_memory=True,
                                              return_sequences=False)),
    _ncps_case("CfC_pure_backbone", _ncps("CfC", units=12, mode="pure", backbone_units=16, backbone_layers=2)),
    _ncps_case("CfC_no_gate_timespans", _ncps("CfC", units=12, mode="no_gate"), timespans=True),
    Case("CfC_initial_state", "ncps", seeded(_ncps("CfC", units=12)), _state_inputs,
         {"input": {0: "batch", 1: "sequence"}, "hx": {0: "batch"}}),
    _ncps_case("CfC_AutoNCP_wiring", _ncps("CfC", wiring=("AutoNCP", 12, 2))),
    _ncps_case("LTC", _ncps("LTC", units=8, ode_unfolds=3)),
    _ncps_case("LTC_linear_mappings_last", _ncps("LTC", units=8, ode_unfolds=4, input_mapping="linear",
                                                 output_mapping="linear", return_sequences=False,
                                                 implicit_param_constraints=False)),
    _ncps_case("LTC_AutoNCP_time_major", _ncps("LTC", wiring=("AutoNCP", 10, 2), batch_first=False,
                                               mixed_memory=True, ode_unfolds=2), time_major=True),
]


TCN = dict(num_inputs=FEATURES, kernel_size=3, dropout=0.0)


class TCNWithEmbedding(nn.Module):
    """A temporal convolution network conditioned on a per-series embedding (a speaker or
    station vector), concatenated to the features of each block."""

    def __init__(self):
        super().__init__()
        from pytorch_tcn import TCN as TemporalConvNet

        self.tcn = TemporalConvNet(**TCN, num_channels=[8, 8], embedding_shapes=[(3,)], embedding_mode="concat",
                                   use_norm="batch_norm")

    def forward(self, x: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        return self.tcn(x, embeddings=[condition])


def _tcn_embedding_inputs() -> CaseInputs:
    def one(batch, n, offset):
        return Inputs((_randn(batch, FEATURES, n, offset=offset), _randn(batch, 3, offset=offset + 600)))

    return _batches(one, 10, 16, "length 16")


def _tcn_case(name, *, nlc=False, **kwargs) -> Case:
    return Case(name, "pytorch_tcn", seeded(_build("pytorch_tcn", "TCN", **TCN, **kwargs)),
                _series_inputs(channels_first=not nlc), _series_dynamic("x", channels_first=not nlc))


TCN_CASES: list[Case] = [
    _tcn_case("TCN_causal_weight_norm", num_channels=[8, 8, 8]),
    _tcn_case("TCN_noncausal_skip_batch_norm", num_channels=[8, 8, 8], causal=False, use_skip_connections=True,
              use_norm="batch_norm", activation="gelu"),
    _tcn_case("TCN_NLC_gated_dilation_reset", nlc=True, num_channels=[8, 8, 8, 8], dilation_reset=4, use_gate=True,
              use_norm="layer_norm", output_projection=2, output_activation="tanh", input_shape="NLC"),
    Case("TCN_embedding_concat", "pytorch_tcn", seeded(TCNWithEmbedding), _tcn_embedding_inputs,
         {"x": {0: "batch", 2: "sequence"}, "condition": {0: "batch"}}),
]


# --- graphs: egnn-pytorch -------------------------------------------------------------------

NODE_DIM, NODE_TOKENS, EDGE_TOKENS = 16, 10, 4


def _graph_inputs(*, tokens: bool = False, mask: bool = False, adjacency: bool = False, edges: bool = False,
                  nodes=8, other_nodes=12):
    """(batch, nodes) node features (or node tokens) and 3-D coordinates; optionally a
    node mask (the first graph complete, the others shorter), a chain adjacency matrix
    (nodes, nodes) and edge tokens (batch, nodes, nodes)."""

    def make() -> CaseInputs:
        def one(batch, n, offset):
            feats = (torch.randint(0, NODE_TOKENS, (batch, n), generator=generator(offset)) if tokens
                     else _randn(batch, n, NODE_DIM, offset=offset))
            coors = _randn(batch, n, 3, offset=offset + 100)
            kwargs = {}
            if adjacency:
                i = torch.arange(n)
                kwargs["adj_mat"] = (i[:, None] - i[None, :]).abs() == 1
            if edges:
                kwargs["edges"] = torch.randint(0, EDGE_TOKENS, (batch, n, n), generator=generator(offset + 700))
            if mask:
                kwargs["mask"] = _lengths_mask(batch, n, offset)
            return Inputs((feats, coors), kwargs)

        return _batches(one, nodes, other_nodes, f"{other_nodes} nodes")

    return make


def _graph_dynamic(*, mask=False, adjacency=False, edges=False) -> dict:
    dynamic = {"feats": {0: "batch", 1: "nodes"}, "coors": {0: "batch", 1: "nodes"}}
    if adjacency:
        dynamic["adj_mat"] = {0: "nodes", 1: "nodes"}
    if edges:
        dynamic["edges"] = {0: "batch", 1: "nodes", 2: "nodes"}
    if mask:
        dynamic["mask"] = {0: "batch", 1: "nodes"}
    return dynamic


def _egnn_case(name, class_name, graph: dict, **kwargs) -> Case:
    flags = {k: v for k, v in graph.items() if k != "tokens"}
    return Case(name, "egnn_pytorch", seeded(_build("egnn_pytorch", class_name, **kwargs)), _graph_inputs(**graph),
                _graph_dynamic(**flags))


EGNN: list[Case] = [
    _egnn_case("EGNN_layer", "EGNN", {}, dim=NODE_DIM, m_dim=8),
    _egnn_case("EGNN_knn_masked_mean", "EGNN", {"mask": True}, dim=NODE_DIM, m_dim=8, num_nearest_neighbors=3,
               norm_coors=True, m_pool_method="mean"),
    _egnn_case("EGNN_fourier_soft_edges_radius", "EGNN", {}, dim=NODE_DIM, m_dim=8, fourier_features=2,
               soft_edges=True, valid_radius=2.0, coor_weights_clamp_value=2.0),
    _egnn_case("EGNN_Network_adjacency_sparse", "EGNN_Network", {"tokens": True, "mask": True, "adjacency": True},
               depth=2, dim=NODE_DIM, num_tokens=NODE_TOKENS, num_positions=32, num_nearest_neighbors=3,
               num_adj_degrees=2, adj_dim=4, only_sparse_neighbors=True, m_dim=8),
    _egnn_case("EGNN_Network_global_attention_edges", "EGNN_Network", {"tokens": True, "mask": True, "edges": True},
               depth=2, dim=NODE_DIM, num_tokens=NODE_TOKENS, num_edge_tokens=EDGE_TOKENS, edge_dim=4,
               global_linear_attn_every=1, global_linear_attn_heads=2, global_linear_attn_dim_head=8,
               num_global_tokens=2, m_dim=8),
]


# --- language models and generation: MEGABYTE, PaLM, CoCa --------------------------------------

VOCAB = 64


def _ids(batch: int, n: int, offset: int, low: int = 1) -> torch.Tensor:
    return torch.randint(low, VOCAB, (batch, n), generator=generator(offset))


def _id_inputs(length=12, other_length=16, *, mask=False, kwargs=None, name_mask="mask"):
    def make() -> CaseInputs:
        def one(batch, n, offset):
            extra = dict(kwargs or {})
            if mask:
                extra[name_mask] = _lengths_mask(batch, n, offset)
            return Inputs((_ids(batch, n, offset),), extra)

        return _batches(one, length, other_length, f"length {other_length}")

    return make


def _ids_dynamic(name: str, mask: bool = False) -> dict:
    return {name: {0: "batch", 1: "sequence"}, **({"mask": {0: "batch", 1: "sequence"}} if mask else {})}


class GreedyDecoder(nn.Module):
    """Greedy generation from a prompt: `steps` times, the language model's logits at the
    last position pick the next token, appended to the sequence; returns the generated
    tokens and their log-probabilities."""

    def __init__(self, lm: nn.Module, steps: int = 4):
        super().__init__()
        self.lm = lm
        self.steps = steps

    def forward(self, prompt: torch.Tensor):
        seq = prompt
        scores = []
        for _ in range(self.steps):
            logits = self.lm(seq)[:, -1]
            logprobs = logits.log_softmax(dim=-1)
            best = logprobs.argmax(dim=-1, keepdim=True)
            scores.append(logprobs.gather(-1, best))
            seq = torch.cat((seq, best), dim=-1)
        return seq[:, prompt.shape[1]:], torch.cat(scores, dim=-1)


class MegabyteLogits(nn.Module):
    """MEGABYTE's next-byte logits as (batch, length, vocab): the model pads the sequence to
    whole patches and returns logits per patch position; the padding is cut off here."""

    def __init__(self, **kwargs):
        super().__init__()
        from MEGABYTE_pytorch import MEGABYTE

        self.model = MEGABYTE(num_tokens=VOCAB, **kwargs)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        logits = self.model(ids)
        return logits.reshape(ids.shape[0], -1, logits.shape[-1])[:, : ids.shape[1]]


MEGABYTE_2 = dict(dim=(32, 16), depth=(1, 1), max_seq_len=(4, 4), dim_head=8, heads=2)
MEGABYTE_3 = dict(dim=(32, 24, 16), depth=(1, 1, 1), max_seq_len=(4, 2, 2), dim_head=8, heads=2, rel_pos=True)


def _palm():
    from palm_pytorch import PaLM

    return PaLM(num_tokens=VOCAB, dim=32, depth=2, dim_head=8, heads=4, ff_mult=2)


GENERATION: list[Case] = [
    Case("MEGABYTE_two_stages", "MEGABYTE_pytorch", seeded(lambda: MegabyteLogits(**MEGABYTE_2)),
         _id_inputs(12, 16), _ids_dynamic("ids")),
    Case("MEGABYTE_three_stages_rel_pos", "MEGABYTE_pytorch", seeded(lambda: MegabyteLogits(**MEGABYTE_3)),
         _id_inputs(10, 15), _ids_dynamic("ids")),
    Case("MEGABYTE_greedy_generate", "MEGABYTE_pytorch",
         seeded(lambda: GreedyDecoder(MegabyteLogits(**MEGABYTE_2), steps=4)), _id_inputs(6, 9),
         _ids_dynamic("prompt")),
    Case("PaLM", "palm_pytorch", seeded(_palm), _id_inputs(12, 17), {"input": {0: "batch", 1: "sequence"}}),
    Case("PaLM_greedy_generate", "palm_pytorch", seeded(lambda: GreedyDecoder(_palm(), steps=5)), _id_inputs(6, 9),
         _ids_dynamic("prompt")),
]


COCA = dict(dim=32, num_tokens=VOCAB, unimodal_depth=1, multimodal_depth=1, image_dim=24, num_img_queries=8,
            dim_head=8, heads=4)


def _coca_inputs(**kwargs):
    def make() -> CaseInputs:
        def one(batch, n, offset):
            return Inputs((_ids(batch, n, offset),),
                          {"image_tokens": _randn(batch, 9, 24, offset=offset + 800), **kwargs})

        return _batches(one, 10, 14, "length 14")

    return make


CAPTION: list[Case] = [
    Case("CoCa_caption_logits", "coca_pytorch", seeded(_build("coca_pytorch", "CoCa", **COCA)), _coca_inputs(),
         {"text": {0: "batch", 1: "sequence"}, "image_tokens": {0: "batch"}}),
    Case("CoCa_embeddings", "coca_pytorch", seeded(_build("coca_pytorch", "CoCa", **COCA)),
         _coca_inputs(return_embeddings=True), {"text": {0: "batch", 1: "sequence"}, "image_tokens": {0: "batch"}}),
]

# --- attention over images: axial, lambda, halo, bottleneck, Segformer --------------------------------


class VideoAxialAttention(nn.Module):
    """Axial attention over the time, height and width of a clip (batch, channels, frames,
    height, width), with a residual."""

    def __init__(self):
        super().__init__()
        from axial_attention import AxialAttention

        self.attention = AxialAttention(dim=16, num_dimensions=3, heads=4, dim_index=1, sum_axial_out=False)

    def forward(self, clip: torch.Tensor) -> torch.Tensor:
        return clip + self.attention(clip)


def _clip_inputs() -> CaseInputs:
    def one(batch, shape, offset):
        return Inputs((_randn(batch, 16, *shape, offset=offset),))

    return _batches(one, (4, 6, 6), (3, 8, 5), "3 frames of 8x5")

def _image_channels(library, name, make, channels, size=(8, 8), other_size=None) -> Case:
    return _image(library, name, make, size, other_size=other_size, channels=channels)


IMAGES: list[Case] = [
    _image_channels("axial_attention", "AxialImageTransformer_reversible",
                    _build("axial_attention", "AxialImageTransformer", dim=16, depth=2, heads=4, dim_heads=4,
                           reversible=True, axial_pos_emb_shape=(8, 8)), 16),
    _image_channels("axial_attention", "AxialAttention", _build("axial_attention", "AxialAttention", dim=16,
                                                                 num_dimensions=2, heads=4, dim_index=1),
                    16, other_size=(12, 6)),
    Case("AxialAttention_video", "axial_attention", seeded(VideoAxialAttention), _clip_inputs,
         {"clip": {0: "batch", 2: "frames", 3: "height", 4: "width"}}),
    _image_channels("lambda_networks", "LambdaLayer_local", _build("lambda_networks", "LambdaLayer", dim=16,
                                                                    dim_out=16, r=5, dim_k=8, heads=4, dim_u=1),
                    16, other_size=(12, 6)),
    _image_channels("lambda_networks", "LambdaLayer_global", _build("lambda_networks", "LambdaLayer", dim=16,
                                                                     dim_out=16, n=8, dim_k=8, heads=4, dim_u=2),
                    16),
    _image_channels("halonet_pytorch", "HaloAttention", _build("halonet_pytorch", "HaloAttention", dim=16,
                                                                block_size=4, halo_size=1, dim_head=8, heads=2),
                    16, size=(16, 16), other_size=(24, 20)),
    _image_channels("bottleneck_transformer_pytorch", "BottleStack_downsample",
                    _build("bottleneck_transformer_pytorch", "BottleStack", dim=16, fmap_size=16, dim_out=32,
                           proj_factor=2, num_layers=2, heads=2, dim_head=8, downsample=True, rel_pos_emb=True),
                    16, size=(16, 16)),
    _image("segformer_pytorch", "Segformer",
           _build("segformer_pytorch", "Segformer", dims=(8, 16, 24, 32), heads=(1, 2, 2, 4), ff_expansion=(2, 2, 2, 2),
                  reduction_ratio=(4, 2, 2, 1), num_layers=1, channels=3, decoder_dim=16, num_classes=4),
           (64, 64), other_size=(96, 64)),
]

CASES: list[Case] = [*RTDL_CASES, *TAB_CASES, *TABNET_CASES, *NCPS, *TCN_CASES, *EGNN, *GENERATION, *CAPTION,
                     *IMAGES]


def main(argv=None) -> int:
    return cli(argv, description=__doc__.splitlines()[0], cases=CASES, libs=LIBS, setup=setup)


if __name__ == "__main__":
    sys.exit(main())
