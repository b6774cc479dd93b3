"""Evidence for judged findings: a loop over the codebooks of an audio-codes tensor.

    python benchmarks/judging/codebook_loops.py

`MimiResidualVectorQuantizer.decode` (and the identical Encodec / Xcodec / HiggsAudioV2
quantizers) does `for i, indices in enumerate(codes.transpose(0, 1)): self.layers[i]...`.
From `input_values` the number of codebooks is the Python `num_quantizers`, but the
models' `forward(..., audio_codes=...)` and `decode(audio_codes)` take the codes as an
input, and codes with fewer codebooks than `self.layers` (a lower bandwidth) are input
eager accepts. This traces the decode (eval mode, random weights) on codes with 8
codebooks and runs the trace on other batch sizes, lengths and codebook counts: the
unrolled loop is right only for the example's count, so the UT105 finding is right.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.zoo import torchvision_ops

torchvision_ops.install()

import torch
from transformers import MimiConfig
from transformers.models.mimi.modeling_mimi import MimiResidualVectorQuantizer


class Decode(torch.nn.Module):
    def __init__(self, quantizer):
        super().__init__()
        self.quantizer = quantizer

    def forward(self, codes):
        return self.quantizer.decode(codes)


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    config = MimiConfig(num_quantizers=8, codebook_size=64, codebook_dim=16, hidden_size=32,
                        vector_quantization_hidden_dimension=16)
    model = Decode(MimiResidualVectorQuantizer(config)).eval()
    traced = torch.jit.trace(model, torch.randint(0, 64, (2, 8, 5)))
    for codebooks, batch, length in [(8, 3, 7), (4, 2, 5), (6, 1, 9)]:
        codes = torch.randint(0, 64, (batch, codebooks, length))
        eager = model(codes)
        try:
            error = (traced(codes) - eager).abs().max().item()
            print(f"codebooks={codebooks} batch={batch} length={length}: max |trace - eager| = {error:.3g}")
        except RuntimeError as e:
            print(f"codebooks={codebooks} batch={batch} length={length}: eager runs, the trace fails "
                  f"({str(e).strip().splitlines()[-1][:100]})")


if __name__ == "__main__":
    main()
