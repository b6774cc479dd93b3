"""``verify(module, inputs, ...)``: run every system on every input, compare with eager,
count branch coverage from the untrace probes, optionally search for more inputs, and
say where the traced export diverges."""

from __future__ import annotations

import datetime
import time

import numpy as np
import onnx
import torch

from lowering.graph import DEFAULT_OPSET
from lowering.verification import inputs as inp
from lowering.verification import record as rec
from lowering.verification import systems
from lowering.verification.compare import Comparison, failed
from lowering.verification.compare import compare as compare_outputs
from lowering.verification.coverage import CoverageCounter, Observation, Site, TRIPS, observe
from lowering.verification.report import Divergence, InputInfo, SystemReport, VerifyReport
from lowering.verification.search import SearchResult
from lowering.verification.search import search as run_search

PEERS = {"trace": systems.export_trace, "dynamo": systems.export_dynamo}


def verify(
    module: torch.nn.Module,
    inputs: list,
    *,
    onnx_model: onnx.ModelProto | bytes | str | None = None,
    compare: tuple[str, ...] | list[str] = ("trace", "dynamo"),
    rtol: float = 1e-4,
    atol: float = 1e-5,
    search: int = 0,
    search_seconds: float | None = None,
    opset: int = DEFAULT_OPSET,
    origins: list[str] | None = None,
    seed: int = 0,
) -> VerifyReport:
    """Check ``module`` against its untrace ONNX (and the peers named in ``compare``)
    on ``inputs`` (a list of tuples of positional arguments; a bare tensor is a
    1-tuple). ``search=N`` spends up to N candidate evaluations (and
    ``search_seconds``) looking for inputs that cover the sides no input took; it
    mutates the inputs that share the first input's signature (dtypes, ranks, shapes
    stay), and the inputs it keeps are verified like the given ones (origin "search")."""
    unknown = [c for c in compare if c not in PEERS]
    if unknown:
        raise ValueError(f"compare: unknown system {', '.join(unknown)} (known: {', '.join(PEERS)})")
    inputs = [tuple(a) if isinstance(a, (tuple, list)) else (a,) for a in inputs]
    if not inputs:
        raise ValueError("verify needs at least one input")
    origins = list(origins or ["given"] * len(inputs))
    names = inp.parameter_names(module)
    started = time.perf_counter()

    exports = _untrace_exports(module, inputs, names, opset, onnx_model)
    runners = _runners(exports)
    runner_of = {i: runners[k] for k, e in enumerate(exports) for i in e.indices}

    search_result = None
    if search > 0:
        search_result, found = _search(module, inputs, names, runner_of, search, search_seconds, seed)
        if found:
            group = next(k for k, e in enumerate(exports) if 0 in e.indices)
            new = list(range(len(inputs), len(inputs) + len(found)))
            exports[group].indices.extend(new)
            runner_of.update({i: runners[group] for i in new})
            inputs = inputs + found
            origins = origins + ["search"] * len(found)

    eager: list[list[np.ndarray] | None] = []
    infos: list[InputInfo] = []
    for i, args in enumerate(inputs):
        info = InputInfo(i, origins[i], inp.describe(args, names))
        try:
            eager.append(systems.run_eager(module, args))
        except Exception as exc:
            eager.append(None)
            info.eager_error = systems.describe_error(exc)
        infos.append(info)

    reports: dict[str, SystemReport] = {}
    observations: list[dict[Site, Observation] | None] = []
    counter = CoverageCounter()
    untrace_per_input = []
    for i, args in enumerate(inputs):
        runner = runner_of.get(i)
        obs: dict[Site, Observation] | None = None
        if isinstance(runner, systems.OnnxRunner):
            counter.declare(runner.probes)
            try:
                real, values = runner.run(args, names)
                obs = observe(runner.probes, values)
                counter.add(obs)
                untrace_per_input.append(_against(real, eager[i], infos[i], rtol, atol))
            except Exception as exc:
                untrace_per_input.append(failed(f"onnxruntime: {systems.describe_error(exc)}"))
        else:
            untrace_per_input.append(failed(runner or "not exported"))
        observations.append(obs)
    errors = [e.error for e in exports if e.error]
    reports["untrace"] = SystemReport(
        "untrace", exported=not errors, error="; ".join(errors) or None, per_input=untrace_per_input,
        seconds=sum(e.seconds for e in exports),
        dynamic_axes=exports[0].dynamic_axes if len(exports) == 1 else [e.dynamic_axes for e in exports])

    for name in compare:
        reports[name] = _peer(name, module, inputs, names, opset, eager, infos, rtol, atol)

    ran = [i for i, info in enumerate(infos) if info.eager_error is None]
    ok = reports["untrace"].exported and bool(ran) and all(untrace_per_input[i].match for i in ran)
    has_probes = any(isinstance(r, systems.OnnxRunner) and r.probes for r in runners)
    sources = rec.source_files(module, sorted({s.path for s in counter.sites.values()}))
    report = VerifyReport(
        ok=ok, inputs=infos, systems=reports, coverage=counter.entries(), uncovered=counter.uncovered(),
        divergence=_divergence(reports.get("trace"), counter, observations, infos),
        record={}, search=search_result, observations=observations, sources=sources, has_probes=has_probes)
    report.record = _record(module, report, opset, rtol, atol, onnx_model is not None, time.perf_counter() - started)
    return report


# ----------------------------------------------------------------------------- pieces


