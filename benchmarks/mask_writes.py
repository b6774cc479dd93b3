"""Which boolean-mask writes the legacy exporter turns into a graph onnxruntime runs.

    python benchmarks/mask_writes.py [--opsets 17 18 20] [--markdown OUT.md]

Each form is a small module whose forward makes a tensor of its own and writes into it
through a boolean mask. It is exported with `torch.onnx.export(dynamo=False)` on one
example and run on onnxruntime (CPU) on six inputs (four random, all ones, all minus
ones: masks of other counts than the example's, all and none), against eager PyTorch,
once for each of three random examples.
A form is OK when every run matches; BAD when some run fails or differs; a graph that
onnxruntime does not even load is LOAD-FAIL. The result, for the torch and onnxruntime
of the project's virtualenv, is `benchmarks/data/mask_writes.md`; UT301 reports the
forms that break (`analyzer.analyses.kinds.ranks.lower_rank_mask`).
"""

from __future__ import annotations

import argparse
import io
import warnings

FORMS: dict[str, object] = {}


def form(name: str):
    def register(f):
        FORMS[name] = f
        return f
    return register


# x is (4, 5, 6); `y = x[0]` is (5, 6).
@form("full-rank mask, Python number: `y[y > 0] = 0.0`")
def _full_scalar(x):
    y = x.clone()
    y[y > 0] = 0.0
    return y


@form("full-rank mask, 0-d tensor: `y[y > 0] = torch.tensor(0.0)`")
def _full_0d(x):
    import torch
    y = x.clone()
    y[y > 0] = torch.tensor(0.0)
    return y


@form("full-rank mask, the masked values: `y[m] = y[m] * 2`")
def _full_rows(x):
    y = x.clone()
    m = y > 0
    y[m] = y[m] * 2
    return y


@form("1-d mask of a 1-d tensor: `y[y > 0] = 1.0`")
def _vector_scalar(x):
    y = x[0, 0].clone()
    y[y > 0] = 1.0
    return y


@form("1-d mask of a 2-d tensor, Python number: `y[m] = 0.0`")
def _lower_scalar(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] = 0.0
    return y


@form("1-d mask of a 2-d tensor, -inf: `y[m] = float('-inf')`")
def _lower_inf(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] = float("-inf")
    return y


@form("1-d mask of a 2-d tensor, 1-element tensor: `y[m] = torch.zeros(1)`")
def _lower_one(x):
    import torch
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] = torch.zeros(1)
    return y


@form("1-d mask of a 2-d tensor, vector: `y[m] = torch.arange(6.0)`")
def _lower_vector(x):
    import torch
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] = torch.arange(6.0)
    return y


@form("1-d mask of a 2-d tensor, vector input: `y[m] = x[2, 0]`")
def _lower_input_vector(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] = x[2, 0]
    return y


@form("1-d mask of a 2-d tensor, row (1, 6): `y[m] = v[None]`")
def _lower_row(x):
    import torch
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] = torch.arange(6.0)[None]
    return y


@form("1-d mask of a 2-d tensor, the masked rows: `y[m] = z[m]`")
def _lower_rows(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] = x[1][m]
    return y


@form("1-d mask of a 2-d tensor, augmented: `y[m] += 1.0`")
def _lower_augmented(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] += 1.0
    return y


@form("1-d mask of a 2-d tensor, augmented by a vector: `y[m] += torch.arange(6.0)`")
def _lower_augmented_vector(x):
    import torch
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] += torch.arange(6.0)
    return y


@form("1-d mask of a 2-d tensor, augmented by a row (1, 6): `y[m] += v[None]`")
def _lower_augmented_row(x):
    import torch
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] += torch.arange(6.0)[None]
    return y


@form("1-d mask of a 2-d tensor, augmented by the masked rows: `y[m] += z[m]`")
def _lower_augmented_rows(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m] += x[1][m]
    return y


@form("2-d mask of a 3-d tensor, augmented by a vector: `y[m] += torch.arange(6.0)`")
def _lower3_augmented_vector(x):
    import torch
    y = x.clone()
    m = y[:, :, 0] > 0
    y[m] += torch.arange(6.0)
    return y


