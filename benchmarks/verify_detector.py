"""`untrace verify` on a torchvision detector (default retinanet_resnet50_fpn): the export
with probes, eager PyTorch against it on onnxruntime, and the branch coverage of the
post-processing (`tests/export/detectors.py` builds the model and its inputs).

    .venv/bin/python benchmarks/verify_detector.py [NAME]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: the repository's packages, tests/ included


def main(name: str = "retinanet_resnet50_fpn") -> int:
    from lowering import export, verify
    from lowering.verification import report_text
    from tests.export import detectors

    model = detectors.build(name)
    started = time.perf_counter()
    proto = export(model, detectors.example(), dynamic_shapes=detectors.DYNAMIC, probes=True)
    print(f"export with probes: {time.perf_counter() - started:.1f} s")
    report = verify(model, [detectors.example(), *detectors.checks()], onnx_model=proto, compare=(),
                    rtol=1e-3, atol=1e-3)
    report_text.render(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
