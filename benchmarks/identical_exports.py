"""Whether a change to untrace leaves its graphs byte for byte as they were.

    python benchmarks/identical_exports.py --write DIR [--only NAME ...] [--all]
    python benchmarks/identical_exports.py --compare DIR [--only NAME ...] [--all]

Exports zoo cases (benchmarks/zoo) with `lowering.export`, each in its own forked
process as `benchmarks/real_models.py` does, and writes the SHA-256 of each
`ModelProto.SerializeToString()` to DIR/digests.json (`--write`, run with the code before
the change), or compares with the digests there (`--compare`, after it): prints one row
per case (same / DIFFERENT / refused with its reason, and the export time) and exits 1
if any differs. The default cases are the fast subset of tests/real_models and every
transformers case; `--all` takes the whole zoo.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.zoo import harness  # noqa: E402
from benchmarks.zoo.registry import ALL_CASES, find  # noqa: E402

FAST_SUBSET = [
    "timm/resnet18", "timm/convnext_atto_dynamic_hw", "timm/mobilenetv3_small_100", "timm/regnetx_002",
    "timm/vit_tiny_patch16_224", "timm/deit_tiny_patch16_224",
    "torchvision/squeezenet1_0", "torchvision/shufflenet_v2_x0_5", "torchvision/mobilenet_v3_small",
    "torchvision/resnet18",
]


def default_cases() -> list[str]:
    return FAST_SUBSET + [c.key for c in ALL_CASES if c.library == "transformers"]


def _export_digest(key: str, out) -> None:
    case = find(key)
    harness.install_torchvision_ops()
    harness._warm_up(["untrace"])
    inputs = case.inputs()
    model = case.build()
    start = time.perf_counter()
    try:
        proto = harness.EXPORT["untrace"](model, case, inputs.example)
    except Exception as exc:  # noqa: BLE001 - a refusal is a result to compare too
        out.send({"digest": f"refused: {harness._first_line(exc)}", "seconds": time.perf_counter() - start})
        return
    seconds = time.perf_counter() - start
    out.send({"digest": hashlib.sha256(proto.SerializeToString()).hexdigest(), "seconds": seconds})


def digest(key: str) -> dict:
    """The digest of `key`'s export (or its refusal) and the export time, from a child."""
    receive, send = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_export_digest, args=(key, send))
    child.start()
    result = receive.recv() if receive.poll(600) else {"digest": "no result", "seconds": None}
    child.join()
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path, metavar="DIR")
    mode.add_argument("--compare", type=Path, metavar="DIR")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--all", action="store_true", help="every case of the zoo")
    args = parser.parse_args(argv)
    keys = args.only or ([c.key for c in ALL_CASES] if args.all else default_cases())
    harness.preload()
    directory = args.write or args.compare
    stored = {} if args.write else json.loads((directory / "digests.json").read_text())
    results, differ = {}, 0
    for key in keys:
        results[key] = digest(key)
        got, seconds = results[key]["digest"], results[key]["seconds"]
        if args.write:
            verdict = got[:12] if not got.startswith(("refused", "no result")) else got
        elif key not in stored:
            verdict = "not stored"
        elif stored[key]["digest"] == got:
            verdict = "same"
        else:
            differ += 1
            verdict = f"DIFFERENT ({got[:60]})"
        before = f" (before {stored[key]['seconds']:.2f} s)" if key in stored and stored[key]["seconds"] else ""
        print(f"{key:48} {verdict:20} {seconds or 0:6.2f} s{before}", flush=True)
    if args.write:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "digests.json").write_text(json.dumps(results, indent=1) + "\n")
    else:
        print(f"\n{len(keys) - differ} of {len(keys)} the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
