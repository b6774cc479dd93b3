"""The frozen `--fix` test set of issue 26: what `untrace check --fix --unsafe-fixes` makes of
models it was not developed on.

    python benchmarks/fix_testset.py [--set benchmarks/fix_testset] [--markdown OUT.md] [--json OUT.json]

`benchmarks/fix_testset/` holds small branchy models written for this, in the style of
library code, and pinned before the work on the fixes (benchmarks/README.md). Every file
has `build()` (an `eval()` module) and `inputs()` (argument tuples of one shape that
together take every branch), the interface of `corpora/`, so `--set corpora` runs the
same measure on the development set.

For each model:

1. the set is copied to a temporary folder and fixed there by the real command line,
   `untrace check --fix --unsafe-fixes` (run as `python -m analyzer.cli`);
2. the default findings are counted before and after (`--output-format json`);
3. in a child process of its own (a hung or crashing export stops only that model):
   - the fixed model's eager outputs must equal the original's on every input, exactly;
   - the original and the fixed model are exported with `torch.export.export(strict=False)`
     and `torch.onnx.export(dynamo=True)` from the first input; the exported program and
     the ONNX model (on onnxruntime) are run on every input and compared with the
     original's eager outputs.

An export is "ok" when it succeeds and matches on every input, "wrong" when it succeeds
but some input gives other outputs, "fails" when it raises. Prints a table and counts.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SET = ROOT / "benchmarks" / "fix_testset"
MODEL_TIMEOUT = 900  # seconds for one model's exports (both versions)
RTOL, ATOL = 1e-4, 1e-5

# What each model of the frozen sets was written to exercise (the table's "kind").
KINDS = {
    "nucleus_candidates": "escape-size", "trim_padded_encoder": "escape-size", "crop_to_foreground": "escape-size",
    "pack_valid_frames": "escape-size", "narrow_audio_window": "escape-size", "confident_topk": "escape-size",
    "duration_expander": "escape-size",
    "newton_schulz_whitening": "loop-break", "principal_direction": "loop-break", "adaptive_computation": "while",
    "entmax_bisection": "loop-break", "greedy_search": "loop-break", "sinkhorn_matching": "loop-break",
    "block_float_scaler": "while",
    "empty_safe_pooler": "early-return", "residual_refiner": "early-return", "entropy_early_exit": "early-return",
    "finite_logits_guard": "one-sided-if", "rejecting_classifier": "mid-return", "safe_normalize": "early-return",
    "gru_until_longest": "list-build", "segment_mean_pool": "list-build", "score_filter_rows": "list-build",
    "greedy_center_picker": "list-build", "autoregressive_sampler": "list-build",
    "robust_standardize": "multi-assign", "ordered_pair_fusion": "multi-assign", "two_expert_switch": "multi-assign",
    "sliding_window_cache": "multi-assign", "entropy_temperature": "multi-assign",
    "dense_detection_postprocess": "several", "stop_token_decoder": "several", "clipped_gradient_refiner": "several",
    "checked_gated_mixer": "several",
    "configurable_block": "untouched", "rank_flexible_stem": "untouched", "already_exportable": "untouched",
    "cosine_schedule_steps": "untouched",
    # the second frozen set, benchmarks/fix_testset2/ (run with --set benchmarks/fix_testset2)
    "spectral_lowpass_denoiser": "escape-size", "token_mass_pruning": "escape-size",
    "message_passing_scatter": "escape-size", "pyramid_level_roi_pool": "escape-size",
    "aspect_preserving_resize": "escape-size", "autocorrelation_period_fold": "escape-size",
    "equilibrium_block": "while", "adaptive_heun_solver": "while", "kmeans_token_clusters": "while",
    "conjugate_gradient_layer": "while", "greedy_token_merging": "while",
    "cascade_exit_classifier": "loop-break", "transducer_greedy_decode": "loop-break",
    "monotonic_alignment_step": "loop-break", "armijo_backtracking": "loop-break",
    "silent_frame_gate": "early-return", "cold_start_ranker": "early-return", "nan_gap_filler": "early-return",
    "degenerate_box_guard": "early-return",
    "onset_peak_features": "list-build", "ragged_history_attention": "list-build",
    "sentence_span_pooling": "list-build", "viterbi_crf_decode": "list-build",
    "exposure_correction": "multi-assign", "stereo_mid_side_encoder": "multi-assign",
    "hard_negative_contrastive": "multi-assign", "seasonal_trend_decomposer": "multi-assign",
    "centerness_keypoint_decoder": "several", "streaming_vad_segmenter": "several",
    "diverse_topk_recommender": "several", "speculative_greedy_decoder": "several",
    "guarded_masked_norm": "untouched", "shape_adaptive_patch_embed": "untouched", "static_topk_retrieval": "untouched",
}


# ------------------------------------------------------------------------------ parent


def models_in(folder: Path) -> list[str]:
    """``<name>.py`` files with a ``build`` (and packages ``<name>/model.py``, as in corpora/)."""
    names = [p.stem for p in folder.glob("*.py") if not p.name.startswith("_") and "def build" in p.read_text()]
    names += [p.name for p in folder.iterdir() if (p / "model.py").is_file()]
    return sorted(names)


def untrace(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "analyzer.cli", *args], capture_output=True, text=True, env=env,
                          check=False)


def findings(folder: Path) -> dict[str, list[str]]:
    """model name -> the codes of its default findings."""
    done = untrace("check", str(folder), "--output-format", "json", "--no-cache", "-j", "1", "--exit-zero")
    if done.returncode != 0:
        raise SystemExit(f"untrace check failed ({done.returncode}): {done.stderr}")
    out: dict[str, list[str]] = {}
    for d in json.loads(done.stdout or "[]"):
        rel = Path(d["path"]).resolve().relative_to(folder.resolve())
        out.setdefault(rel.parts[0].removesuffix(".py"), []).append(d["code"])
    return out


def measure_one(name: str, original: Path, fixed: Path, changed: bool, threads: int) -> dict:
    command = [sys.executable, __file__, "--child", name, "--original", str(original), "--fixed", str(fixed),
               "--threads", str(threads)] + (["--changed"] if changed else [])
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=MODEL_TIMEOUT, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {MODEL_TIMEOUT} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": f"child exited {done.returncode}: {done.stderr.strip().splitlines()[-1:] }"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="folder of models (default: the frozen set)")
    parser.add_argument("--only", nargs="*", help="only these models")
    parser.add_argument("--markdown", type=Path, help="write the table here")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--original", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--fixed", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--changed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.original, args.fixed, args.changed, args.threads)))
        return 0

    folder = args.set.resolve()
    names = models_in(folder)
    if args.only:
        names = [n for n in names if n in args.only]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__", ".untrace_cache"))
        before = findings(copy)
        fixing = untrace("check", str(copy), "--fix", "--unsafe-fixes", "--no-cache", "-j", "1", "--exit-zero")
        if fixing.returncode != 0:
            raise SystemExit(f"untrace check --fix failed ({fixing.returncode}): {fixing.stderr}")
        after = findings(copy)
        for name in names:
            files = [f"{name}.py"] if (folder / f"{name}.py").is_file() else [
                f"{name}/{p.name}" for p in (folder / name).glob("*.py")]
            changed = any((folder / f).read_bytes() != (copy / f).read_bytes() for f in files)
            row = {"model": name, "kind": KINDS.get(name, "-"), "findings_before": sorted(before.get(name, [])),
                   "findings_after": sorted(after.get(name, [])), "changed": changed}
            row.update(measure_one(name, folder, copy, changed, args.threads))
            rows.append(row)
            print(_line(row), flush=True)
    table = render(rows, folder)
    print("\n" + table)
    if args.markdown:
        args.markdown.write_text(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def _verdict(result) -> str:
    if result is None:
        return "-"
    return result if result in ("ok",) else result.split(":", 1)[0]


def _line(row: dict) -> str:
    if "error" in row:
        return f"{row['model']:30s} ERROR {row['error']}"
    return (f"{row['model']:30s} {row['kind']:13s} findings {len(row['findings_before'])}->{len(row['findings_after'])} "
            f"{'fixed' if row['changed'] else '     '} export {_verdict(row['export_before'])}->"
            f"{_verdict(row['export_after'])} onnx {_verdict(row['onnx_before'])}->{_verdict(row['onnx_after'])} "
            f"eager {row['eager']}")


def render(rows: list[dict], folder: Path) -> str:
    out = [f"Set: `{os.path.relpath(folder, ROOT)}` ({len(rows)} models). `export`: torch.export.export(strict=False); "
           "`onnx`: torch.onnx.export(dynamo=True) run on onnxruntime; both compared with the original's eager "
           "outputs on every input (ok / wrong / fails). `eager`: the fixed model's eager outputs against the "
           "original's, exactly.", "",
           "| model | kind | findings before | after | fixed | export before | export after | onnx before | onnx after | eager |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "error" in row:
            out.append(f"| {row['model']} | {row['kind']} | | | | error: {row['error']} | | | | |")
            continue
        out.append(f"| {row['model']} | {row['kind']} | {len(row['findings_before'])} | {len(row['findings_after'])} | "
                   f"{'yes' if row['changed'] else ''} | {_verdict(row['export_before'])} | "
                   f"{_verdict(row['export_after'])} | {_verdict(row['onnx_before'])} | {_verdict(row['onnx_after'])} | "
                   f"{row['eager']} |")
    ok = [r for r in rows if "error" not in r]
    hazardous = [r for r in ok if r["findings_before"]]
    untouched = [r for r in ok if not r["findings_before"]]

    def count(rs, key):
        return sum(r[key] == "ok" for r in rs)

    out += ["",
            f"- models with findings: {len(hazardous)} of {len(rows)}; files changed by `--fix --unsafe-fixes`: "
            f"{sum(r['changed'] for r in ok)}",
            f"- torch.export (strict=False) correct on every input, of the models with findings: "
            f"before {count(hazardous, 'export_before')}, after {count(hazardous, 'export_after')} of {len(hazardous)}",
            f"- torch.onnx.export(dynamo=True) correct on onnxruntime, of the models with findings: "
            f"before {count(hazardous, 'onnx_before')}, after {count(hazardous, 'onnx_after')} of {len(hazardous)}",
            f"- models without findings: {len(untouched)}, changed by the fix: {sum(r['changed'] for r in untouched)}",
            f"- fixed models whose eager outputs changed: {sum(r['eager'] not in ('same', '-') for r in ok)}",
            f"- findings: {sum(len(r['findings_before']) for r in ok)} before, "
            f"{sum(len(r['findings_after']) for r in ok)} after"]
    errors = [r for r in rows if "error" in r]
    if errors:
        out.append(f"- models the harness could not measure: {len(errors)}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ child


def _load(folder: Path, name: str, tag: str):
    path = folder / f"{name}.py"
    if not path.is_file():  # a package of corpora/ (multi_file): imported as corpora.<name>.model
        from tests.fixes.corpus_fixing import load_model

        return load_model(folder.parent, name)
    module_name = f"fix_testset_{tag}_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # torch.cond / torch.export look the module up
    spec.loader.exec_module(module)
    return module.build(), module.inputs()


def _leaves(value):
    import torch.utils._pytree as pytree

    return pytree.tree_leaves(value)


def _compare(got, expected) -> str | None:
    import torch

    got, expected = _leaves(got), _leaves(expected)
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = torch.as_tensor(g)
        e = torch.as_tensor(e)
        if tuple(g.shape) != tuple(e.shape):
            return f"output {i} has shape {tuple(g.shape)}, expected {tuple(e.shape)}"
        if e.dtype.is_floating_point:
            if not torch.allclose(g.to(e.dtype), e, rtol=RTOL, atol=ATOL, equal_nan=True):
                return f"output {i} differs by {(g.to(e.dtype) - e).abs().max().item():.3g}"
        elif not torch.equal(g.to(e.dtype), e):
            return f"output {i} differs"
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0][:200] if text else ''}"


def _quiet():
    stack = contextlib.ExitStack()
    sink = io.StringIO()
    stack.enter_context(contextlib.redirect_stdout(sink))
    stack.enter_context(contextlib.redirect_stderr(sink))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def _export_verdict(model, inputs, expected) -> str:
    import torch

    try:
        with _quiet():
            program = torch.export.export(model, inputs[0], strict=False)
    except Exception as error:  # noqa: BLE001 - any failure is "fails"
        return "fails: " + _first_line(error)
    runnable = program.module()
    for i, args in enumerate(inputs):
        try:
            with torch.no_grad(), _quiet():
                got = runnable(*args)
        except Exception as error:  # noqa: BLE001 - a runtime assertion of the program, say
            return f"wrong: input {i} raises {_first_line(error)}"
        why = _compare(got, expected[i])
        if why:
            return f"wrong: input {i}: {why}"
    return "ok"


def _onnx_verdict(model, inputs, expected) -> str:
    import torch

    try:
        with _quiet():
            program = torch.onnx.export(model, inputs[0], dynamo=True, verbose=False)
    except Exception as error:  # noqa: BLE001
        return "fails: " + _first_line(error)
    for i, args in enumerate(inputs):
        try:
            with _quiet():
                got = program(*args)  # onnxruntime
        except Exception as error:  # noqa: BLE001
            return f"wrong: input {i} raises {_first_line(error)}"
        why = _compare(got, expected[i])
        if why:
            return f"wrong: input {i}: {why}"
    return "ok"


def child(name: str, original: Path, fixed: Path, changed: bool, threads: int) -> dict:
    import torch

    torch.set_num_threads(threads)
    model, inputs = _load(original, name, "original")
    with torch.no_grad():
        expected = [model(*args) for args in inputs]
    result = {"eager": "-"}
    result["export_before"] = _export_verdict(model, inputs, expected)
    result["onnx_before"] = _onnx_verdict(model, inputs, expected)
    if not changed:
        result["export_after"], result["onnx_after"] = result["export_before"], result["onnx_before"]
        return result
    try:
        fixed_model, fixed_inputs = _load(fixed, name, "fixed")
        fixed_model.load_state_dict(model.state_dict())
        with torch.no_grad():
            for i, args in enumerate(fixed_inputs):
                why = _compare(fixed_model(*args), expected[i])
                if why is None:
                    exact = all(torch.equal(torch.as_tensor(a), torch.as_tensor(b)) for a, b in
                                zip(_leaves(fixed_model(*args)), _leaves(expected[i])))
                    why = None if exact else "not bit for bit"
                if why:
                    result["eager"] = f"DIFFERENT (input {i}: {why})"
                    break
            else:
                result["eager"] = "same"
    except Exception as error:  # noqa: BLE001 - the fixed code does not even run
        result["eager"] = f"RAISES ({_first_line(error)})"
        result["export_after"] = result["onnx_after"] = "fails: the fixed model does not run"
        return result
    result["export_after"] = _export_verdict(fixed_model, fixed_inputs, expected)
    result["onnx_after"] = _onnx_verdict(fixed_model, fixed_inputs, expected)
    return result


if __name__ == "__main__":
    sys.exit(main())
