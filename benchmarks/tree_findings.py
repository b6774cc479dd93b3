"""The findings of `untrace check --select ALL` on the five real trees, kept as snapshots.

    python benchmarks/tree_findings.py [TREE...] [--update] [--jobs N]

A TREE is one of the unpacked wheels under `.real-trees/` (`make real-trees`):
transformers, timm, torchvision, ultralytics, segment-anything; the default is all five.
Each is checked cold (`--no-cache`), from inside its folder, so the JSON's paths are the
same on every machine. The JSON output, exactly as the command writes it, is compared
with `benchmarks/data/tree_findings/<tree>.json.gz`; `--update` writes it there instead.

The speed and memory work (issue 25) must leave these bytes as they are; a change of
the analyses that changes them updates the snapshot in the same commit and says why.
`tests/analyzer/test_tree_findings.py` runs the comparison.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL_TREES = ROOT / ".real-trees"
SNAPSHOTS = ROOT / "benchmarks" / "data" / "tree_findings"
TREES = {  # the unpacked wheel's folder -> the package checked inside it
    "transformers": "transformers",
    "timm": "timm",
    "torchvision": "torchvision",
    "ultralytics": "ultralytics",
    "segment-anything": "segment_anything",
}


def check_tree(tree: str, jobs: int = 2) -> bytes:
    """The JSON findings of a cold `untrace check --select ALL` of one tree."""
    folder = REAL_TREES / tree
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is missing: run `make real-trees`")
    with tempfile.TemporaryDirectory(prefix="untrace-tree-findings-") as tmp:
        out = Path(tmp) / "findings.json"
        command = [sys.executable, "-m", "analyzer.cli", "check", "--select", "ALL", "--no-cache",
                   "--jobs", str(jobs), "--output-format", "json", "--exit-zero", "-o", str(out), TREES[tree]]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"untrace check of {tree} exited {done.returncode}:\n"
                               f"{done.stderr.decode(errors='replace')[-2000:]}")
        return out.read_bytes()


def snapshot_path(tree: str) -> Path:
    return SNAPSHOTS / f"{tree}.json.gz"


def read_snapshot(tree: str) -> bytes:
    return gzip.decompress(snapshot_path(tree).read_bytes())


def write_snapshot(tree: str, data: bytes) -> None:
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    target = snapshot_path(tree)
    temporary = target.with_suffix(".tmp")
    # mtime=0: the same findings give the same file, so an unchanged snapshot is no change
    temporary.write_bytes(gzip.compress(data, mtime=0))
    os.replace(temporary, target)


def differences(expected: bytes, actual: bytes, limit: int = 20) -> list[str]:
    """What was added and removed, finding by finding (path:line:column code), at most
    ``limit`` of each."""
    def keyed(data: bytes) -> dict[tuple, dict]:
        return {(f["path"], f["line"], f["column"], f["code"]): f for f in json.loads(data or b"[]")}

    old, new = keyed(expected), keyed(actual)
    lines = [f"- {p}:{l}:{c} {code}" for (p, l, c, code) in sorted(old.keys() - new.keys())[:limit]]
    lines += [f"+ {p}:{l}:{c} {code}" for (p, l, c, code) in sorted(new.keys() - old.keys())[:limit]]
    changed = [k for k in sorted(old.keys() & new.keys()) if old[k] != new[k]]
    lines += [f"~ {p}:{l}:{c} {code} (another field differs)" for (p, l, c, code) in changed[:limit]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", metavar="TREE", help=f"default: all of {', '.join(TREES)}")
    parser.add_argument("--update", action="store_true", help="write the snapshots instead of comparing")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.trees) - set(TREES))
    if unknown:
        parser.error(f"not one of the trees: {', '.join(unknown)}")
    failed = 0
    args.trees = args.trees or list(TREES)
    for tree in args.trees:
        data = check_tree(tree, args.jobs)
        count = len(json.loads(data or b"[]"))
        if args.update:
            write_snapshot(tree, data)
            print(f"{tree}: {count} findings written to {snapshot_path(tree).relative_to(ROOT)}")
        elif data == read_snapshot(tree):
            print(f"{tree}: {count} findings, identical to the snapshot")
        else:
            failed += 1
            print(f"{tree}: differs from the snapshot")
            print("\n".join("  " + line for line in differences(read_snapshot(tree), data)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
