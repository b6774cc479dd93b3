"""Calls with no effect on the graph (issue 24): `print`, `warnings.warn`, a logger's
methods (Python's own, a library's `warning_once`, decided by the logger object, however
it was obtained), `torch.jit.annotate` / `typing.cast`, and methods decorated
`torch.jit.unused` / `torch.jit.ignore`; at the top of forward, under a data-dependent `if`
(a warning on one side must not break the If) and inside a data-dependent loop. Each
exports and matches eager on onnxruntime with a dynamic batch, or is refused with a
message that says what to do."""

import logging
import typing
import warnings

import pytest
import torch
from torch import nn
from transformers.utils import logging as hf_logging

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "batch"}}
INPUTS = [(torch.tensor([[1.0, 2.0], [0.5, -0.25]]),), (torch.tensor([[-1.0, -2.0], [-0.5, 0.25], [3.0, 1.0]]),),
          (torch.tensor([[0.1, -0.3]]),)]


class OnceLogger(logging.Logger):
    """A logger class of user code with a method of its own."""

    def warning_once(self, message, *args):
        self.warning(message, *args)


logging.setLoggerClass(OnceLogger)
USER_LOGGER = logging.getLogger("untrace.tests.once")
logging.setLoggerClass(logging.Logger)
PLAIN_LOGGER = logging.getLogger("untrace.tests.plain")
LIBRARY_LOGGER = hf_logging.get_logger("untrace.tests.library")  # its warning_once is transformers' lru_cache'd one
ADAPTER = logging.LoggerAdapter(PLAIN_LOGGER, {"model": "test"})


class Output(nn.Module):
    def forward(self, x):
        print("input", x.shape, x)
        warnings.warn(f"batch of {x.shape[0]}", UserWarning)
        PLAIN_LOGGER.info("info %s", x.shape)
        LIBRARY_LOGGER.warning_once("the library's warning_once")
        USER_LOGGER.warning_once("a user logger's own method, %s", x.sum())
        ADAPTER.debug("through an adapter")
        if PLAIN_LOGGER.isEnabledFor(logging.CRITICAL + 10):  # a logger method whose value is used
            x = x * 100
        y = torch.jit.annotate(torch.Tensor, x) + typing.cast(torch.Tensor, x)
        return y


class UnderADataIf(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            warnings.warn("positive input")
            LIBRARY_LOGGER.warning_once("positive")
            y = x * 2
        else:
            print("negative input", x)
            PLAIN_LOGGER.warning("negative %s", x.sum())
            y = x - 1
        return y


class InsideADataLoop(nn.Module):
    def forward(self, x):
        total = x[0] * 0
        for row in x:
            if row.sum() > 0:
                USER_LOGGER.warning_once("a positive row")
                total = total + row
            else:
                print("a negative row", row)
                total = total - typing.cast(torch.Tensor, row)
        return total


class JitDecorated(nn.Module):
    @torch.jit.unused
    def training_only(self, x):
        return x * 2

    @torch.jit.ignore
    def python_helper(self, x):
        return x.relu() + 1

    @torch.jit.ignore
    def factor(self):
        return 3

    def forward(self, x):
        if self.training:
            return self.training_only(x)
        y = self.python_helper(x) * self.factor()
        if y.sum() > 4:
            y = self.python_helper(y)
        return y


class RuntimeCheckMessage(nn.Module):
    """A runtime check's message is shown only when it fails: an f-string of a size there
    names the value, as in a raise."""

    def forward(self, x):
        batch = x.shape[0]
        torch._assert(batch > 0, f"an empty batch ({batch} rows) of {x.shape}")
        return x * 2


@pytest.mark.parametrize("model", [Output(), UnderADataIf(), InsideADataLoop(), JitDecorated(), RuntimeCheckMessage()],
                         ids=lambda m: type(m).__name__)
def test_calls_without_graph_effect_match_eager(model, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proto = export(model.eval(), INPUTS[0], dynamic_shapes=DYNAMIC)
    assert not [w for w in caught if "input" in str(w.message)]  # nothing is warned at export time
    assert "input" not in capsys.readouterr().out  # nor printed
    assert proto is not None
    export_and_compare(model, INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


class LibraryLoggerMethodOnATensor(nn.Module):
    def forward(self, x):
        LIBRARY_LOGGER.warning_once(x.sum())
        return x


def test_a_library_logger_method_on_a_tensor_is_refused():
    with pytest.raises(LoweringError) as info:
        export(LibraryLoggerMethodOnATensor(), INPUTS[0])
    message = str(info.value)
    assert "a method of a logger) with a tensor argument" in message
    assert "pass it static values" in message
