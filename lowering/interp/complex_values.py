"""Complex tensors between FFTs: `torch.fft.rfft2(x) * w` then `torch.fft.irfft2(..., s=...)`.

ONNX has no complex arithmetic (onnxruntime runs no op on complex tensors), but its DFT
works on a real tensor with a trailing axis of 2, (real, imaginary). So a complex tensor of
eager code is held by the interpreter as a `ComplexPair`: that real graph value, never
given to an op that would take the trailing axis for data. What it covers, each as torch
computes it:

- made by `torch.fft.rfft` / `rfft2` / `rfftn` of a real tensor (a one-sided DFT along
  the last transformed dim, then full DFTs along the others, scaled for `norm`), by
  `torch.fft.fft` / `fft2` / `fftn` of a real or complex one, or `torch.complex(re, im)`;
- `+`, `-`, `*` with another complex tensor, a real tensor or a Python number, unary `-`;
  `.real`, `.imag`, `.shape`, `.size()`, `.dtype`, `.ndim`, `torch.abs`, `Tensor.abs`;
- ended by `torch.fft.irfft` / `irfft2` / `irfftn` (the inverse DFTs, then the last dim
  completed by Hermitian symmetry and the real part taken, which is what torch's
  complex-to-real transform computes: the imaginary parts of the zero and Nyquist bins
  drop out), by `torch.fft.ifft*` (complex again), or by `.real` / `.imag` / `abs`.

Anything else given a complex tensor (another op, an output, a data-dependent merge) is
refused by name. `s=` (or `n=`) is taken where it equals the size along a dim of the
forward transforms and on the inverse's last dim (the output length); other sizes are
refused.
"""

from __future__ import annotations

import dataclasses

import torch

from lowering.graph import Value
from lowering.interp.values import ComplexPair
from lowering.ops.shape import slice_axis

_COMPLEX_OF = {torch.float32: torch.complex64, torch.float64: torch.complex128}


FORWARD = {"torch.fft.rfft": (True, 1), "torch.fft.rfft2": (True, 2), "torch.fft.rfftn": (True, None),
           "torch.fft.fft": (False, 1), "torch.fft.fft2": (False, 2), "torch.fft.fftn": (False, None)}
INVERSE_REAL = {"torch.fft.irfft": 1, "torch.fft.irfft2": 2, "torch.fft.irfftn": None}
INVERSE = {"torch.fft.ifft": 1, "torch.fft.ifft2": 2, "torch.fft.ifftn": None}
MAKERS = (*FORWARD, "torch.complex")
CALLS = (*FORWARD, *INVERSE_REAL, *INVERSE, "torch.complex", "torch.abs", "Tensor.abs", "torch.real", "torch.imag")


def holds_complex(v) -> bool:
    if isinstance(v, ComplexPair):
        return True
    if isinstance(v, (list, tuple)):
        return any(holds_complex(x) for x in v)
    if isinstance(v, dict):
        return any(holds_complex(x) for x in v.values())
    return False


def refuse(interp, what: str):
    return interp.error(f"{what} of a complex tensor is not supported by untrace (ONNX has no complex tensors; untrace "
                        "holds the spectrum between torch.fft calls as (real, imaginary) parts, for +, -, *, .real, "
                        ".imag, abs and the inverse transforms)",
                        "take .real / .imag, or end the spectrum with torch.fft.irfft* first", construct="complex")


def _dft(interp, z: Value, axis: int, inverse: bool = False, onesided: bool = False) -> Value:
    g = interp.g
    if g.opset >= 20:
        return g.op("DFT", z, None, g.const(axis, torch.int64), inverse=int(inverse), onesided=int(onesided))
    return g.op("DFT", z, axis=axis, inverse=int(inverse), onesided=int(onesided))


def _dims(interp, name: str, rank: int, count, s, dim):
    """The transformed dims, non-negative, in order."""
    if dim is None:
        dims = list(range(rank)) if count is None and s is None else list(range(rank - (count or len(s)), rank))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    if not dims or any(not isinstance(d, int) or not -rank <= d < rank for d in dims):
        raise interp.error(f"{name}: dims {dim!r} out of range for a tensor of rank {rank} (torch raises)",
                           construct="complex")
    dims = [d % rank for d in dims]
    if len(set(dims)) != len(dims):
        raise interp.error(f"{name}: dims must be unique (torch raises)", construct="complex")
    return dims