def _untrace_exports(module, inputs, names, opset, onnx_model) -> list[systems.Export]:
    if onnx_model is None:
        return systems.export_untrace(module, inputs, names, opset)
    if isinstance(onnx_model, str):
        onnx_model = onnx.load(onnx_model)
    elif isinstance(onnx_model, bytes):
        onnx_model = onnx.load_from_string(onnx_model)
    return [systems.Export("untrace", model=onnx_model, indices=list(range(len(inputs))))]


def _runners(exports) -> list:
    """An OnnxRunner per export, or the reason there is none (a string)."""
    out = []
    for e in exports:
        if e.model is None:
            out.append(f"not exported: {e.error}")
            continue
        try:
            out.append(systems.OnnxRunner(e.model))
        except Exception as exc:
            e.error = f"onnxruntime cannot load the model: {systems.describe_error(exc)}"
            out.append(e.error)
    return out


def _against(real, want, info: InputInfo, rtol, atol) -> Comparison:
    if want is None:
        return failed(f"eager raised: {info.eager_error}")
    return compare_outputs(real, want, rtol=rtol, atol=atol)


def _search(module, inputs, names, runner_of, budget, seconds, seed) -> tuple[SearchResult, list[tuple]]:
    runner = runner_of.get(0)
    if not isinstance(runner, systems.OnnxRunner) or not runner.probes:
        return SearchResult(budget=budget, note="no untrace model with probes to search with"), []
    starts = [a for i, a in enumerate(inputs) if runner_of.get(i) is runner]
    counter = CoverageCounter()
    counter.declare(runner.probes)
    for i, args in enumerate(inputs):
        r = runner_of.get(i)
        if isinstance(r, systems.OnnxRunner):
            counter.declare(r.probes)
            try:
                counter.add(observe(r.probes, r.run(args, names)[1]))
            except Exception:
                pass

    def accept(args) -> bool:
        try:
            outputs = systems.run_eager(module, args)
        except Exception:
            return False
        return all(np.isfinite(o).all() for o in outputs if np.asarray(o).dtype.kind in "fc")

    result = run_search(lambda args: runner.run(args, names), runner.probes, counter, starts, budget=budget,
                        time_limit=seconds, accept=accept, embedding=inp.embedding_bound(module), seed=seed)
    return result, list(result.found)


def _peer(name, module, inputs, names, opset, eager, infos, rtol, atol) -> SystemReport:
    export = PEERS[name](module, inputs, names, opset)
    per_input: list[Comparison] = []
    runner = None
    if export.model is not None:
        try:
            runner = systems.OnnxRunner(export.model)
        except Exception as exc:
            export.error = f"onnxruntime cannot load the model: {systems.describe_error(exc)}"
    for i, args in enumerate(inputs):
        if runner is None:
            per_input.append(failed(export.error or "not exported"))
            continue
        try:
            real, _ = runner.run(args, names)
        except Exception as exc:
            per_input.append(failed(f"onnxruntime: {systems.describe_error(exc)}"))
            continue
        per_input.append(_against(real, eager[i], infos[i], rtol, atol))
    return SystemReport(name, exported=runner is not None, error=export.error, per_input=per_input,
                        seconds=export.seconds, tracer_warnings=export.tracer_warnings,
                        dynamic_axes=export.dynamic_axes)


def _side(obs: Observation | None, kinds: set) -> str:
    if obs is None or not obs.reached:
        return "not reached"
    parts = []
    if obs.then or obs.else_:
        parts.append("+".join(s for s, took in (("then", obs.then), ("else", obs.else_)) if took))
    if TRIPS in kinds:
        parts.append("trips " + ",".join(str(t) for t in sorted(obs.trips)))
    return " ".join(parts) or "reached"


def _divergence(trace: SystemReport | None, counter, observations, infos) -> list[Divergence]:
    """The sites where an input on which the traced export is wrong (or fails to run)
    went another way than the tracing input (input 0) did."""
    if trace is None or not trace.exported or not observations or observations[0] is None:
        return []
    wrong = [i for i, c in enumerate(trace.per_input)  # a wrong answer, or a run that fails
             if i > 0 and not c.match and infos[i].eager_error is None and observations[i] is not None]
    out = []
    for site in counter.entries():
        traced = _side(observations[0].get(site.site), site.kinds)
        diverging = [(i, _side(observations[i].get(site.site), site.kinds)) for i in wrong]
        diverging = [(i, took) for i, took in diverging if took != traced]
        if diverging:
            out.append(Divergence(site.path, site.line, site.construct, traced,
                                  [i for i, _ in diverging], [t for _, t in diverging]))
    return out


def _record(module, report: VerifyReport, opset, rtol, atol, given_model: bool, seconds: float) -> dict:
    return {
        "versions": rec.versions(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "model": rec.model_name(module),
        "training": bool(module.training),
        "opset": opset,
        "untrace_model": "given" if given_model else "exported",
        "probes": report.has_probes,
        "dynamic_axes": {name: s.dynamic_axes for name, s in report.systems.items()},
        "inputs": [i.to_dict() for i in report.inputs],
        "tolerances": {"rtol": rtol, "atol": atol},
        "metrics": {name: rec.metrics(s.per_input) for name, s in report.systems.items()},
        "exports": {name: {"exported": s.exported, "error": s.error, "seconds": round(s.seconds, 3)}
                    for name, s in report.systems.items()},
        "tracer_warnings": sum(s.tracer_warnings for s in report.systems.values()),
        "sources": report.sources,
        "hazards": rec.hazards(report.sources),
        "seconds": round(seconds, 3),
    }
