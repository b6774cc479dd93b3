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


class RecordingLogger:
    """A logger of another library than `logging`: the same level methods on its own type,
    read from source like any Python the model calls."""

    def __init__(self):
        self.records = []

    def _emit(self, level, message):
        self.records.append((level, str(message)))

    def debug(self, message):
        self._emit("debug", message)

    def info(self, message):
        self._emit("info", message)

    def warning(self, message):
        self._emit("warning", message)

    def error(self, message):
        self._emit("error", message)

    def critical(self, message):
        self._emit("critical", message)


OTHER_LOGGER = RecordingLogger()


class OtherLibraryLogger(nn.Module):
    """An f-string of a dynamic size as a warning's message, on both sides of a data `if`."""

    def forward(self, x):
        rows = x.shape[0]
        if x.sum() > 0:
            OTHER_LOGGER.warning(f"{rows} rows, positive")
            return x * 2
        OTHER_LOGGER.info(f"{rows} rows")
        return x - 1


def test_a_logger_of_another_library_is_output_only():
    export_and_compare(OtherLibraryLogger().eval(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


class NotALogger:
    """Only a `warning` method: not a logger's API, so its call is read as Python."""

    def warning(self, message):
        return message


class FStringToAnotherObject(nn.Module):
    def forward(self, x):
        rows = x.shape[0]
        NotALogger().warning(f"{rows} rows")
        return x


def test_an_f_string_of_a_size_to_an_object_that_is_not_a_logger_is_refused():
    with pytest.raises(LoweringError, match="an f-string of a tensor value"):
        export(FStringToAnotherObject(), INPUTS[0], dynamic_shapes=DYNAMIC)
