"""Precision of the default rules on real model code, by judged random samples.

    python benchmarks/realworld_precision.py [PACKAGE_DIR...] --draw N --seed S [--out FILE]
    python benchmarks/realworld_precision.py [PACKAGE_DIR...] [--judgements FILE...] [--min-precision P]

A PACKAGE_DIR is an unpacked wheel: a folder holding one importable package (and its
`*.dist-info`), e.g. `.real-trees/timm` holding `timm/`. The default is the five trees of
issue 12 under `.real-trees/`, which `make real-trees` downloads and unpacks (pinned:
transformers 5.24.0, timm 1.0.31, torchvision 0.29.1, ultralytics 8.4.190,
segment-anything 1.0; `make test` does it first).

Each package's tree is checked by a fresh `untrace check --output-format json --jobs 1
--no-cache` (the default rules, cold). Findings are keyed by (package, path relative to
the PACKAGE_DIR, line, column, code), one finding per key.

- `--draw N --seed S` draws N findings with `random.Random(S).sample` over the findings
  sorted by that key, and writes them to a judgements file to fill in: each entry gets
  `verdict` ("right" / "wrong", null until judged) and `reason`.
- Otherwise every judgements file (default `benchmarks/data/precision_sample_*.json`) is
  compared with a new run. Printed per file: the precision as judged, the findings that
  disappeared (a wrong one gone is a false alarm fixed; a right one gone is a lost
  finding) or moved (same line under another code or column, or same code and function
  within three lines), and the precision of the judged findings still reported. The exit status is 1
  when a finding judged right disappeared, or when the still-reported precision of a
  sample is below `--min-precision`.

`--labels FILE...` gives the recall of the run on sites labelled by hand (drawn by
`benchmarks/recall_sites.py`): the sites labelled a hazard that a finding of the default
rules is on, and the sites labelled no hazard that are reported all the same;
`--min-recall R` fails below R.

`--save-run FILE` keeps the findings of the run; `--from-run FILE` reads them instead of
running (to judge and compare without waiting for transformers' two minutes).
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
REAL_TREES = ROOT / ".real-trees"
DEFAULT_PACKAGES = [str(REAL_TREES / name) for name in
                    ("transformers", "timm", "torchvision", "ultralytics", "segment-anything")]


def package_tree(package_dir: Path) -> Path:
    """The importable package inside an unpacked wheel (or the package folder itself, for a
    wheel that holds several, such as open_clip_torch's `open_clip` and `open_clip_train`)."""
    if (package_dir / "__init__.py").exists():
        return package_dir
    candidates = sorted(p for p in package_dir.iterdir()
                        if p.is_dir() and (p / "__init__.py").exists() and not p.name.endswith((".dist-info", ".libs")))
    if len(candidates) != 1:
        sys.exit(f"{package_dir}: expected one package folder, found {[p.name for p in candidates]}")
    return candidates[0]


def run_package(package_dir: Path) -> list[dict]:
    """The default rules' findings over one package, from a cold `untrace check`."""
    tree = package_tree(package_dir)
    with tempfile.TemporaryDirectory(prefix="untrace-precision-") as tmp:
        out = os.path.join(tmp, "findings.json")
        command = [sys.executable, "-m", "analyzer.cli", "check", "--output-format", "json", "--jobs", "1",
                   "--no-cache", "--exit-zero", "-o", out, str(tree)]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run(command, cwd=package_dir, env=env, capture_output=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            sys.exit(f"untrace check {tree} failed ({done.returncode}):\n{done.stderr.decode(errors='replace')[-2000:]}")
        findings = json.loads(Path(out).read_text() or "[]")
    rows = []
    for f in findings:
        rows.append({
            "package": package_dir.name,
            # Sites in other files than the one checked come relative to the working directory.
            # (real paths on both sides: the trees may be reached through symbolic links)
            "path": os.path.relpath(os.path.realpath(os.path.join(package_dir, f["path"])), package_dir.resolve()),
            "line": f["line"], "column": f["column"], "code": f["code"],
            "function": f.get("function"), "message": f.get("message"),
        })
    return rows


def sort_key(f: dict) -> tuple:
    return (f["package"], f["path"], f["line"], f["column"], f["code"])


def collect(package_dirs: list[str], from_run: str | None, save_run: str | None) -> list[dict]:
    if from_run:
        findings = json.loads(Path(from_run).read_text())
    else:
        findings = []
        for d in package_dirs:
            path = Path(d)
            if not path.is_dir():
                sys.exit(f"{d}: no such folder (see the module docstring for how to make it)")
            print(f"checking {path.name} ...", file=sys.stderr, flush=True)
            findings.extend(run_package(path))
    # One finding per site: a helper reached from classes in several files is reported
    # once per call path (and, today, once under an absolute and once under a relative
    # path); the first by (function, message) stands for the site.
    unique: dict[tuple, dict] = {}
    for f in sorted(findings, key=lambda f: (*sort_key(f), f.get("function") or "", f.get("message") or "")):
        unique.setdefault(sort_key(f), f)
    findings = list(unique.values())
    if save_run:
        Path(save_run).write_text(json.dumps(findings, indent=1) + "\n")
    return findings


def counts(findings: list[dict]) -> dict:
    per = collections.Counter(f["code"] for f in findings)
    return dict(sorted(per.items()))


def draw(findings: list[dict], n: int, seed: int, out: Path) -> None:
    sample = random.Random(seed).sample(findings, min(n, len(findings)))
    sample.sort(key=sort_key)
    data = {
        "seed": seed,
        "population": len(findings),
        "population_per_code": counts(findings),
        "population_per_package": dict(sorted(collections.Counter(f["package"] for f in findings).items())),
        "judgements": [{**f, "verdict": None, "reason": ""} for f in sample],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"drew {len(sample)} of {len(findings)} findings into {out}")


def precision(entries: list[dict]) -> tuple[int, int]:
    judged = [e for e in entries if e.get("verdict") in ("right", "wrong")]
    return sum(e["verdict"] == "right" for e in judged), len(judged)


def _ratio(right: int, total: int) -> str:
    return f"{right}/{total} = {right / total:.2f}" if total else "n/a"


def compare(findings: list[dict], files: list[str], min_precision: float | None) -> int:
    at = {(f["package"], f["path"], f["line"], f["code"]) for f in findings}
    exact = {(f["package"], f["path"], f["line"], f["column"], f["code"]) for f in findings}
    by_line = collections.defaultdict(list)
    by_function = collections.defaultdict(list)
    for f in findings:
        by_line[(f["package"], f["path"], f["line"])].append(f)
        by_function[(f["package"], f["path"], f["function"], f["code"])].append(f)
    checked = {f["package"] for f in findings}
    status = 0
    print(f"current run: {len(findings)} findings {counts(findings)}")
    for name in files:
        data = json.loads(Path(name).read_text())
        entries = data["judgements"]
        right, total = precision(entries)
        print(f"\n{os.path.relpath(name, ROOT)} (seed {data.get('seed')}, drawn from {data.get('population')}):")
        print(f"  precision as judged: {_ratio(right, total)}")
        per_code = collections.defaultdict(lambda: [0, 0])
        for e in entries:
            if e.get("verdict") in ("right", "wrong"):
                per_code[e["code"]][1] += 1
                per_code[e["code"]][0] += e["verdict"] == "right"
        print("  per code: " + ", ".join(f"{c} {_ratio(*v)}" for c, v in sorted(per_code.items())))
        still = []
        for e in entries:
            key = (e["package"], e["path"], e["line"], e["code"])
            if e["package"] not in checked:
                continue  # a package not checked this time
            if (key in at and "column" not in e) or (*key[:3], e.get("column"), key[3]) in exact:
                still.append(e)
                continue
            moved = [f for f in by_line[key[:3]] if f["code"] != e["code"] or f["column"] != e.get("column", f["column"])]
            moved += [f for f in by_function[(e["package"], e["path"], e.get("function"), e["code"])]
                      if 0 < abs(f["line"] - e["line"]) <= 3][:1]
            where = f"{e['package']}/{e['path']}:{e['line']} {e['code']} [{e.get('verdict')}]"
            if moved:
                print(f"  moved:       {where} -> " + ", ".join(f"{f['line']} {f['code']}" for f in moved))
            else:
                print(f"  disappeared: {where}  {e.get('reason', '')}")
            if e.get("verdict") == "right" and not moved:
                status = 1
        r2, t2 = precision(still)
        print(f"  still reported: {len(still)}/{len(entries)}; their precision: {_ratio(r2, t2)}")
        if min_precision is not None and t2 and r2 / t2 < min_precision:
            print(f"  below --min-precision {min_precision}")
            status = 1
    return status


def recall(findings: list[dict], files: list[str], min_recall: float | None) -> int:
    """Each labels file of `recall_sites.py`: of the sites labelled a hazard, how many the
    run reports (a finding of any default rule on the site's line), and of the sites
    labelled not a hazard, how many it reports all the same."""
    reported = {(f["package"], f["path"], f["line"]) for f in findings}
    checked = {f["package"] for f in findings}
    status = 0
    for name in files:
        data = json.loads(Path(name).read_text())
        entries = [e for e in data["labels"] if e["package"] in checked]
        hazards = [e for e in entries if e.get("label") == "hazard"]
        quiet = [e for e in entries if e.get("label") == "no"]
        found = [e for e in hazards if (e["package"], e["path"], e["line"]) in reported]
        cried = [e for e in quiet if (e["package"], e["path"], e["line"]) in reported]
        print(f"\n{os.path.relpath(name, ROOT)} (seed {data.get('seed')}, {len(data['labels'])} sites of "
              f"{data.get('population')}; {len(entries) - len(hazards) - len(quiet)} unlabelled):")
        print(f"  recall: {_ratio(len(found), len(hazards))} of the sites labelled a hazard are reported")
        print(f"  reported although labelled no hazard: {len(cried)} of {len(quiet)}")
        for e in hazards:
            if e not in found:
                print(f"  missed:      {e['package']}/{e['path']}:{e['line']} {e.get('code')} {e['kind']}  "
                      f"{e.get('evidence', '')[:160]}")
        for e in cried:
            print(f"  cried wolf:  {e['package']}/{e['path']}:{e['line']} {e['kind']}  {e.get('evidence', '')[:160]}")
        if min_recall is not None and hazards and len(found) / len(hazards) < min_recall:
            print(f"  below --min-recall {min_recall}")
            status = 1
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", default=DEFAULT_PACKAGES, help="unpacked wheels (default: under .real-trees)")
    parser.add_argument("--draw", type=int, metavar="N", help="draw N findings to judge")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    parser.add_argument("--out", help="judgements file to write (default benchmarks/data/precision_sample_seedS.json)")
    parser.add_argument("--judgements", nargs="*", help="judgements files to compare (default benchmarks/data/precision_sample_*.json)")
    parser.add_argument("--min-precision", type=float, help="fail when a sample's still-reported precision is lower")
    parser.add_argument("--labels", nargs="*", metavar="FILE",
                        help="labelled sites (benchmarks/recall_sites.py) to give the recall of the run for")
    parser.add_argument("--min-recall", type=float, help="fail when a labels file's recall is lower")
    parser.add_argument("--save-run", metavar="FILE", help="write the run's findings to FILE")
    parser.add_argument("--from-run", metavar="FILE", help="read the findings from FILE instead of running")
    args = parser.parse_args(argv)

    findings = collect(args.packages, args.from_run, args.save_run)
    if args.draw:
        draw(findings, args.draw, args.seed, Path(args.out or DATA / f"precision_sample_seed{args.seed}.json"))
        return 0
    if args.labels is not None and args.judgements is None:
        return recall(findings, args.labels, args.min_recall)
    files = args.judgements or sorted(glob.glob(str(DATA / "precision_sample_*.json")))
    if not files:
        sys.exit("no judgements files: draw a sample first (--draw N)")
    status = compare(findings, files, args.min_precision)
    if args.labels:
        status |= recall(findings, args.labels, args.min_recall)
    return status


if __name__ == "__main__":
    sys.exit(main())
