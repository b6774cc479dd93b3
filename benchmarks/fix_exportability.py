"""Which corpus models torch.onnx.export(dynamo=True) accepts before and after
`untrace check --fix --unsafe-fixes`.

    python benchmarks/fix_exportability.py [--only-fixed]

Copies corpora/ to a temporary directory, applies the UT101 fixes there with the real
command line, and exports every model (build(), first of inputs()) from the original
and from the fixed copy. Also checks that the fixed model's eager outputs equal the
original's on all of its inputs. Prints one row per model and the counts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixes.corpus_fixing import corpus_models, exports, fix_corpus_copy, load_model, same_outputs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only-fixed", action="store_true", help="only the models the fixes change")
    args = parser.parse_args()

    import tempfile

    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        fixed_root, changed = fix_corpus_copy(Path(tmp))
        names = [n for n in corpus_models() if n in changed] if args.only_fixed else corpus_models()
        before_ok = after_ok = 0
        print(f"{'model':28s} {'fixed':5s} {'before':6s} {'after':6s} eager")
        for name in names:
            original = load_model(ROOT, name)
            before = exports(*original)
            if name in changed:
                fixed = load_model(fixed_root, name)
                after = exports(*fixed)
                eager = "same" if same_outputs(original, fixed) is None else "DIFFERENT"
            else:
                after, eager = before, "-"
            before_ok += before is None
            after_ok += after is None
            print(f"{name:28s} {'yes' if name in changed else '':5s} {'ok' if before is None else 'fails':6s} "
                  f"{'ok' if after is None else 'fails':6s} {eager}", flush=True)
        print(f"\n{before_ok} of {len(names)} corpus models accepted by torch.onnx.export(dynamo=True) before --fix, "
              f"{after_ok} after ({len(changed)} models changed by --fix --unsafe-fixes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
