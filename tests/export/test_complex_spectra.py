"""Complex spectra between torch.fft calls (issue 24; LaMa's spectral transform, FFTformer's
patch filter): held as (real, imaginary) parts and transformed with ONNX DFT
(`lowering/interp/complex_values.py`). Each model matches eager on onnxruntime on several
sizes, odd and even, with dynamic axes; what a complex tensor cannot do is refused by name."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

IMAGES = [(torch.randn(b, 3, h, w, generator=torch.Generator().manual_seed(h * w)),)
          for b, h, w in ((2, 8, 8), (1, 5, 7), (3, 12, 9), (1, 1, 4), (2, 6, 1))]
DYNAMIC = {"x": {0: "b", 2: "h", 3: "w"}}


class PatchFilter(nn.Module):
    """FFTformer: rfft2, times a real parameter and another spectrum, irfft2 with s=."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        f = torch.fft.rfft2(x.float()) * self.w
        g = torch.fft.rfft2(x * 2)
        return torch.fft.irfft2(f * g + f - 1.5, s=(4, 4))


class SpectralTransform(nn.Module):
    """LaMa: rfftn with norm="ortho", its parts stacked, a complex tensor made again, irfftn with s=."""

    def forward(self, x):
        f = torch.fft.rfftn(x, dim=(-2, -1), norm="ortho")
        parts = torch.stack((f.real, f.imag), dim=-1) * 2 + 0.5
        spectrum = torch.complex(parts[..., 0], parts[..., 1])
        return torch.fft.irfftn(spectrum, s=x.shape[-2:], dim=(-2, -1), norm="ortho"), f.abs(), f.shape[-1] * 1.0


class Norms(nn.Module):
    def forward(self, x):
        outs = []
        for norm in (None, "forward", "ortho", "backward"):
            f = torch.fft.rfft(x, dim=2, norm=norm)
            outs.append(torch.fft.irfft(-f * 2.0, n=x.shape[2], dim=2, norm=norm))
            full = torch.fft.fft2(x, norm=norm)
            outs.append(torch.fft.ifft2(full - f.real.mean(), norm=norm).real)
        return torch.cat(outs, 1)


class FitsToSizes(nn.Module):
    """s / n other than the sizes: torch trims or zero-pads the input (and the spectrum)."""

    def forward(self, x):
        a = torch.fft.rfftn(x, s=(6, 5), dim=(2, 3))
        b = torch.fft.irfft(torch.fft.rfft(x, n=7), n=9)
        c = torch.fft.irfftn(a, s=(4, 10), dim=(2, 3))
        return a.real.sum() + b.sum(-1, keepdim=True) + c.mean(), torch.fft.fftn(x, s=(3, 2, 2), dim=(1, 2, 3)).imag


@pytest.mark.parametrize("model", [PatchFilter(), SpectralTransform(), Norms(), FitsToSizes()],
                         ids=lambda m: type(m).__name__)
def test_spectra_match_eager(model):
    inputs = IMAGES if not isinstance(model, PatchFilter) else [(torch.randn(b, 3, 4, 4),) for b in (2, 1, 3)]
    export_and_compare(model, inputs[0], inputs, dynamic_shapes=DYNAMIC if not isinstance(model, PatchFilter)
                       else {"x": {0: "b"}}, atol=1e-4, rtol=1e-4)


class ReturnsSpectrum(nn.Module):
    def forward(self, x):
        return torch.fft.rfft2(x)


class ExpOfSpectrum(nn.Module):
    def forward(self, x):
        return torch.fft.irfft2(torch.exp(torch.fft.rfft2(x)), s=x.shape[-2:])


class DividesSpectra(nn.Module):
    def forward(self, x):
        f = torch.fft.rfft2(x)
        return torch.fft.irfft2(f / (f.abs() + 1), s=x.shape[-2:])


class RfftOfSpectrum(nn.Module):
    def forward(self, x):
        return torch.fft.rfft(torch.fft.fft(x)).real


@pytest.mark.parametrize("model, message", [
    (ReturnsSpectrum(), "forward returns a complex tensor: ONNX has no complex tensors"),
    (ExpOfSpectrum(), "`torch.exp` of a complex tensor"),
    (DividesSpectra(), "`/` of a complex tensor"),
    (RfftOfSpectrum(), "torch.fft.rfft of a complex tensor (torch raises"),
], ids=["output", "other-op", "division", "rfft-of-complex"])
def test_what_a_spectrum_cannot_do_is_refused(model, message):
    with pytest.raises(LoweringError) as info:
        export(model, IMAGES[0], dynamic_shapes=DYNAMIC)
    assert message in str(info.value)
