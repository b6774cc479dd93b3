"""Export speed and graph quality, measured against the peers in the same run.

For every corpus model that untrace exports:
- export time of untrace (from source) vs torch.onnx.export(dynamo=True) vs the legacy
  tracer (dynamo=False), each the median of --repeat runs (the dynamo exporter once:
  it is slow), printed as ratios peer / untrace;
- on the hazard-free models (no `# expect:` marker), onnxruntime latency of the untrace
  graph vs the traced graph (median of --runs runs each, interleaved), printed as the
  ratio untrace / traced.

    python benchmarks/export_speed.py [--repeat 3] [--runs 200] [--only NAME ...]

Absolute times on a shared machine mean little; the ratios are the result.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

from lowering import LoweringError, export  # noqa: E402
from tests.export.corpus import corpus_names, load  # noqa: E402


def _timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _torch_export(model, args, dynamo: bool) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buffer, dynamo=dynamo, opset_version=18)
    return buffer.getvalue()


def _latency(model_bytes: bytes, feeds: dict, runs: int) -> float:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    for _ in range(10):
        session.run(None, feeds)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    names = args.only or corpus_names()
    speed_rows, latency_rows = [], []
    print(f"{'model':28} {'untrace s':>10} {'dynamo s':>10} {'legacy s':>10} {'dynamo/untrace':>15} {'legacy/untrace':>15}")
    for name in names:
        module, path = load(name)
        model = module.build()
        example = copy.deepcopy(module.inputs()[0])
        try:
            untrace_s = _timed(lambda: export(model, copy.deepcopy(example)), args.repeat)
        except LoweringError as exc:
            print(f"{name:28} untrace refuses: {str(exc).splitlines()[0][:80]}")
            continue
        try:
            dynamo_s = _timed(lambda: _torch_export(model, copy.deepcopy(example), True), 1)
        except Exception as exc:  # the dynamo exporter refuses data-dependent control flow
            dynamo_s = None
            dynamo_error = type(exc).__name__
        try:
            legacy_s = _timed(lambda: _torch_export(model, copy.deepcopy(example), False), args.repeat)
        except Exception:
            legacy_s = None
        fmt = lambda v: f"{v:10.3f}" if v is not None else f"{'refused':>10}"  # noqa: E731
        ratio = lambda v: f"{v / untrace_s:15.1f}" if v is not None else f"{'-':>15}"  # noqa: E731
        print(f"{name:28} {untrace_s:10.3f} {fmt(dynamo_s)} {fmt(legacy_s)} {ratio(dynamo_s)} {ratio(legacy_s)}")
        speed_rows.append((name, untrace_s, dynamo_s, legacy_s))
        hazard_free = "# expect:" not in path.read_text()
        if hazard_free and legacy_s is not None:
            tensors = [a for a in example if isinstance(a, torch.Tensor)]
            ours = export(model, copy.deepcopy(example)).SerializeToString()
            traced = _torch_export(model, copy.deepcopy(example), False)
            feeds_ours = {i.name: t.numpy() for i, t in zip(ort.InferenceSession(ours, providers=["CPUExecutionProvider"]).get_inputs(), tensors)}
            feeds_traced = {i.name: t.numpy() for i, t in zip(ort.InferenceSession(traced, providers=["CPUExecutionProvider"]).get_inputs(), tensors)}
            ours_t = _latency(ours, feeds_ours, args.runs)
            traced_t = _latency(traced, feeds_traced, args.runs)
            latency_rows.append((name, ours_t, traced_t))
    dynamo_ratios = [d / u for _, u, d, _ in speed_rows if d is not None]
    legacy_ratios = [lg / u for _, u, _, lg in speed_rows if lg is not None]
    print()
    print(f"models exported by untrace: {len(speed_rows)}; by the dynamo exporter: {len(dynamo_ratios)}; "
          f"by the legacy tracer: {len(legacy_ratios)}")
    if dynamo_ratios:
        print(f"median dynamo/untrace export time: {statistics.median(dynamo_ratios):.1f}x (target >= 10x)")
    if legacy_ratios:
        print(f"median legacy/untrace export time: {statistics.median(legacy_ratios):.2f}x")
    if latency_rows:
        print()
        print(f"{'hazard-free model':28} {'untrace ms':>11} {'traced ms':>10} {'ratio':>7}")
        for name, ours_t, traced_t in latency_rows:
            print(f"{name:28} {ours_t * 1e3:11.4f} {traced_t * 1e3:10.4f} {ours_t / traced_t:7.2f}")
        ratios = [o / t for _, o, t in latency_rows]
        print(f"median onnxruntime latency untrace/traced: {statistics.median(ratios):.2f} (target <= 1.10)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
