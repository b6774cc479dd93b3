"""`untrace check` speed against the floor of parsing the same files, in one run.

    python benchmarks/lint_speed.py DIR [--jobs N] [--limit N] [--seed S] [--json OUT]

Measures, on the Python files `untrace check DIR` would check:
- the floor: read each file and `libcst.parse_module` it, in this process;
- `untrace check --select ALL` with a cold (empty) cache and one job, right after a floor
  run, `--rounds` times (default 3): the ratio reported is the median of the rounds'
  ratios, each to its own floor, as the machine's speed drifts by a third over a minute;
- the same with a cold cache and all jobs (`--jobs`, default the number of cores);
- the same again on the cache the previous run left (warm).

Each check is a fresh `untrace` process, so start-up is included. Printed: wall seconds,
CPU seconds (the process and its workers) and each as a ratio to the floor, and the peak
resident memory of the largest process of the run (the command or one of its workers,
from the kernel's accounting of the process and the children it reaped; the floor's is
this process's own, which includes the Python and libcst it loaded). Targets:
cold with one job <= 1.5x the floor, warm <= 0.1x. On a shared machine absolute times
mean little; the ratios are the result, and the CPU ratios are the steadier ones.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import libcst  # noqa: E402

from analyzer.config import resolve_config  # noqa: E402
from analyzer.discovery import discover  # noqa: E402

COLD_TARGET = 1.5
WARM_TARGET = 0.1


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def parse_floor(files: list[str]) -> tuple[float, float, None, int]:
    """(wall, cpu) seconds to read and libcst-parse every file, no findings, and the peak
    resident memory of this process (bytes)."""
    wall, cpu = time.perf_counter(), _self_cpu()
    for path in files:
        try:
            libcst.parse_module(Path(path).read_bytes())
        except Exception:  # noqa: BLE001 - a file libcst cannot parse still costs its attempt
            pass
    return time.perf_counter() - wall, _self_cpu() - cpu, None, _kilobytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _kilobytes(maxrss: int) -> int:
    """``ru_maxrss`` in bytes: kilobytes on Linux, bytes on macOS."""
    return maxrss if sys.platform == "darwin" else maxrss * 1024


def run_check(targets: list[str], jobs: int, cache_dir: str) -> tuple[float, float, int, int]:
    """(wall, cpu, number of findings, peak resident bytes) of one `untrace check` process."""
    command = [sys.executable, "-m", "analyzer.cli",
               "check", "--select", "ALL", "--output-format", "json", "--jobs", str(jobs),
               "--cache-dir", cache_dir, *targets]
    wall, cpu = time.perf_counter(), _children_cpu()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT, stdin=subprocess.DEVNULL)
        # wait4: the usage of this process and of the workers it reaped; ru_maxrss is the
        # largest of them (Linux), which is what a memory limit per process meets
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode not in (0, 1):
        sys.exit(f"untrace check failed with exit code {process.returncode}:\n{stderr.decode(errors='replace')[-2000:]}")
    return wall, cpu, len(json.loads(stdout or b"[]")), _kilobytes(usage.ru_maxrss)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", help="the tree to check")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="jobs for the parallel runs (default: all cores)")
    parser.add_argument("--limit", type=int, help="check a random sample of this many files instead of the whole tree")
    parser.add_argument("--seed", type=int, default=0, help="seed of the --limit sample")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this JSON file")
    parser.add_argument("--rounds", type=int, default=3,
                        help="floor and cold one-job check pairs; their median ratio is reported (default 3)")
    args = parser.parse_args(argv)

    directory = os.path.abspath(args.dir)
    files = discover([directory], resolve_config([directory])).files
    targets = [directory]
    if args.limit and args.limit < len(files):
        files = sorted(random.Random(args.seed).sample(files, args.limit))
        targets = files
    size = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} files, {size / 1e6:.1f} MB under {directory}", flush=True)

    rounds = []  # (floor, cold one-job check), each pair taken back to back
    with tempfile.TemporaryDirectory(prefix="untrace-bench-") as tmp:
        for i in range(max(1, args.rounds)):
            rounds.append((parse_floor(files), run_check(targets, 1, os.path.join(tmp, f"one-{i}"))))
            print(f"round {i + 1}: floor {rounds[-1][0][0]:.2f} s, check {rounds[-1][1][0]:.2f} s "
                  f"({rounds[-1][1][0] / rounds[-1][0][0]:.2f}x), peak RSS {rounds[-1][1][3] / 2**20:.0f} MB", flush=True)
        cold_all = run_check(targets, args.jobs, os.path.join(tmp, "all"))
        warm = run_check(targets, args.jobs, os.path.join(tmp, "all"))
    # The round of the median wall ratio stands for the cold one-job run; the other runs
    # are set against the fastest floor.
    floor, cold_one = sorted(rounds, key=lambda r: r[1][0] / r[0][0])[len(rounds) // 2]
    fastest = min(f for f, _ in rounds)

    rows = [
        ("parse floor (read + libcst.parse_module)", floor, None, floor),
        (f"check, cold cache, 1 job (median of {len(rounds)})", cold_one, COLD_TARGET, floor),
        (f"check, cold cache, {args.jobs} jobs", cold_all, None, fastest),
        (f"check, warm cache, {args.jobs} jobs", warm, WARM_TARGET, fastest),
    ]
    print(f"\n{'run':<44}{'wall s':>9}{'cpu s':>9}{'wall/floor':>12}{'cpu/floor':>11}{'peak RSS':>10}  target")
    report = {"files": len(files), "bytes": size, "jobs": args.jobs, "runs": {},
              "rounds": [{"floor": f[0], "check": c[0], "ratio": c[0] / f[0], "peak_rss": c[3]} for f, c in rounds]}
    for name, (wall, cpu, findings, peak), target, against in rows:
        wall_ratio, cpu_ratio = wall / against[0], cpu / against[1]
        verdict = "" if target is None else f"<= {target}x: {'met' if wall_ratio <= target else 'MISSED'}"
        print(f"{name:<44}{wall:>9.2f}{cpu:>9.2f}{wall_ratio:>11.2f}x{cpu_ratio:>10.2f}x{peak / 2**20:>7.0f} MB  {verdict}")
        report["runs"][name] = {"wall": wall, "cpu": cpu, "wall_ratio": wall_ratio, "cpu_ratio": cpu_ratio,
                                "findings": findings, "peak_rss": peak}
    counts = {c[2] for _, c in rounds} | {cold_all[2], warm[2]}
    if len(counts) > 1:
        print(f"\nWARNING: the runs disagree on the number of findings: {sorted(counts)}")
    else:
        print(f"\n{warm[2]} findings in every run")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