def _sizes(interp, name: str, s, n, dims) -> list | None:
    if n is not None:
        s = [n]
    if s is None:
        return None
    s = list(s) if isinstance(s, (list, tuple)) else [s]
    if len(s) != len(dims):
        raise interp.error(f"{name}: s has {len(s)} sizes for {len(dims)} dims (torch raises)", construct="complex")
    return s


def _fit(interp, v: Value, axis: int, size) -> Value:
    """`v` trimmed or zero-padded to `size` along `axis`, as torch fits a transform's input to `s`."""
    g = interp.g
    if isinstance(size, bool) or not isinstance(size, (int, Value)) or isinstance(size, int) and size < 1:
        raise interp.error(f"invalid number of data points ({size!r}) specified (torch raises)", construct="complex")
    have = g.size(v, axis)
    if isinstance(have, int) and isinstance(size, int) and have == size:
        return v
    v = slice_axis(g, v, axis, 0, size)
    have = g.size(v, axis)
    have = g.const(have, torch.int64) if isinstance(have, int) else have
    want = size if isinstance(size, Value) else g.const(size, torch.int64)
    missing = g.op("Max", g.op("Sub", want, have), g.const(0, torch.int64))
    one_hot = g.const([1 if a == axis else 0 for a in range(v.rank)], torch.int64)
    pads = g.op("Concat", g.const([0] * v.rank, torch.int64), g.op("Mul", one_hot, g.unsqueeze(missing, [0])), axis=0)
    return g.op("Pad", v, pads)


def _norm_scale(interp, sizes, norm, inverse: bool, dtype):
    """What to multiply by after ONNX's DFT (none forward, 1/n inverse) for torch's `norm`."""
    if norm not in (None, "backward", "forward", "ortho"):
        raise interp.error(f"invalid normalization mode {norm!r} (torch raises)", construct="complex")
    g = interp.g
    total = None
    for size in sizes:
        size = g.cast(size, dtype) if isinstance(size, Value) else g.const(float(size), dtype)
        total = size if total is None else g.op("Mul", total, size)
    if norm == "ortho":
        root = g.op("Sqrt", total)
        return g.op("Reciprocal", root) if not inverse else root
    if norm == "forward":
        return g.op("Reciprocal", total) if not inverse else total
    return None


def _float(interp, x: Value, name: str) -> Value:
    if x.dtype in (torch.float32, torch.float64):
        return x
    if x.dtype.is_floating_point and x.dtype not in (torch.float32, torch.float64):
        raise interp.error(f"{name} of a {x.dtype} tensor is not supported (ONNX DFT takes float32 and float64)",
                           construct="complex")
    return interp.g.cast(x, torch.get_default_dtype())  # an integer or bool tensor: torch's default float


def forward(interp, name: str, x, n=None, s=None, dim=None, norm=None, *, out=None):
    real_input, count = FORWARD[name]
    if out is not None:
        raise refuse(interp, f"{name}(out=...)")
    g = interp.g
    if isinstance(x, ComplexPair):
        if real_input:
            raise interp.error(f"{name} of a complex tensor (torch raises: it expects a real input)",
                               construct="complex")
        z = x.value
        rank = x.rank
    else:
        x = _float(interp, interp.as_graph(x), name)
        rank = x.rank
        z = None
    if rank is None or rank == 0:
        raise interp.error(f"{name} needs a tensor of known rank of at least 1", construct="complex")
    if count == 1 and isinstance(dim, int) is False and dim is not None:
        raise interp.error(f"{name}: dim must be an int", construct="complex")
    dims = _dims(interp, name, rank, count, s, dim if dim is not None else (-1 if count == 1 else None))
    sizes = _sizes(interp, name, s, n, dims)
    if sizes is not None:
        for d, size in zip(dims, sizes):
            if isinstance(x, ComplexPair):
                z = _fit(interp, z, d, size)
            else:
                x = _fit(interp, x, d, size)
    actual = [g.size(z if isinstance(x, ComplexPair) else x, d) for d in dims]
    if z is None:
        last = dims[-1]
        if real_input:
            z = _dft(interp, g.unsqueeze(x, [rank]), last, onesided=True)
        else:
            z = _dft(interp, g.unsqueeze(x, [rank]), last)
        rest = dims[:-1]
    else:
        rest = dims
    for d in rest:
        z = _dft(interp, z, d)
    scale = _norm_scale(interp, actual, norm, False, z.dtype)
    if scale is not None:
        z = g.op("Mul", z, scale)
    return ComplexPair(z)


