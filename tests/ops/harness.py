"""Run one op lowering on concrete inputs, and sweep PyTorch's OpInfo samples over it.

``run_lowering(qualname, args, kwargs, opset=18)`` turns every ``torch.Tensor`` in
``args``/``kwargs`` (nested in lists and tuples too) into a graph input, calls the
registered lowering, builds the model (``onnx.checker`` full check included), runs it on
onnxruntime and returns the outputs as numpy arrays (Python values a lowering returns are
passed through).  ``dynamic=True`` gives every input dim a symbolic name, so a lowering
that bakes a dim into a constant is caught.

The OpInfo part maps registry names to OpInfo entries (``torch.X`` and ``Tensor.X`` share
OpInfo ``X``; ``torch.nn.functional.X`` is ``nn.functional.X``; Python operators use
their function's OpInfo and the reflected ``__rX__`` one) and runs up to
``MAX_SAMPLES`` samples per (name, dtype).  ``lowering.ops.report`` imports this module
to count samples for ``docs/ops.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import onnx
import pytest
import onnxruntime as ort
import torch

from lowering.errors import LoweringError
from lowering.graph import DEFAULT_OPSET, GraphBuilder, Value
from lowering.ops.registry import lookup, registered_names, registrations

MAX_SAMPLES = 12
RTOL, ATOL = 1e-4, 1e-5
DTYPES = (torch.float32, torch.int64, torch.bool)


class Refused(Exception):
    """The lowering raised LoweringError for this call."""


# ---------------------------------------------------------------------- running


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [e for item in x for e in _flatten(item)]
    return [x]


def build_model(
    qualname: str,
    args: tuple,
    kwargs: dict | None = None,
    opset: int = DEFAULT_OPSET,
    *,
    dynamic: bool = False,
    fn: Callable[..., Any] | None = None,
) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[Any]]:
    """Lower one call: (model, feeds, flat outputs) where a flat output is either the
    name of a graph output or a Python value the lowering returned."""
    kwargs = kwargs or {}
    g = GraphBuilder(opset)
    feeds: dict[str, np.ndarray] = {}

    def graph_arg(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            name = f"input_{len(feeds)}"
            shape = tuple(f"{name}_d{i}" for i in range(x.dim())) if dynamic else tuple(x.shape)
            v = g.add_input(name, x.dtype, shape)
            feeds[name] = x.detach().cpu().resolve_conj().resolve_neg().numpy()
            return v
        if isinstance(x, torch.Size):
            return x
        if isinstance(x, list):
            return [graph_arg(e) for e in x]
        if isinstance(x, tuple):
            return tuple(graph_arg(e) for e in x)
        return x

    gargs = graph_arg(tuple(args))
    gkwargs = {k: graph_arg(v) for k, v in kwargs.items()}
    if fn is None:
        fn = lookup(qualname, opset)
        if fn is None:
            raise KeyError(f"no lowering for {qualname} at opset {opset}")
    try:
        result = fn(g, *gargs, **gkwargs)
    except LoweringError as e:
        raise Refused(str(e)) from e
    flat = []
    for i, r in enumerate(_flatten(result)):
        if isinstance(r, Value):
            if r.dtype == torch.bfloat16:  # numpy has no bfloat16: fetch as float32
                flat.append(("bfloat16", g.add_output(g.cast(r, torch.float32), f"output_{i}").name))
            else:
                flat.append(g.add_output(r, f"output_{i}").name)
        else:
            flat.append(r)
    if not g.outputs:
        return None, feeds, flat  # type: ignore[return-value]
    model = g.to_model()
    onnx.checker.check_model(model, full_check=True)
    return model, feeds, flat


def run_lowering(
    qualname: str,
    args: tuple,
    kwargs: dict | None = None,
    opset: int = DEFAULT_OPSET,
    *,
    dynamic: bool = False,
    fn: Callable[..., Any] | None = None,
) -> list[Any]:
    """Lower, check and run one call on onnxruntime; outputs as numpy arrays."""
    model, feeds, flat = build_model(qualname, args, kwargs, opset, dynamic=dynamic, fn=fn)
    if model is None:
        return flat
    sess = _session(model)
    names = [o.name for o in sess.get_outputs()]
    got = dict(zip(names, sess.run(None, {i.name: feeds[i.name] for i in sess.get_inputs()})))
    out = []
    for r in flat:
        if isinstance(r, tuple) and len(r) == 2 and r[0] == "bfloat16":
            out.append(torch.from_numpy(got[r[1]]).to(torch.bfloat16))
        else:
            out.append(got[r] if isinstance(r, str) and r in got else r)
    return out


# ---------------------------------------------------------------------- comparing

_NP_TO_TORCH = {np.dtype(np.bool_): torch.bool}


def compare(expected: Any, actual: list[Any], exact: bool = False) -> str | None:
    """None when ``actual`` (flat numpy outputs) matches eager ``expected``, else why.
    Integer and bool outputs must be equal; float outputs within RTOL/ATOL (``exact``:
    equal, NaN matching NaN)."""
    exp = [e for e in _flatten(expected)]
    if len(exp) != len(actual):
        return f"{len(actual)} outputs, eager gave {len(exp)}"
    for i, (e, a) in enumerate(zip(exp, actual)):
        if isinstance(e, torch.Tensor):
            if isinstance(a, torch.Tensor):
                at = a
            elif isinstance(a, np.ndarray):
                at = torch.from_numpy(np.array(a))
            else:
                return f"output {i}: got {type(a).__name__}, eager gave a tensor"
            if at.dtype != e.dtype:
                return f"output {i}: dtype {at.dtype}, eager {e.dtype}"
            if tuple(at.shape) != tuple(e.shape):
                return f"output {i}: shape {tuple(at.shape)}, eager {tuple(e.shape)}"
            e = e.detach().cpu().resolve_conj().resolve_neg()
            if not (e.dtype.is_floating_point or e.dtype.is_complex):
                ok = torch.equal(at, e)
            elif exact:
                ok = torch.allclose(at, e, rtol=0, atol=0, equal_nan=True)
            else:
                ok = torch.allclose(at, e, rtol=RTOL, atol=ATOL, equal_nan=True)
            if not ok:
                diff = (at.double() - e.double()).abs()
                diff = diff[~torch.isnan(diff)]
                worst = diff.max().item() if diff.numel() else float("nan")
                return f"output {i}: values differ (max abs diff {worst:g}, shape {tuple(e.shape)})"
        else:
            if isinstance(a, np.ndarray):
                a = a.item()
            if a != e and not (isinstance(e, float) and math.isnan(e) and math.isnan(a)):
                return f"output {i}: {a!r}, eager {e!r}"
    return None


# ---------------------------------------------------------------------- OpInfo


@functools.cache
def op_db() -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db as db
    return list(db)


@functools.cache
def _opinfo_index() -> dict[str, list]:
    index: dict[str, list] = {}
    for info in op_db():
        index.setdefault(info.name, []).append(info)
        for alias in info.aliases or ():
            index.setdefault(alias.name, []).append(info)
    return index


# How a call of the registry name maps onto an OpInfo sample.  ``direct``: the
# lowering takes (input, *args, **kwargs); ``operator``: the same, operator arity only;
# ``reflected``: operator form of ``__rX__``, (args[0], input); ``swap01``: the OpInfo's
# op swaps its first two arguments (torch.where(args[0], input, args[1]),
# F.embedding(args[0], input)); ``einsum``: torch.einsum(args[0], *input);
# ``inplace``/``inplace_operator``: compared with the OpInfo's inplace_variant.
_OPERATORS = {
    "operator.add": [("add", "operator"), ("__radd__", "reflected")],
    "operator.sub": [("sub", "operator"), ("__rsub__", "reflected")],
    "operator.mul": [("mul", "operator"), ("__rmul__", "reflected")],
    "operator.truediv": [("true_divide", "operator"), ("__rdiv__", "reflected")],
    "operator.floordiv": [("floor_divide", "operator")],
    "operator.mod": [("remainder", "operator"), ("__rmod__", "reflected")],
    "operator.pow": [("pow", "operator"), ("__rpow__", "reflected")],
    "operator.matmul": [("matmul", "operator"), ("__rmatmul__", "reflected")],
    "operator.and_": [("bitwise_and", "operator"), ("__rand__", "reflected")],
    "operator.or_": [("bitwise_or", "operator"), ("__ror__", "reflected")],
    "operator.xor": [("bitwise_xor", "operator"), ("__rxor__", "reflected")],
    "operator.neg": [("neg", "operator")],
    "operator.abs": [("abs", "operator")],
    "operator.invert": [("bitwise_not", "operator")],
    "operator.pos": [("positive", "operator")],
    "operator.eq": [("eq", "operator")],
    "operator.ne": [("ne", "operator")],
    "operator.lt": [("lt", "operator")],
    "operator.le": [("le", "operator")],
    "operator.gt": [("gt", "operator")],
    "operator.ge": [("ge", "operator")],
}
_SPECIAL_CALLS = {
    ("torch.where", "where"): "swap01",
    ("torch.einsum", "einsum"): "einsum",
    ("torch.nn.functional.embedding", "nn.functional.embedding"): "swap01",
}
# OpInfos whose outputs are uninitialised memory or random: compare dtype and shape only.
SHAPE_ONLY = {"empty_like", "new_empty", "empty", "new_empty_strided", "empty_strided"}


@functools.cache
def opinfo_targets(qualname: str) -> list[tuple[Any, str]]:
    """(OpInfo, calling convention) pairs that test ``qualname``; [] when none."""
    index = _opinfo_index()
    if qualname in _OPERATORS:
        return [(info, conv) for name, conv in _OPERATORS[qualname] for info in index.get(name, [])]
    if qualname in _INPLACE_OPERATORS:
        return [(info, "inplace_operator") for info in index.get(_INPLACE_OPERATORS[qualname], []) if info.inplace_variant]
    inplace = qualname.endswith("_") and not qualname.endswith("__")
    base = qualname[:-1] if inplace else qualname
    for prefix, repl in (("torch.nn.functional.", "nn.functional."), ("torch.", ""), ("Tensor.", "")):
        if base.startswith(prefix):
            name = repl + base[len(prefix):]
            break
    else:
        return []
    infos = index.get(name, [])
    if not infos and "." not in name:
        infos = index.get(f"nn.functional.{name}", [])
    if inplace:
        return [(info, "inplace") for info in infos if info.inplace_variant is not None]
    return [(info, _SPECIAL_CALLS.get((qualname, info.name), "direct")) for info in infos]


_INPLACE_OPERATORS = {
    "operator.iadd": "add",
    "operator.isub": "sub",
    "operator.imul": "mul",
    "operator.itruediv": "true_divide",
    "operator.ifloordiv": "floor_divide",
    "operator.imod": "remainder",
    "operator.ipow": "pow",
}


@functools.cache
def opinfo_groups() -> list[tuple[str, ...]]:
    """Registered names with an OpInfo, grouped when one lowering function serves several
    names through the same OpInfo calls (``torch.add`` / ``Tensor.add``): a group is
    tested once, under its first name."""
    groups: dict[tuple, list[str]] = {}
    for q in opinfo_names():
        key = (lookup(q), tuple((id(info), conv) for info, conv in opinfo_targets(q)))
        groups.setdefault(key, []).append(q)
    return [tuple(names) for names in groups.values()]


def opinfo_names() -> list[str]:
    """Registered (non-refusing) names with at least one OpInfo."""
    names = []
    for q in registered_names():
        regs = registrations(q)
        if regs and all(r.refuses for r in regs):
            continue
        if opinfo_targets(q):
            names.append(q)
    return names


@dataclasses.dataclass
class SampleResult:
    opinfo: str
    index: int
    status: str  # "passed" | "refused" | "failed"
    detail: str = ""


def _lowering_call(conv: str, sample) -> tuple[tuple, dict]:
    inp, args, kwargs = sample.input, tuple(sample.args), dict(sample.kwargs)
    if conv == "reflected":
        return (args[0], inp, *args[1:]), kwargs
    if conv == "swap01":  # op(a, b, ...) tests f(b, a, ...)
        return (args[0], inp, *args[1:]), kwargs
    if conv == "einsum":
        return (args[0], *inp, *args[1:]), kwargs
    return (inp, *args), kwargs


_UNARY_OPERATORS = {"neg", "abs", "positive", "bitwise_not"}


def _usable(conv: str, sample, info) -> bool:
    if conv in ("operator", "reflected", "inplace_operator"):
        arity = 0 if info.name in _UNARY_OPERATORS else 1
        return not sample.kwargs and len(sample.args) == arity
    return True


def iter_samples(info, dtype: torch.dtype, conv: str, limit: int = MAX_SAMPLES) -> list:
    """Up to ``limit`` samples, deterministic, spread over the OpInfo's sample list."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = []
        for s in info.sample_inputs("cpu", dtype, requires_grad=False):
            if _usable(conv, s, info):
                pool.append(s)
            if len(pool) >= 5 * limit:
                break
    if len(pool) <= limit:
        return pool
    step = len(pool) / limit
    return [pool[int(i * step)] for i in range(limit)]


