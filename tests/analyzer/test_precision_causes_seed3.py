"""Causes of false alarms found by judging random findings on real code (issue 12,
`benchmarks/data/precision_sample_seed3.json`), in the form of `test_precision_causes`:
every line that must be reported ends in `# expect: UTxxx`, its true-positive neighbour
sits in the same program, and the exact set of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases, package_findings

CASES = MarkedCases()
case = CASES.add


# Emptiness tests of a list the function builds: where every path before the test appends
# (the bos entry just above) the outcome is the same for every input; at the head of a
# loop whose every pass appends (an `if`/`elif` chain over `m == a`, `m == b` for
# `m = min(a, b)` has no fall-through) it is empty exactly on the first pass, `_ > 0`, and
# after the loop exactly when it never ran (the loop's UT102). After an append under a
# data-dependent `if` the length is data.
case("list-emptiness-fixed-by-position", """
    import torch
    import torch.nn as nn

    class Positions(nn.Module):
        def forward(self, input_ids, use_pairs: bool = False):
            tokens = input_ids.tolist()  # expect: UT201
            parts = []
            st = 0
            for _ in range(int((input_ids > 5).sum())):  # expect: UT201, UT102
                start = parts[-1].max() + 1 if len(parts) > 0 else 0
                ed_a = tokens.index(7, st) if 7 in tokens[st:] else len(tokens)  # expect: UT101
                ed_b = tokens.index(8, st) if 8 in tokens[st:] else len(tokens)  # expect: UT101
                first = min(ed_a, ed_b)
                if first == ed_a:  # expect: UT101
                    gap = first - st
                    if gap != 0:  # expect: UT101
                        start = parts[-1].max() + 1 if len(parts) > 0 else 0
                        parts.append(torch.arange(gap) + start)
                    start = parts[-1].max() + 1 if len(parts) > 0 else 0  # expect: UT101
                    parts.append(torch.arange(1) + start)
                    start = parts[-1].max() + 1 if len(parts) > 0 else 0
                    parts.append(torch.arange(2) + start)
                    st = first + 1
                elif first == ed_b and use_pairs:  # expect: UT101
                    parts.append(torch.arange(1))
                    st = first + 1
                elif first == ed_b and not use_pairs:  # expect: UT101
                    start = parts[-1].max() + 1 if len(parts) > 0 else 0
                    parts.append(torch.arange(1) + start)
                    if not parts:
                        parts.append(torch.arange(3))
                    st = first + 1
            if len(parts) > 0:
                start = parts[-1].max() + 1
            return torch.cat(parts)
""")

# Without the chain being exhaustive a pass may append nothing: the head test is data.
case("list-emptiness-after-a-pass-that-may-not-append", """
    import torch
    import torch.nn as nn

    class Positions(nn.Module):
        def forward(self, input_ids):
            parts = []
            for i in range(int(input_ids.sum())):  # expect: UT201, UT102
                start = parts[-1].max() + 1 if len(parts) > 0 else 0  # expect: UT101
                if input_ids.sum() > i:  # expect: UT101
                    parts.append(torch.arange(1) + start)
                elif input_ids.max() > i:  # expect: UT101
                    parts.append(torch.arange(2) + start)
            for i in range(int(input_ids.max())):  # expect: UT201, UT102
                parts.append(input_ids[:1])
                parts.pop()
                if len(parts) > 1:  # expect: UT101
                    parts.append(torch.arange(1))
            grown = []
            for i in range(int(input_ids.max())):  # expect: UT201, UT102
                alias = grown
                grown.append(input_ids[:1])
                alias.clear()
                if len(grown) > 0:  # expect: UT101
                    grown.append(torch.arange(1))
            return torch.cat(parts)
