"""FFT and complex numbers.

(Called from forward, the forward transforms and what follows them up to an inverse are
lowered by the interpreter, which holds the complex values as (real, imaginary) parts:
`lowering/interp/complex_values.py`. The lowerings here are the op table's: what a complex
tensor passed to an op directly meets.)

ONNX has a complex64 type name but no arithmetic on it (onnxruntime runs no op on
complex tensors), and untrace's graph values are real: a lowering that returned a
complex result as a trailing (re, im) pair would be a different tensor under the same
name, so every torch call whose *result* is complex is refused with what to write
instead -- ``torch.fft.rfft``, ``torch.view_as_complex``, ``torch.polar`` -- and so is
``torch.view_as_real``, whose input can only be complex.

``torch.fft.irfft`` of a *real* input (a spectrum with zero imaginary part, which is
what torch computes for a real tensor) has a real result and lowers to ONNX DFT: the
one-sided spectrum trimmed or zero-padded to ``n // 2 + 1``, completed by its mirror
(Hermitian symmetry; conj is the identity for real values), one inverse DFT of length
``n`` and its real part, scaled for ``norm``.  DFT-17 takes the axis as an attribute,
DFT-20 as an input: one function per form.
"""

from __future__ import annotations

import math

import torch

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import require_value
from lowering.ops.registry import register
from lowering.ops.shape import known_rank, normalize_axis, slice_axis

_NO_COMPLEX = (
    "ONNX has no complex tensors (onnxruntime computes no op on them), so untrace cannot represent {what}"
)
_REAL_PARTS_HINT = (
    "keep real and imaginary parts as two real tensors and write the complex arithmetic out; for a spectrum "
    "of a real signal x of length N use real matmuls with constant bases, re = x @ cos(2*pi*n*k/N), "
    "im = -(x @ sin(2*pi*n*k/N)) (n = arange(N)[:, None], k = arange(N // 2 + 1)), and |X| = hypot(re, im)"
)


@register("torch.fft.rfft", refuses=True)
def rfft(g, input, n=None, dim=-1, norm=None, *, out=None):
    """fft_rfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor(complex)  (refused)"""
    raise g.error(_NO_COMPLEX.format(what="torch.fft.rfft's complex result"), hint=_REAL_PARTS_HINT)


def _refuse_complex_result(name: str):
    def refuse(g, input, *args, **kwargs):
        raise g.error(_NO_COMPLEX.format(what=f"{name}'s complex result"), hint=_REAL_PARTS_HINT)

    refuse.__name__ = name.rsplit(".", 1)[-1]
    refuse.__doc__ = f"{name}(Tensor self, ...) -> Tensor(complex)  (refused)"
    return refuse


# The multi-dimensional and complex-input transforms: a complex result, or (irfft2 / irfftn,
# hfft) a complex input that only a complex-result call can have made.
for _name in ("torch.fft.rfft2", "torch.fft.rfftn", "torch.fft.fft", "torch.fft.fft2", "torch.fft.fftn",
              "torch.fft.ifft", "torch.fft.ifft2", "torch.fft.ifftn", "torch.fft.irfft2", "torch.fft.irfftn",
              "torch.stft"):
    register(_name, refuses=True)(_refuse_complex_result(_name))


@register("torch.view_as_real", refuses=True)
def view_as_real(g, input):
    """view_as_real(Tensor(a) self) -> Tensor(a)  (refused: its input is complex)"""
    raise g.error(_NO_COMPLEX.format(what="the complex tensor torch.view_as_real takes"), hint=_REAL_PARTS_HINT)


@register("torch.view_as_complex", refuses=True)
def view_as_complex(g, input):
    """view_as_complex(Tensor(a) self) -> Tensor(a)  (refused: its result is complex)"""
    raise g.error(_NO_COMPLEX.format(what="torch.view_as_complex's complex result"),
                  hint="keep the (..., 2) real tensor and compute with its [..., 0] and [..., 1] parts")


@register("torch.polar", refuses=True)
def polar(g, abs, angle, *, out=None):
    """polar(Tensor abs, Tensor angle) -> Tensor(complex)  (refused)"""
    raise g.error(_NO_COMPLEX.format(what="torch.polar's complex result"),
                  hint="use the real parts abs * cos(angle) and abs * sin(angle)")