_SUPPORTED: dict[int, frozenset] = {}


def supports_dtype(info, dtype: torch.dtype) -> bool:
    key = id(info)
    if key not in _SUPPORTED:
        try:
            _SUPPORTED[key] = frozenset(info.supported_dtypes("cpu"))
        except Exception:
            _SUPPORTED[key] = frozenset(info.dtypes)
    return dtype in _SUPPORTED[key]


def run_opinfo(
    qualname: str,
    dtype: torch.dtype,
    opset: int = DEFAULT_OPSET,
    *,
    limit: int = MAX_SAMPLES,
    dynamic: bool = True,
    max_passes: int | None = None,
) -> list[SampleResult]:
    """Every applicable OpInfo sample of ``qualname`` at ``dtype``: passed, refused
    (LoweringError) or failed (anything else, or onnxruntime disagreeing with eager).
    With ``dynamic``, float32 samples that pass are also run with symbolic input dims.
    ``max_passes`` stops after that many passing samples."""
    results: list[SampleResult] = []
    fn = lookup(qualname, opset)
    for info, conv in opinfo_targets(qualname):
        if max_passes is not None and sum(r.status == "passed" for r in results) >= max_passes:
            break
        if not supports_dtype(info, dtype):
            continue
        label = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
        for i, sample in enumerate(iter_samples(info, dtype, conv, limit)):
            if max_passes is not None and sum(r.status == "passed" for r in results) >= max_passes:
                break
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if conv.startswith("inplace"):
                        target = sample.input.clone()
                        info.inplace_variant(target, *sample.args, **sample.kwargs)
                        expected = target
                    else:
                        expected = info.op(sample.input, *sample.args, **sample.kwargs)
            except Exception:
                continue  # eager rejects it: nothing to compare with
            args, kwargs = _lowering_call(conv, sample)
            results.append(_run_one(qualname, fn, label, i, args, kwargs, expected, opset, dtype, dynamic, info.name))
    return results