def inverse(interp, name: str, z, n=None, s=None, dim=None, norm=None, *, out=None):
    real_output = name in INVERSE_REAL
    count = INVERSE_REAL[name] if real_output else INVERSE[name]
    if out is not None:
        raise refuse(interp, f"{name}(out=...)")
    g = interp.g
    if not isinstance(z, ComplexPair):
        if real_output and name == "torch.fft.irfft":
            return NotImplemented  # of a real spectrum: the op table's irfft
        re = _float(interp, interp.as_graph(z), name)  # a real spectrum: zero imaginary parts
        z = _pair(interp, re, g.op("Mul", re, g.const(0.0, re.dtype)))
    rank = z.rank
    dims = _dims(interp, name, rank, count, s, dim if dim is not None else (-1 if count == 1 else None))
    sizes = _sizes(interp, name, s, n, dims)
    v = z.value
    leading = dims[:-1] if real_output else dims
    if sizes is not None:
        for d, size in zip(leading, sizes):
            v = _fit(interp, v, d, size)
    actual = [g.size(v, d) for d in dims]
    for d in leading:
        v = _dft(interp, v, d, inverse=True)
    if not real_output:
        scale = _norm_scale(interp, actual, norm, True, v.dtype)
        return ComplexPair(g.op("Mul", v, scale) if scale is not None else v)
    last = dims[-1]
    m = actual[-1]
    if sizes is not None:
        length = sizes[-1]
    elif isinstance(m, int):
        length = 2 * (m - 1)
    else:
        raise interp.error(f"{name} without s / n needs the size of the last dim to be static (the output length is "
                           "2 * (size - 1))", "pass s= (or n=)", construct="complex")
    if isinstance(length, bool) or not isinstance(length, (int, Value)) or isinstance(length, int) and length < 1:
        raise interp.error(f"{name}: the output length must be a positive int", construct="complex")
    if isinstance(length, Value):
        half = g.op("Add", g.op("Div", length, g.const(2, torch.int64)), g.const(1, torch.int64))
        tail = g.op("Sub", length, half)
    else:
        half, tail = length // 2 + 1, length - (length // 2 + 1)
    spec = slice_axis(g, v, last, 0, half)
    if not (isinstance(m, int) and isinstance(half, int) and m >= half):
        # torch zero-pads a spectrum shorter than n // 2 + 1
        have = g.size(spec, last)
        have = g.const(have, torch.int64) if isinstance(have, int) else have
        want = half if isinstance(half, Value) else g.const(half, torch.int64)
        missing = g.op("Max", g.op("Sub", want, have), g.const(0, torch.int64))
        one_hot = g.const([1 if a == last else 0 for a in range(rank + 1)], torch.int64)
        pads = g.op("Concat", g.const([0] * (rank + 1), torch.int64), g.op("Mul", one_hot, g.unsqueeze(missing, [0])),
                    axis=0)
        spec = g.op("Pad", spec, pads)
    if not (isinstance(tail, int) and tail == 0):
        # X[n - k] = conj(X[k]) for k = tail .. 1
        mirror = slice_axis(g, spec, last, tail, 0, -1)
        mirror = g.op("Mul", mirror, g.const([1.0, -1.0], v.dtype))
        spec = g.op("Concat", spec, mirror, axis=last)
    v = _dft(interp, spec, last, inverse=True)
    real = g.op("Squeeze", slice_axis(g, v, rank, 0, 1), g.const([rank], torch.int64))
    scale = _norm_scale(interp, [*actual[:-1], length], norm, True, real.dtype)
    return g.op("Mul", real, scale) if scale is not None else real


def _parts(interp, z: ComplexPair):
    g = interp.g
    rank = z.rank
    re = g.op("Squeeze", slice_axis(g, z.value, rank, 0, 1), g.const([rank], torch.int64))
    im = g.op("Squeeze", slice_axis(g, z.value, rank, 1, 2), g.const([rank], torch.int64))
    return re, im


def _pair(interp, re: Value, im: Value) -> ComplexPair:
    g = interp.g
    return ComplexPair(g.op("Concat", g.unsqueeze(re, [-1]), g.unsqueeze(im, [-1]), axis=-1))