""")

# A branch whose only effect is a message: nothing the trace records depends on it. One
# that raises, or that logs and also computes, is still a branch of the graph.
case("branch-that-only-logs", """
    import logging
    import warnings

    import torch
    import torch.nn as nn

    logger = logging.getLogger(__name__)

    class Decoder(nn.Module):
        def forward(self, input_ids, position_ids):
            first = position_ids[0] == 0
            if first and input_ids.sum() > 3:
                logger.warning("the first codebook token needs the backbone state")
            elif input_ids.max() > 9:
                warnings.warn("large ids")
            if (input_ids < 0).any():
                print("negative ids")
            if input_ids.min() < -5:  # expect: UT101
                raise ValueError("ids must be non-negative")
            if input_ids.sum() > 100:  # expect: UT101
                logger.warning("long input")
                input_ids = input_ids[:100]
            return input_ids * 2
""")

# `torch.randperm(n)` / `torch.arange(n)` of an `n` the model fixes has n rows for every
# input: iterating it is no unrolling over the example's size. Of a size read from the
# input it is.
case("counted-range-of-a-model-size", """
    import torch
    import torch.nn as nn

    class RandomOrder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, x):
            for idx in torch.randperm(len(self.blocks)):
                x = x * 2
            for i in torch.arange(0, 3):
                x = x + i
            for i in torch.arange(x.shape[0]):  # expect: UT105
                x = x + i
            for row in list(torch.arange(x.shape[1])):  # expect: UT105
                x = x + row
            return x
""")


# What a call into another runtime (TensorFlow, TFLite, ONNX Runtime, ...) returns is that
# runtime's object, and so is what is read from it and called on it: `x.numpy()` of a
# TFLite output is no escape of a torch tensor. The escape is where the torch input became
# NumPy for the runtime; a torch tensor's `.numpy()` beside it stays reported.
case("foreign-runtime-outputs", """
    import numpy as np
    import torch


    class TFLiteBackend:
        def __init__(self, weight, fmt):
            self.format = fmt
            self.load_model(weight)

        def load_model(self, weight):
            if self.format == "saved_model":
                import tensorflow as tf
                self.model = tf.saved_model.load(weight)
            try:
                from tflite_runtime.interpreter import Interpreter
            except ImportError:
                import tensorflow as tf
                Interpreter = tf.lite.Interpreter
            self.interpreter = Interpreter(model_path=str(weight))
            self.output_details = self.interpreter.get_output_details()

        def forward(self, im: torch.Tensor):
            im = im.cpu().numpy()  # expect: UT202
            if self.format == "saved_model":
                y = self.model.serving_default(im)
                if not isinstance(y, list):
                    y = [y]
            else:
                self.interpreter.set_tensor(0, im)
                self.interpreter.invoke()
                y = []
                for output in self.output_details:
                    x = self.interpreter.get_tensor(output["index"])
                    if x.ndim == 3:
                        x[:, [0, 2]] *= im.shape[2]
                    y.append(x)
            return [x if isinstance(x, np.ndarray) else x.numpy() for x in y]


    class OnnxRuntimeBackend:
        def __init__(self, weight):
            import onnxruntime
            self.session = onnxruntime.InferenceSession(weight)
            self.head = torch.nn.Linear(4, 4)

        def forward(self, im: torch.Tensor):
            y = self.session.run(None, {"images": im.cpu().numpy()})  # expect: UT202
            feats = self.head(torch.from_numpy(y[0]))
            return y[0].numpy(), feats.numpy()  # expect: UT202
""")


# Inside `if isinstance(x, dict):` the value is a dict, whatever `x` was annotated: the
# iteration over its values is no tensor iteration. The tensor side of the same dispatch
# and a tensor iterated inside the narrowed branch stay reported.
case("isinstance-narrows-to-a-container", """
    import torch
    import torch.nn as nn

    class Decoder(nn.Module):
        def forward(self, x: torch.Tensor, attention_mask: torch.Tensor | None = None):
            if isinstance(attention_mask, dict):
                causal_mask = next(iter(attention_mask.values()))
                for row in x:  # expect: UT105
                    causal_mask = causal_mask + row
            elif isinstance(attention_mask, (list, tuple)):
                causal_mask = attention_mask[0]
                for m in attention_mask:
                    causal_mask = causal_mask * m
            else:
                causal_mask = attention_mask
                for row in attention_mask:  # expect: UT105
                    causal_mask = causal_mask + row
            return x * causal_mask