def _run_one(qualname, fn, label, i, args, kwargs, expected, opset, dtype, dynamic, opname) -> SampleResult:
    exact = False
    try:
        actual = run_lowering(qualname, args, kwargs, opset, fn=fn)
    except Refused as e:
        return SampleResult(label, i, "refused", str(e).splitlines()[0])
    except Exception as e:  # noqa: BLE001 - a bug in the lowering, reported as a failure
        return SampleResult(label, i, "failed", f"{type(e).__name__}: {str(e)[:300]}")
    if opname in SHAPE_ONLY:
        expected = [torch.zeros_like(e) if isinstance(e, torch.Tensor) else e for e in _flatten(expected)]
    why = compare(expected, actual, exact)
    if why is not None:
        return SampleResult(label, i, "failed", why)
    if dynamic and dtype == torch.float32:
        try:
            actual = run_lowering(qualname, args, kwargs, opset, dynamic=True, fn=fn)
        except Refused:
            return SampleResult(label, i, "passed", "dynamic shapes refused")
        except Exception as e:  # noqa: BLE001
            return SampleResult(label, i, "failed", f"dynamic shapes: {type(e).__name__}: {str(e)[:300]}")
        why = compare(expected, actual, exact)
        if why is not None:
            return SampleResult(label, i, "failed", f"dynamic shapes: {why}")
    return SampleResult(label, i, "passed")


