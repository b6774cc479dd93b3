"""How often does `untrace verify --search` reach full branch coverage from one input?

For every corpus model with data-dependent control flow (a `# expect: UT101` or
`UT102` marker in its files), start from its FIRST input only, search with a budget of
N candidate evaluations (default 200) and a time limit per model (default 60 s), and
print per model: covered yes/no, evaluations used, seconds, what stays uncovered; then
the fraction of models fully covered (target: >= 80%).

A model whose untrace export fails (or whose first input does not run on it) counts as
not covered, with the reason.

    .venv/bin/python benchmarks/verify_search.py [--budget 200] [--seconds 60] [MODEL...]
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MARKER = re.compile(r"#\s*expect:.*\bUT10[12]\b")


def cases() -> list[tuple[str, str, list[Path]]]:
    corpora = REPO / "corpora"
    found = []
    for path in sorted(corpora.glob("*.py")):
        if not path.name.startswith("_"):
            found.append((path.stem, f"corpora.{path.stem}", [path]))
    for package in sorted(p for p in corpora.iterdir() if (p / "__init__.py").is_file()):
        found.append((package.name, f"corpora.{package.name}.model", sorted(package.glob("*.py"))))
    return [(name, module, files) for name, module, files in found
            if any(MARKER.search(line) for f in files for line in f.read_text().splitlines())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)

    import os

    os.chdir(REPO)
    from lowering.verification import verify

    rows = []
    for name, module_name, _ in cases():
        if args.models and name not in args.models:
            continue
        module = importlib.import_module(module_name)
        start = time.perf_counter()
        try:
            report = verify(module.build(), module.inputs()[:1], compare=(), search=args.budget,
                            search_seconds=args.seconds)
            untrace = report.systems["untrace"]
            if not untrace.exported:
                note = f"export failed: {untrace.error.splitlines()[0][:70]}"
                rows.append((name, False, 0, time.perf_counter() - start, note))
                continue
            if untrace.per_input[0].error:
                rows.append((name, False, 0, time.perf_counter() - start, untrace.per_input[0].error[:80]))
                continue
            evaluations = report.search.evaluations if report.search else 0
            if not report.coverage:
                note = "no probed site in the untrace ONNX" if report.has_probes else "no probe outputs"
                rows.append((name, None, evaluations, time.perf_counter() - start, note))
                continue
            covered = not report.uncovered
            note = ", ".join(report.uncovered)
            if not untrace.per_input or not all(c.match for c in untrace.per_input):
                note += " (untrace mismatches eager on a found input)"
            rows.append((name, covered, evaluations, time.perf_counter() - start, note))
        except Exception as exc:  # the benchmark reports, it does not stop
            rows.append((name, False, 0, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"[:80]))

    width = max([len(r[0]) for r in rows] + [5])
    print(f"{'model':<{width}}  covered  evals  seconds  uncovered / note")
    for name, covered, evaluations, seconds, note in rows:
        shown = "n/a" if covered is None else "yes" if covered else "no"
        print(f"{name:<{width}}  {shown:<7}  {evaluations:>5}  {seconds:>7.2f}  {note}")
    counted = [r for r in rows if r[1] is not None]
    n_covered = sum(1 for r in counted if r[1])
    fraction = n_covered / len(counted) if counted else 0.0
    print(f"\nfull branch coverage from one input: {n_covered}/{len(counted)} = {fraction:.0%} "
          f"(budget {args.budget} evaluations, {args.seconds:g} s per model; target >= 80%)")
    not_counted = [r[0] for r in rows if r[1] is None]
    if not_counted:
        print("not counted (nothing to cover in the untrace ONNX): " + ", ".join(not_counted))
    missed = [r[0] for r in counted if not r[1]]
    if missed:
        print("missed: " + ", ".join(missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