""")


# A parameter defaulting to None that only a loss reads (besides its None tests and a
# validation that only raises) is a training target whatever its name: what its
# `is not None` test guards is training-only. A prompt read by the model itself
# (`input_labels`) is an input: a data branch under its None test stays reported.
LOSS_TARGETS = """
    import torch
    import torch.nn as nn

    class Regression(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(8, 2)
            self.prompt = nn.Embedding(4, 8)
            self.loss = nn.MSELoss()

        def forward(self, past_values, target_values=None, return_loss=True, input_labels=None):
            y_hat = self.head(past_values)
            if target_values is not None and return_loss is True:
                if torch.any(target_values < 0):  {expect}
                    raise ValueError("target_values cannot be negative")
                loss_val = self.loss(y_hat, target_values)
            else:
                loss_val = None
            if input_labels is not None:
                if (input_labels > 2).any():  # expect: UT101
                    y_hat = y_hat + self.head(self.prompt(input_labels))
            return loss_val, y_hat
"""
case("loss-only-parameter-is-a-training-target", LOSS_TARGETS.format(expect=""))
case("loss-only-parameter-is-a-training-target-reported-as-ut106", LOSS_TARGETS.format(expect="# expect: UT106"),
     extend_select=["UT106"])


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)


# A constructor flag that no construction in the checked tree sets is its default: the
# in-place side of `x.mul_(g) if self.inplace else x * g` never runs. A flag some
# construction sets (`Tanh(inplace=True)`), or a class handed on as a value (a registry
# entry, `partial(...)`), leaves the write reported; so does a class the tree never builds.
LAYERS = '''
import torch
import torch.nn as nn


class LayerScale(nn.Module):
    """LayerScale: scales the channels (a docstring naming LayerScale is no construction)."""

    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x.mul_(self.gamma) if self.inplace else x * self.gamma


class Tanh(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return x.tanh_() if self.inplace else x.tanh()


class Sigmoid(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return x.sigmoid_() if self.inplace else x.sigmoid()


class Unbuilt(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return x.relu_() if self.inplace else x.relu()
'''

BLOCKS = '''
import torch.nn as nn

from .layers import LayerScale, Sigmoid, Tanh  # LayerScale(dim, inplace=True) in a comment is none

ACTIVATIONS = dict(sigmoid=Sigmoid)


class Block(nn.Module):
    def __init__(self, dim, init_values=None):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.ls1 = LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
        self.ls2 = LayerScale(dim, 1e-5)
        self.act = Tanh(inplace=True)
        self.gate = ACTIVATIONS["sigmoid"]()

    def forward(self, x):
        # `self.act` gets the forward's input: a tensor the block made would be a local write
        return self.gate(self.act(x) + self.ls2(self.ls1(self.proj(x))))
'''


def test_constructor_flag_no_construction_sets(tmp_path, monkeypatch):
    from analyzer import check_paths

    found = package_findings(tmp_path, monkeypatch, {"layers.py": LAYERS, "blocks.py": BLOCKS})
    assert found == [("layers.py", 24, "UT301"), ("layers.py", 33, "UT301"), ("layers.py", 42, "UT301")]
    # Checked alone, the file holds no construction of LayerScale: its user builds it.
    alone = check_paths([str(tmp_path / "pkg" / "layers.py")])
    assert sorted((d.line, d.code) for d in alone) == [(15, "UT301"), (24, "UT301"), (33, "UT301"), (42, "UT301")]
