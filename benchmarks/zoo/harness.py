"""Export one zoo case with each exporter and judge the result against eager PyTorch.

For every exporter (untrace's `lowering.export`, `torch.onnx.export(dynamo=False)` — the
legacy tracer — and `torch.onnx.export(dynamo=True)`), each with the case's dynamic axes:

1. export, timed (the export call alone; a fresh seeded model each time, so that no
   exporter sees a module another one changed);
2. `onnx.checker.check_model(full_check=True)`;
3. onnxruntime on every check input, compared with eager on the same input.

The status is `correct`, `wrong` (the graph does not check, onnxruntime fails on a
check input, or an output differs: the reason says which input and which output) or
`refused` (the exporter raised: the reason is the first line of its message). A crash
of any exporter is a refusal with its first line, never a traceback that stops the run.

Outputs are compared leaf by leaf after flattening dicts (and `ModelOutput`), lists and
tuples, in order, skipping None and non-tensor leaves; shapes and dtypes must agree,
integer and boolean leaves exactly, floating ones within `|onnx - eager| <= ATOL * s +
RTOL * |eager|` where `s = max(1, max |eager|)`: random-weight nets can have outputs far
from 1, and an absolute tolerance meant for unit-sized values would judge them on
rounding alone.

`run_isolated` measures one case in a forked child process with a time limit per
exporter, so that a hang or a crash of the interpreter in one
case cannot stop a run over the zoo; `run_in_process` is the same measurement without
the child, for the tests.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import io
import json
import os
import re
import signal
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

EXPORTERS = ("untrace", "legacy", "dynamo")
RTOL = 1e-3
ATOL = 1e-4
OPSET = 18
TIMEOUT_S = 300  # per exporter


@dataclass
class Outcome:
    exporter: str
    status: str  # "correct" | "wrong" | "refused"
    reason: str = ""  # first line of the refusal, or where the graph is wrong
    seconds: float | None = None  # export time
    error_type: str = ""  # the refusing exception's class
    location: str = ""  # file:line the refusal names (or the innermost frame of a crash)


def install_torchvision_ops() -> None:
    if "torchvision" not in sys.modules:
        from benchmarks.zoo import torchvision_ops

        torchvision_ops.install()


# --- inputs and outputs --------------------------------------------------------------

def input_leaves(model, inputs) -> list[tuple[str, object]]:
    """(graph input name, tensor) in forward's parameter order; list elements are
    `name_i`, dict entries `name_key` (the names untrace gives them)."""
    import torch

    bound = inspect.signature(type(model).forward).bind(model, *inputs.args, **inputs.kwargs)
    leaves = []
    for name, value in list(bound.arguments.items())[1:]:
        if isinstance(value, torch.Tensor):
            leaves.append((name, value))
        elif isinstance(value, (list, tuple)):
            leaves += [(f"{name}_{i}", v) for i, v in enumerate(value) if isinstance(v, torch.Tensor)]
        elif isinstance(value, dict):
            leaves += [(f"{name}_{k}", v) for k, v in value.items() if isinstance(v, torch.Tensor)]
    return leaves


def ordered_kwargs(model, inputs) -> dict:
    """The keyword arguments in forward's parameter order (the order the tracers flatten)."""
    order = list(inspect.signature(type(model).forward).parameters)
    return dict(sorted(inputs.kwargs.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def output_leaves(value, path: str = "out") -> list[tuple[str, object]]:
    import torch

    if isinstance(value, torch.Tensor):
        return [(path, value)]
    if isinstance(value, dict):  # ModelOutput is an OrderedDict without its None fields
        return [leaf for k, v in value.items() for leaf in output_leaves(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)):
        return [leaf for i, v in enumerate(value) for leaf in output_leaves(v, f"{path}[{i}]")]
    return []


def eager_outputs(model, inputs) -> list[tuple[str, object]]:
    import torch

    with torch.no_grad():
        result = model(*copy.deepcopy(inputs.args), **copy.deepcopy(inputs.kwargs))
    return [(p, t.detach().numpy()) for p, t in output_leaves(result)]


def compare(got: list, want: list[tuple[str, object]]) -> str:
    """'' when `got` (onnxruntime's outputs) matches `want`, else what differs."""
    import numpy as np

    if len(got) != len(want):
        return f"{len(got)} outputs, eager has {len(want)}"
    for o, (path, w) in zip(got, want):
        o = np.asarray(o)
        if o.shape != w.shape:
            return f"{path}: shape {list(o.shape)}, eager {list(w.shape)}"
        if o.dtype != w.dtype:
            return f"{path}: dtype {o.dtype}, eager {w.dtype}"
        if w.dtype.kind in "biu":
            if not np.array_equal(o, w):
                return f"{path}: {int((o != w).sum())} of {w.size} values differ"
            continue
        if w.size == 0:
            continue
        scale = max(1.0, float(np.nanmax(np.abs(w))) if np.isfinite(w).any() else 1.0)
        close = np.isclose(o, w, rtol=RTOL, atol=ATOL * scale, equal_nan=True)
        if not close.all():
            diff = np.abs(o.astype(np.float64) - w.astype(np.float64))
            return f"{path}: max |diff| {np.nanmax(diff):.3g} (max |eager| {scale:.3g}), {int((~close).sum())} of {w.size} off"
    return ""


# --- the exporters ---------------------------------------------------------------------

def _quiet():
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    return stack


def _export_untrace(model, case, inputs):
    from lowering import export

    return export(model, copy.deepcopy(inputs.args), kwargs=copy.deepcopy(inputs.kwargs),
                  dynamic_shapes=case.dynamic_shapes, opset=OPSET)


def _legacy_axes(case, model, inputs) -> dict:
    names = {n for n, _ in input_leaves(model, inputs)}
    axes = {}
    for param, spec in case.dynamic_shapes.items():
        if isinstance(spec, dict):
            axes[param] = spec
        else:
            axes.update({f"{param}_{i}": s for i, s in enumerate(spec) if s})
    return {n: a for n, a in axes.items() if n in names}


def _keyword_adapter(model, inputs):
    """`model` called with keyword arguments from a module that takes its tensors by
    position: the legacy tracer calls forward positionally, and fills every parameter it
    was not given with its default. transformers' wrappers around forward then receive
    `use_cache` twice (a TypeError for every base model), and an int default such as
    `logits_to_keep=0` becomes a graph input. A user of the legacy tracer writes this
    adapter; the tensor inputs keep their names and order."""
    import torch

    names = [n for n, _ in input_leaves(model, inputs)]
    fixed = {k: v for k, v in inputs.kwargs.items() if not isinstance(v, torch.Tensor)}

    class KeywordCall(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *tensors):
            return self.model(**dict(zip(names, tensors)), **fixed)

    leaves = tuple(t for _, t in input_leaves(model, inputs))
    return KeywordCall().eval(), leaves


def _export_legacy(model, case, inputs):
    import onnx
    import torch

    buffer = io.BytesIO()
    names = [n for n, _ in input_leaves(model, inputs)]
    inputs = copy.deepcopy(inputs)
    callee, args = (_keyword_adapter(model, inputs) if inputs.kwargs else (model, inputs.args))
    with _quiet():
        torch.onnx.export(callee, args, buffer, dynamo=False, opset_version=OPSET, input_names=names,
                          dynamic_axes=_legacy_axes(case, model, inputs))
    return onnx.load_from_string(buffer.getvalue())


def _dims(spec):
    from torch.export import Dim

    if isinstance(spec, dict):
        return {axis: Dim.DYNAMIC for axis in spec}
    return [_dims(s) for s in spec]


def _export_dynamo(model, case, inputs):
    import torch

    bound = inspect.signature(type(model).forward).bind(model, *inputs.args, **inputs.kwargs)
    dynamic = {n: (_dims(case.dynamic_shapes[n]) if n in case.dynamic_shapes else None)
               for n in list(bound.arguments)[1:]}
    with _quiet():
        program = torch.onnx.export(model, copy.deepcopy(inputs.args), kwargs=ordered_kwargs(model, copy.deepcopy(inputs)),
                                    dynamo=True, opset_version=OPSET, dynamic_shapes=dynamic)
    return program.model_proto


EXPORT = {"untrace": _export_untrace, "legacy": _export_legacy, "dynamo": _export_dynamo}


def _first_line(exc: BaseException) -> str:
    """The first line of the message, without terminal colours. When torch.onnx wraps
    another exception ("Failed to export the model with torch.export. This is step 1/3
    ..."), the wrapped one's first line comes first: that is the reason."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(exc).__name__)
    cause = exc.__cause__
    if cause is not None and exc.__class__.__module__.startswith("torch.onnx"):
        return f"{type(cause).__name__}: {_first_line(cause)} (torch.onnx: {first})"
    return first


def _location(exc: BaseException) -> str:
    path, line = getattr(exc, "path", None), getattr(exc, "line", None)
    if path is not None:
        return f"{path}:{line}" if line is not None else str(path)
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: int | None):
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum, frame):
        raise _Timeout(f"timed out after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _judge(proto, model, inputs, checks, references) -> str:
    """'' when the graph is valid and matches eager on every check, else what is wrong."""
    import onnx
    import onnxruntime as ort

    try:
        onnx.checker.check_model(proto, full_check=True)
    except Exception as exc:  # noqa: BLE001 - any checker failure is a wrong graph
        return f"onnx.checker: {_first_line(exc)}"
    try:
        session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001
        return f"onnxruntime cannot load the graph: {_first_line(exc)}"
    graph_inputs = [i.name for i in session.get_inputs()]
    for (label, check), want in zip(checks, references):
        feeds = {n: t.numpy() for n, t in input_leaves(model, check)}
        unknown = [n for n in graph_inputs if n not in feeds]
        if unknown:
            return f"graph input {unknown[0]!r} is no tensor the model takes"
        try:
            got = session.run(None, {n: feeds[n] for n in graph_inputs})
        except Exception as exc:  # noqa: BLE001
            return f"onnxruntime fails on {label!r}: {_first_line(exc)}"
        difference = compare(got, want)
        if difference:
            return f"on {label!r}: {difference}"
    return ""


def measure(case, exporter: str, model_inputs, references, timeout: int | None = TIMEOUT_S) -> Outcome:
    """Export `case` with `exporter` and judge it; never raises for the exporter's sake."""
    install_torchvision_ops()
    model = case.build()
    start = time.perf_counter()
    try:
        with _time_limit(timeout):
            proto = EXPORT[exporter](model, case, model_inputs.example)
    except (Exception, _Timeout) as exc:  # noqa: BLE001 - every failure is a refusal
        return Outcome(exporter, "refused", _first_line(exc), time.perf_counter() - start,
                       type(exc).__name__, _location(exc))
    seconds = time.perf_counter() - start
    try:
        with _time_limit(timeout):
            wrong = _judge(proto, model, model_inputs.example, model_inputs.checks, references)
    except _Timeout as exc:
        wrong = f"checking {exc}"
    return Outcome(exporter, "wrong" if wrong else "correct", wrong, seconds)


def _warm_up(exporters) -> None:
    """One tiny export per cheap exporter, so no case pays for their lazy imports."""
    import torch

    from benchmarks.zoo.cases import Case, CaseInputs, Inputs

    tiny = Case("warm-up", "none", lambda: torch.nn.Linear(2, 2).eval(),
                lambda: CaseInputs(Inputs((torch.ones(1, 2),)), []), {})
    for exporter in exporters:
        if exporter != "dynamo":
            with contextlib.suppress(Exception):
                EXPORT[exporter](tiny.build(), tiny, tiny.inputs().example)


def _check_dynamic_names(case, model) -> None:
    """A dynamic_shapes key that names no parameter of forward would leave that input
    static in the tracers' graphs (they drop unknown names): a mistake in the case."""
    params = set(list(inspect.signature(type(model).forward).parameters)[1:])
    unknown = sorted(set(case.dynamic_shapes) - params)
    if unknown:
        raise ValueError(f"{case.key}: dynamic_shapes names {unknown}, not parameters of forward ({sorted(params)})")


def run_in_process(case, exporters=EXPORTERS, timeout: int | None = TIMEOUT_S, on_outcome=None) -> list[Outcome]:
    install_torchvision_ops()
    _warm_up(exporters)
    model_inputs = case.inputs()
    reference_model = case.build()
    _check_dynamic_names(case, reference_model)
    references = [eager_outputs(reference_model, check) for _, check in model_inputs.checks]
    del reference_model
    outcomes = []
    for exporter in exporters:
        outcome = measure(case, exporter, model_inputs, references, timeout)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return outcomes


def preload() -> None:
    """Import every library a case may need, once, in the process that forks the
    children (a child then starts in milliseconds instead of re-importing them)."""
    install_torchvision_ops()
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
    import timm  # noqa: F401
    import torch.onnx._internal.exporter._core  # noqa: F401 - the dynamo exporter
    import torchvision  # noqa: F401
    import transformers  # noqa: F401

    import lowering  # noqa: F401


def _child(key: str, exporters, timeout: int, path: str, threads: int | None = None, find=None) -> None:
    if find is None:
        from benchmarks.zoo.registry import find

    if threads:
        import torch

        torch.set_num_threads(threads)

    with open(path, "a") as out:
        def write(outcome: Outcome) -> None:
            out.write(json.dumps(asdict(outcome)) + "\n")
            out.flush()

        run_in_process(find(key), exporters, timeout, write)


def run_isolated(case, exporters=EXPORTERS, timeout: int = TIMEOUT_S, threads: int | None = None,
                 find=None) -> list[Outcome]:
    """`run_in_process` in a forked child (after `preload()`), so that a crash of the
    interpreter or a hang past every limit stops this case only; the exporters it did not
    finish are refused with what happened. `threads`: torch's intra-op threads in the
    child (None: torch's default, one per core). `find`: the case by its key in the child
    (default: the zoo's registry)."""
    import multiprocessing

    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as out:
        path = out.name
    limit = timeout * (len(exporters) + 1)
    child = multiprocessing.get_context("fork").Process(target=_child, args=(case.key, list(exporters), timeout, path, threads, find))
    child.start()
    child.join(limit)
    failure = ""
    if child.is_alive():
        child.kill()
        child.join()
        failure = f"killed after {limit} s"
    elif child.exitcode:
        failure = f"the process died (exit code {child.exitcode})"
    lines = Path(path).read_text().splitlines()
    os.unlink(path)
    outcomes = {o.exporter: o for o in (Outcome(**json.loads(line)) for line in lines)}
    return [outcomes.get(e) or Outcome(e, "refused", failure or "no result", None, "Crash") for e in exporters]