def _irfft(g: GraphBuilder, input, n, dim, norm, opset20: bool) -> Value:
    x = require_value(g, input, "irfft")
    if x.dtype.is_complex:
        raise g.error(_NO_COMPLEX.format(what="a complex spectrum"), hint=_REAL_PARTS_HINT)
    if not is_float(x.dtype):
        x = g.cast(x, torch.get_default_dtype())
    if x.dtype not in (torch.float32, torch.float64):
        raise g.error(f"irfft of a {x.dtype} tensor is not supported (ONNX DFT takes float32 and float64)")
    rank = known_rank(g, x, "irfft")
    if rank == 0:
        raise g.error("irfft: expected a tensor of at least one dimension (torch raises)")
    d = normalize_axis(g, dim, rank, "irfft")
    m = x.shape[d]
    if n is None:
        if not isinstance(m, int):
            raise g.error("irfft without n needs the size of dim to be static (the output length is 2 * (size - 1))",
                          hint="pass n=")
        n = 2 * (m - 1)
    if isinstance(n, Value) or not isinstance(n, int) or isinstance(n, bool):
        raise g.error("irfft: n must be a Python int known at export time")
    if n < 1:
        raise g.error(f"irfft: invalid number of data points ({n}) specified (torch raises)")
    if norm not in (None, "backward", "forward", "ortho"):
        raise g.error(f"irfft: invalid normalization mode {norm!r} (torch raises)")
    half = n // 2 + 1
    # The one-sided spectrum, trimmed or zero-padded to n // 2 + 1 along d.
    spec = slice_axis(g, x, d, 0, half)
    if not isinstance(m, int) or m < half:
        cur = g.size(spec, d)
        cur_v = g.const(cur, torch.int64) if isinstance(cur, int) else cur
        missing = g.op("Sub", g.const(half, torch.int64), cur_v)
        pads_begin = g.const([0] * rank, torch.int64)
        axis_one_hot = g.const([1 if a == d else 0 for a in range(rank)], torch.int64)
        pads = g.op("Concat", pads_begin, g.op("Mul", axis_one_hot, g.unsqueeze(missing, [0])), axis=0)
        spec = g.op("Pad", spec, pads)
    # X[n - k] = conj(X[k]) = X[k] for k in 1 .. n - half: the mirror, reversed.
    pieces = [spec]
    tail = n - half
    if tail > 0:
        mirror = slice_axis(g, spec, d, tail, 0, -1)  # X[tail], X[tail-1], ..., X[1]
        pieces.append(mirror)
    full = pieces[0] if len(pieces) == 1 else g.op("Concat", *pieces, axis=d)
    cplx = g.op("Concat", g.unsqueeze(full, [rank]), g.unsqueeze(g.op("Mul", full, g.const(0.0, x.dtype)), [rank]),
                axis=rank)
    length = g.const(n, torch.int64)
    if opset20:
        y = g.op("DFT", cplx, length, g.const(d, torch.int64), inverse=1, onesided=0)
    else:
        y = g.op("DFT", cplx, length, axis=d, inverse=1, onesided=0)
    real = g.op("Squeeze", slice_axis(g, y, rank, 0, 1), g.const([rank], torch.int64))
    # ONNX's inverse DFT divides by n, torch's "backward" default.
    if norm == "forward":
        real = g.op("Mul", real, g.const(float(n), x.dtype))
    elif norm == "ortho":
        real = g.op("Mul", real, g.const(math.sqrt(n), x.dtype))
    return real


@register("torch.fft.irfft", opsets=(17, 19))
def irfft(g, input, n=None, dim=-1, norm=None, *, out=None):
    """fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor  (a real input; DFT-17)"""
    if out is not None:
        raise g.error("irfft(out=...) is not supported")
    return _irfft(g, input, n, dim, norm, False)


@register("torch.fft.irfft", opsets=(20, 23))
def irfft_20(g, input, n=None, dim=-1, norm=None, *, out=None):
    """fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor  (a real input; DFT-20)"""
    if out is not None:
        raise g.error("irfft(out=...) is not supported")
    return _irfft(g, input, n, dim, norm, True)
