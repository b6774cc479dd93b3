"""`--fix --unsafe-fixes` on the five real trees: every file a fix changes must still parse,
and its findings must shrink or stay.

    python benchmarks/fix_real_trees.py [TREE...] [--jobs N] [--trees-dir .real-trees]

Each tree (`.real-trees/`, as `benchmarks/tree_findings.py` names them) is checked with
the default selection; the fixes of the findings are applied in memory (the trees are
never written), as `--fix --unsafe-fixes` applies them, pass after pass until none is
left (at most four). Each changed file is then parsed, and its findings counted before
and after, both from the file's text alone (`check_source`), so that the two counts see
the same context. Prints one line per changed file whose findings grew or that does not
parse, and the totals; exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.tree_findings import REAL_TREES, TREES  # noqa: E402

PASSES = 4


def fix_tree(tree: str, jobs: int, trees: Path = REAL_TREES) -> tuple[int, int, int, int, list[str]]:
    """(files changed, fixes applied, findings before, findings after, problems) of one tree."""
    from analyzer import check_paths, check_source
    from analyzer.runner import apply_fixes

    folder = trees / tree / TREES[tree]
    by_path: dict[str, list] = defaultdict(list)
    for diag in check_paths(str(folder), jobs=jobs, use_cache=False):
        if diag.fix is not None:
            by_path[diag.path].append(diag)
    changed = applied_total = before_total = after_total = 0
    problems = []
    for path, diags in sorted(by_path.items()):
        original = Path(path).read_text(encoding="utf-8")
        text, applied = apply_fixes(original, diags, unsafe=True)
        applied_total += len(applied)
        for _ in range(PASSES - 1):
            if not applied:
                break
            again, applied = apply_fixes(text, check_source(text, path), unsafe=True)
            if again == text:
                break
            applied_total += len(applied)
            text = again
        if text == original:
            continue
        changed += 1
        name = os.path.relpath(path, trees)
        try:
            ast.parse(text)
        except SyntaxError as error:
            problems.append(f"{name}: does not parse after the fix ({error})")
            continue
        before, after = len(check_source(original, path)), len(check_source(text, path))
        before_total += before
        after_total += after
        if after > before:
            problems.append(f"{name}: findings grew from {before} to {after}")
    return changed, applied_total, before_total, after_total, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", default=list(TREES))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--trees-dir", type=Path, default=REAL_TREES, help="the folder of the unpacked trees")
    args = parser.parse_args()
    failed = False
    for tree in args.trees:
        changed, applied, before, after, problems = fix_tree(tree, args.jobs, args.trees_dir)
        for problem in problems:
            print(f"  {problem}")
        failed = failed or bool(problems)
        print(f"{tree}: {changed} files changed ({applied} fixes), findings of those files {before} -> {after}, "
              f"{len(problems)} problems", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