@form("1-d mask of a 2-d tensor, then a slice: `y[m, :] = 0.0`")
def _lower_then_slice(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    y[m, :] = 0.0
    return y


@form("1-d mask of a 2-d tensor from shapes: `y[torch.arange(n) < 2] = 0.0`")
def _lower_shape_mask(x):
    import torch
    y = x[0].clone()
    y[torch.arange(y.shape[0]) < 2] = 0.0
    return y


@form("1-d mask of a 2-d tensor: `y.index_put_((m,), torch.tensor(0.0))`")
def _lower_index_put(x):
    import torch
    y = x[0].clone()
    m = y[:, 0] > 0
    y.index_put_((m,), torch.tensor(0.0))
    return y


@form("2-d mask of a 3-d tensor, Python number: `y[m] = 0.0`")
def _lower3_scalar(x):
    y = x.clone()
    m = y[:, :, 0] > 0
    y[m] = 0.0
    return y


@form("2-d mask of a 3-d tensor, vector: `y[m] = torch.arange(6.0)`")
def _lower3_vector(x):
    import torch
    y = x.clone()
    m = y[:, :, 0] > 0
    y[m] = torch.arange(6.0)
    return y


@form("a slice, then a 1-d mask of the last axis of a 2-d tensor: `y[:, m] = 0.0`")
def _slice_then_last(x):
    y = x[0].clone()
    m = y[0, :] > 0
    y[:, m] = 0.0
    return y


@form("a slice, then a 1-d mask of the middle axis of a 3-d tensor: `y[:, m] = 0.0`")
def _slice_then_middle(x):
    y = x.clone()
    m = y[0, :, 0] > 0
    y[:, m] = 0.0
    return y


@form("a slice, then a 2-d mask of the last axes of a 3-d tensor: `y[:, m] = 0.0`")
def _slice_then_two(x):
    y = x.clone()
    m = y[0] > 0
    y[:, m] = 0.0
    return y


@form("Ellipsis, then a 1-d mask of the last axis: `y[..., m] = 0.0`")
def _ellipsis_then_last(x):
    y = x.clone()
    m = y[0, 0, :] > 0
    y[..., m] = 0.0
    return y


@form("the fix, out of place: `y.masked_fill(m[:, None], 0.0)`")
def _fixed(x):
    y = x[0].clone()
    m = y[:, 0] > 0
    return y.masked_fill(m[:, None], 0.0)


def _Form(f):
    import torch

    class Form(torch.nn.Module):
        def forward(self, x):
            return f(x)

    return Form()


def _run_form(f, example, inputs, opset: int) -> str:
    import numpy as np
    import onnxruntime as ort
    import torch

    buffer = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Form(f).eval(), (example,), buffer, dynamo=False,
                              opset_version=opset, input_names=["x"])
    except Exception as exc:  # noqa: BLE001 - recorded as the form's result
        return f"EXPORT-FAIL ({type(exc).__name__})"
    try:
        session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001
        return "LOAD-FAIL"
    bad = 0
    for x in inputs:
        try:
            got = session.run(None, {"x": x.numpy()})[0]
        except Exception:  # noqa: BLE001
            bad += 1
            continue
        want = f(x).numpy()
        bad += got.shape != want.shape or not np.allclose(got, want)
    return "OK" if not bad else f"BAD ({bad}/{len(inputs)})"


def measure(opset: int, examples: int = 3) -> dict[str, str]:
    """Each form exported from ``examples`` random examples: a result that differs by
    example (an example whose mask selects one row bakes that row count in) is given as
    the worst one and the number of examples it came from."""
    import onnxruntime as ort
    import torch

    ort.set_default_logger_severity(4)
    torch.manual_seed(0)
    inputs = [torch.randn(4, 5, 6) for _ in range(4)] + [torch.ones(4, 5, 6), -torch.ones(4, 5, 6)]
    drawn = [torch.randn(4, 5, 6) for _ in range(examples)]
    results = {}
    for name, f in FORMS.items():
        runs = [_run_form(f, example, inputs, opset) for example in drawn]
        broken = [r for r in runs if r != "OK"]
        if not broken:
            results[name] = "OK"
        elif len(broken) == len(runs):
            results[name] = broken[0]
        else:
            results[name] = f"{broken[0]}, {len(broken)} of {len(runs)} examples"
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opsets", type=int, nargs="+", default=[17, 18, 20])
    parser.add_argument("--markdown", help="write the table here")
    args = parser.parse_args(argv)
    import onnxruntime
    import torch

    table = {opset: measure(opset) for opset in args.opsets}
    lines = [f"torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, "
             "`torch.onnx.export(dynamo=False)`", "",
             "| form | " + " | ".join(f"opset {o}" for o in args.opsets) + " |",
             "|---|" + "---|" * len(args.opsets)]
    for name in FORMS:
        lines.append(f"| {name} | " + " | ".join(table[o][name] for o in args.opsets) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as out:
            out.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
