"""A mixture-of-experts block on ``torch._grouped_mm`` / ``F.grouped_mm``, as transformers 5's
default MoE path computes it (tokens sorted by expert, int32 offsets from the per-expert
counts, one grouped matmul per projection), exported with a dynamic token axis and
compared with eager on onnxruntime, with tokens spread over the experts differently at
each size (empty experts included)."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

E, D, H, TOP_K = 4, 16, 8, 2


class GroupedExperts(nn.Module):
    def __init__(self, functional: bool = False):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.router = nn.Linear(D, E)
        self.gate_up = nn.Parameter(torch.randn(E, 2 * H, D, generator=gen) / D ** 0.5)
        self.down = nn.Parameter(torch.randn(E, D, H, generator=gen) / H ** 0.5)
        self.functional = functional

    def forward(self, x):
        weights, experts = torch.topk(self.router(x).softmax(-1), TOP_K, dim=-1)
        flat = experts.reshape(-1)
        order = torch.argsort(flat, stable=True)
        token = order // TOP_K
        offs = torch.cumsum(torch.bincount(flat, minlength=E), 0, dtype=torch.int32)
        grouped_mm = F.grouped_mm if self.functional else torch._grouped_mm
        gate, up = grouped_mm(x[token], self.gate_up.transpose(-2, -1), offs=offs).chunk(2, dim=-1)
        y = grouped_mm(F.silu(gate) * up, self.down.transpose(-2, -1), offs=offs)
        y = y * weights.reshape(-1)[order, None]
        return torch.zeros_like(x).index_add(0, token, y)


class HalfPrecisionExperts(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("weight", torch.randn(E, D, H, generator=torch.Generator().manual_seed(1)))

    def forward(self, x, offs):
        return torch._grouped_mm(x.bfloat16(), self.weight.bfloat16(), offs=offs).float()


class BatchedAndJagged(nn.Module):
    def forward(self, a3, b3, a2, b2, offs):
        # (G, M, K) x (G, K, N); (G, M, K) x (K, N_tot) split by offs; (M, K_tot) x (K_tot, N) split by offs
        return F.grouped_mm(a3, b3), F.grouped_mm(a3, b2, offs=offs), F.grouped_mm(a2, b2.transpose(0, 1)[:, :D],
                                                                                       offs=offs)


def _x(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("functional", [False, True])
def test_moe_block_with_a_dynamic_token_axis(functional):
    model = GroupedExperts(functional).eval()
    inputs = [(_x(n, D, seed=n),) for n in (6, 1, 13)]
    export_and_compare(model, inputs[0], inputs, dynamic_shapes={"x": {0: "tokens"}})


def test_bfloat16_operands_with_empty_groups():
    offs = [torch.tensor(o, dtype=torch.int32) for o in ([2, 2, 5, 7], [0, 0, 0, 7], [7, 7, 7, 7])]
    inputs = [(_x(7, D, seed=i), o) for i, o in enumerate(offs)]
    export_and_compare(HalfPrecisionExperts(), inputs[0], inputs, rtol=1e-2, atol=1e-2)


def test_batched_and_jagged_forms():
    offs = torch.tensor([4, 4, 16], dtype=torch.int32)  # groups of 4, 0 and 12 over N_tot = K_tot = 16
    args = (_x(3, 2, D), _x(3, D, 8, seed=1), _x(5, 16, seed=2), _x(D, 16, seed=3), offs)
    export_and_compare(BatchedAndJagged(), args)


class WithBias(nn.Module):
    def forward(self, x, w, offs):
        return F.grouped_mm(x, w, offs=offs, bias=torch.zeros(2, 8))


class Float64(nn.Module):
    def forward(self, x, w, offs):
        return F.grouped_mm(x.double(), w.double(), offs=offs)


class NoOffsets(nn.Module):
    def forward(self, x, w, offs):
        return F.grouped_mm(x, w)


class Int64Offsets(nn.Module):
    def forward(self, x, w, offs):
        return F.grouped_mm(x, w, offs=offs.long())


@pytest.mark.parametrize("model, message", [
    (WithBias(), "bias= is not supported"),
    (Float64(), "Float32, BFloat16 or Float16"),
    (NoOffsets(), "have to provide offsets"),
    (Int64Offsets(), "1-d int32 tensor"),
])
def test_refusals(model, message):
    with pytest.raises(LoweringError, match=message):
        export(model, (_x(6, D), _x(2, D, 8), torch.tensor([3, 6], dtype=torch.int32)))
