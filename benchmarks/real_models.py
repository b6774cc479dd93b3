"""Real models of timm, torchvision and transformers, exported by untrace, the legacy
tracer and dynamo, and checked on onnxruntime against eager PyTorch.

Every case (benchmarks/zoo) is built with seeded random weights from a tiny config, in
eval() mode, with nothing downloaded; it is exported with dynamic batch (and sequence
length or height and width where the model allows), the graph passes
`onnx.checker.check_model(full_check=True)` and onnxruntime matches eager on at least
three other inputs (benchmarks/zoo/harness.py says how outputs are compared). Each case
runs in its own process, each exporter with a time limit.

    python benchmarks/real_models.py [--only NAME ...] [--library timm|torchvision|transformers]
                                     [--exporters untrace,legacy,dynamo] [--timeout 300]
                                     [--json OUT.json] [--markdown OUT.md] [--threads N]

Prints one row per model: each exporter's status (correct / wrong / refused) with its
first reason, export times and the untrace/legacy time ratio; then the counts per
exporter and library, and the median untrace/legacy ratio over the models both export.
Absolute times on a shared machine mean little; the ratio is the result. On a machine
whose cores other jobs keep busy, torch's default of one intra-op thread per core makes
the legacy tracer (which runs the model) several times slower than it is, and untrace
(which does not) hardly at all: `--threads 1` gives both exporters one thread.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.zoo.harness import EXPORTERS, TIMEOUT_S, Outcome, preload, run_isolated  # noqa: E402
from benchmarks.zoo.registry import LIBRARIES, select  # noqa: E402

STATUSES = ("correct", "wrong", "refused")


def ratio(row: dict[str, Outcome]) -> float | None:
    """untrace / legacy export time, where both produced a graph."""
    untrace, legacy = row.get("untrace"), row.get("legacy")
    if not untrace or not legacy or "refused" in (untrace.status, legacy.status):
        return None
    if not untrace.seconds or not legacy.seconds:
        return None
    return untrace.seconds / legacy.seconds


def _cell(outcome: Outcome | None, width: int | None = None) -> str:
    if outcome is None:
        return ""
    # Paths into installed libraries from the library's own folder on.
    reason = re.sub(r"\S*/site-packages/", "", outcome.reason)
    text = outcome.status if not reason else f"{outcome.status}: {reason}"
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def _seconds(outcome: Outcome | None) -> str:
    return f"{outcome.seconds:.2f}" if outcome and outcome.seconds is not None else "-"


def summary(rows: dict[str, dict[str, Outcome]], libraries: dict[str, str], exporters) -> dict:
    counts = {}
    for exporter in exporters:
        per_library = {}
        for key, row in rows.items():
            library = libraries[key]
            tally = per_library.setdefault(library, dict.fromkeys(STATUSES, 0))
            tally[row[exporter].status] += 1
        total = {s: sum(t[s] for t in per_library.values()) for s in STATUSES}
        counts[exporter] = {"total": total, **per_library}
    ratios = [r for r in (ratio(row) for row in rows.values()) if r is not None]
    return {"models": len(rows), "counts": counts,
            "median_untrace_over_legacy": statistics.median(ratios) if ratios else None,
            "ratio_models": len(ratios)}


WIDTH = 48  # of a status cell in the printed table


def table_header(exporters) -> str:
    return f"{'model':48}" + "".join(f" {e:{WIDTH}} {'s':>7}" for e in exporters) + f" {'u/l':>6}"


def table_row(key: str, row: dict[str, Outcome], exporters) -> str:
    r = ratio(row)
    cells = "".join(f" {_cell(row[e], WIDTH):{WIDTH}} {_seconds(row[e]):>7}" for e in exporters)
    return f"{key:48}{cells} {f'{r:.2f}' if r else '-':>6}"


def print_summary(result: dict, exporters, out=sys.stdout) -> None:
    print(f"\n{result['models']} models", file=out)
    for exporter in exporters:
        counts = result["counts"][exporter]
        parts = [f"{lib} {c['correct']}/{sum(c.values())}" for lib, c in counts.items() if lib != "total"]
        total = counts["total"]
        print(f"{exporter:8} correct {total['correct']}, wrong {total['wrong']}, refused {total['refused']}"
              f"  ({', '.join(parts)})", file=out)
    median = result["median_untrace_over_legacy"]
    if median is not None:
        print(f"median untrace/legacy export time: {median:.2f}x over {result['ratio_models']} models", file=out)


def markdown(rows, exporters, result: dict) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| model | " + " | ".join(f"{e} | {e} s" for e in exporters) + " | untrace/legacy |",
             "|---|" + "---|---|" * len(exporters) + "---|"]
    for key, row in rows.items():
        r = ratio(row)
        lines.append(f"| {key} | " + " | ".join(f"{cell(_cell(row[e]))} | {_seconds(row[e])}" for e in exporters)
                     + f" | {f'{r:.2f}' if r else '-'} |")
    lines.append("")
    for exporter in exporters:
        counts = result["counts"][exporter]
        total = counts["total"]
        parts = ", ".join(f"{lib} {c['correct']}/{sum(c.values())}" for lib, c in counts.items() if lib != "total")
        lines.append(f"- **{exporter}**: {total['correct']} correct, {total['wrong']} wrong, "
                     f"{total['refused']} refused ({parts})")
    median = result["median_untrace_over_legacy"]
    if median is not None:
        lines.append(f"- median untrace/legacy export time: {median:.2f}x over {result['ratio_models']} models")
    if result.get("threads"):
        lines.append(f"- torch intra-op threads per case: {result['threads']}")
    return "\n".join(lines) + "\n"


def add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--exporters", default=",".join(EXPORTERS))
    parser.add_argument("--timeout", type=int, default=TIMEOUT_S, help="seconds per exporter")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--threads", type=int, help="torch intra-op threads per case (default: torch's)")


def exporters_of(parser: argparse.ArgumentParser, args) -> list[str]:
    exporters = [e for e in args.exporters.split(",") if e]
    unknown = set(exporters) - set(EXPORTERS)
    if unknown:
        parser.error(f"unknown exporters {sorted(unknown)} (known: {', '.join(EXPORTERS)})")
    return exporters


def run_and_report(cases, exporters, args, find=None) -> int:
    """Each case in its own process, a row printed as it finishes; the summary, and the
    JSON and Markdown files `args` names. `find`: the case by key in the child."""
    start = time.perf_counter()
    preload()
    rows: dict[str, dict[str, Outcome]] = {}
    print(table_header(exporters))
    for case in cases:
        rows[case.key] = {o.exporter: o for o in run_isolated(case, exporters, args.timeout, args.threads, find)}
        print(table_row(case.key, rows[case.key], exporters), flush=True)
    result = summary(rows, {c.key: c.library for c in cases}, exporters)
    result["seconds"] = time.perf_counter() - start
    result["threads"] = args.threads
    print_summary(result, exporters)
    print(f"run time: {result['seconds']:.0f} s")
    if args.json:
        payload = {"summary": result, "rows": {k: {e: asdict(o) for e, o in r.items()} for k, r in rows.items()}}
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(rows, exporters, result))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case names (`resnet18` or `timm/resnet18`)")
    parser.add_argument("--library", choices=LIBRARIES)
    add_run_options(parser)
    args = parser.parse_args(argv)
    exporters = exporters_of(parser, args)
    return run_and_report(select(args.only, args.library), exporters, args)

if __name__ == "__main__":
    sys.exit(main())