def complex_call(interp, name: str, args, kwargs):
    g = interp.g
    if name in FORWARD:
        return forward(interp, name, *args, **kwargs)
    if name in INVERSE_REAL or name in INVERSE:
        return inverse(interp, name, *args, **kwargs)
    if name == "torch.complex":
        re, im = (interp.as_graph(a) for a in (*args, *kwargs.values()))
        if re.dtype not in (torch.float32, torch.float64) or re.dtype != im.dtype:
            raise interp.error("torch.complex takes two float32 or two float64 tensors (torch raises otherwise)",
                               construct="complex")
        re, im = g.op("Add", re, g.op("Mul", im, g.const(0.0, im.dtype))), g.op("Add", im, g.op("Mul", re, g.const(
            0.0, re.dtype)))  # broadcast to one shape
        return _pair(interp, re, im)
    (z,) = args
    if name in ("torch.abs", "Tensor.abs"):
        re, im = _parts(interp, z)
        return g.op("Sqrt", g.op("Add", g.op("Mul", re, re), g.op("Mul", im, im)))
    return _parts(interp, z)[0 if name == "torch.real" else 1]


def attribute(interp, z: ComplexPair, attr: str):
    if attr == "real":
        return _parts(interp, z)[0]
    if attr == "imag":
        return _parts(interp, z)[1]
    if attr == "shape":
        return tuple(interp.python_number(interp.g.size(z.value, d)) for d in range(z.rank))
    if attr == "dtype":
        return _COMPLEX_OF[z.value.dtype]
    if attr == "ndim":
        return z.rank
    if attr in ("abs", "size", "dim"):
        return ComplexMethod(z, attr)
    raise refuse(interp, f"`.{attr}`")


@dataclasses.dataclass(eq=False)
class ComplexMethod:
    z: ComplexPair
    name: str


def call_method(interp, method: ComplexMethod, args, kwargs):
    z = method.z
    if method.name == "abs" and not args and not kwargs:
        return complex_call(interp, "torch.abs", [z], {})
    if method.name == "dim":
        return z.rank
    shape = attribute(interp, z, "shape")
    if method.name == "size":
        return shape[args[0]] if args else shape[kwargs["dim"]] if "dim" in kwargs else shape
    raise refuse(interp, f"`.{method.name}(...)`")


def binop(interp, op: str, a, b):
    g = interp.g
    if op not in ("+", "-", "*"):
        raise refuse(interp, f"`{op}`")
    for side in (a, b):
        if not isinstance(side, (ComplexPair, Value, int, float)) or isinstance(side, bool):
            raise refuse(interp, f"`{op}` with a {type(side).__name__}")
    dtype = (a if isinstance(a, ComplexPair) else b).value.dtype

    def real(x):
        if isinstance(x, Value):
            if x.dtype.is_floating_point and x.dtype.itemsize > torch.empty((), dtype=dtype).element_size():
                raise refuse(interp, f"`{op}` with a {x.dtype} tensor (a wider complex result)")
            return g.cast(x, dtype)
        return g.const(float(x), dtype)

    if op == "*":
        if isinstance(a, ComplexPair) and isinstance(b, ComplexPair):
            ar, ai = _parts(interp, a)
            br, bi = _parts(interp, b)
            return _pair(interp, g.op("Sub", g.op("Mul", ar, br), g.op("Mul", ai, bi)),
                         g.op("Add", g.op("Mul", ar, bi), g.op("Mul", ai, br)))
        z, r = (a, b) if isinstance(a, ComplexPair) else (b, a)
        r = real(r)
        return ComplexPair(g.op("Mul", z.value, g.unsqueeze(r, [-1]) if r.rank else r))
    if isinstance(a, ComplexPair) and isinstance(b, ComplexPair):
        return ComplexPair(g.op("Add" if op == "+" else "Sub", a.value, b.value))
    # a real operand adds to the real part only
    if isinstance(a, ComplexPair):
        re, im = _parts(interp, a)
        re = g.op("Add" if op == "+" else "Sub", re, real(b))
        return _pair(interp, re, g.op("Add", im, g.op("Mul", re, g.const(0.0, dtype))))
    re, im = _parts(interp, b)
    if op == "-":
        re, im = g.op("Neg", re), g.op("Neg", im)
    re = g.op("Add", re, real(a))
    return _pair(interp, re, g.op("Add", im, g.op("Mul", re, g.const(0.0, dtype))))


def negate(interp, z: ComplexPair) -> ComplexPair:
    return ComplexPair(interp.g.op("Neg", z.value))