@functools.cache
def tested_dtypes(qualname: str) -> list[torch.dtype]:
    """float32, plus int64/bool where an OpInfo of the name supports them."""
    out = []
    for dt in DTYPES:
        if any(supports_dtype(info, dt) for info, _ in opinfo_targets(qualname)):
            out.append(dt)
    return out


def summarize(results: list[SampleResult]) -> dict[str, int]:
    out = {"passed": 0, "refused": 0, "failed": 0}
    for r in results:
        out[r.status] += 1
    out["tried"] = len(results)
    return out


def iter_failures(results: list[SampleResult]) -> Iterator[str]:
    for r in results:
        if r.status == "failed":
            yield f"{r.opinfo}[{r.index}]: {r.detail}"


# ----------------------------------------------------------------------------------------
# hand-written case tables: (id, qualname, args, kwargs, eager function)


def case_params(cases, opsets) -> list:
    """One pytest param per case and opset, with the case's strict xfail if it has one."""
    from .xfails import xfail_for

    params = []
    for case in cases:
        for opset in opsets:
            x = xfail_for("handwritten", case[0])
            marks = [pytest.mark.xfail(reason=x.reason, strict=True)] if x is not None else []
            params.append(pytest.param(case, opset, id=f"{case[0]}-opset{opset}", marks=marks))
    return params


def check_case(case, opset: int) -> None:
    """The lowering of a hand-written case agrees with eager PyTorch on onnxruntime."""
    _, qualname, args, kwargs, eager = case
    expected = eager(*args, **kwargs)
    why = compare(expected, run_lowering(qualname, args, kwargs, opset))
    assert why is None, why


def check_case_dynamic(case, refusals: dict[str, str]) -> None:
    """A hand-written case with every input dim symbolic agrees with eager, or, for an id
    in ``refusals`` (a case that needs a static dim), is refused with that message."""
    name, qualname, args, kwargs, eager = case
    if name in refusals:
        with pytest.raises(Refused, match=refusals[name]):
            run_lowering(qualname, args, kwargs, dynamic=True)
        return
    why = compare(eager(*args, **kwargs), run_lowering(qualname, args, kwargs, dynamic=True))
    assert why is None, why


def sample_tensor(*shape, dtype=torch.float32, seed=0, low=-3, high=3) -> torch.Tensor:
    """A seeded tensor of the shape and dtype, values in [low, high) (bools at random)."""
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return torch.rand(shape, generator=gen, dtype=torch.float64).mul(high - low).add(low).to(dtype)
    return torch.randint(low, high, shape, generator=gen, dtype=dtype)
