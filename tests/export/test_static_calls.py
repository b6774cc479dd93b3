"""Static Python runs as Python only when it changes nothing outside itself
(`lowering/interp/state_scan.py`): a helper on static arguments that changes shared state
(a global, a module-level container, an attribute of an object passed in, its list
argument) is interpreted from source, where the change is recorded, undone between the
sides of a data-dependent `if`, or refused by name; and a helper stopped at its first
torch op never changed anything before it was stopped, so nothing happens twice.

Each model is exported with the module's state reset, then compared with eager (state
reset again before each eager run) on inputs that take both sides of its `if`; or it is
refused with a message that names what it does. Never silently wrong."""

from __future__ import annotations

import collections.abc
import copy
import dataclasses
import functools
import inspect
import math
import re

import onnxruntime as ort
import pytest
import torch

from lowering import LoweringError, export
from lowering.interp.state_scan import may_change_state
from tests.export.harness import assert_session_matches

COUNTER = 0
LOG: list = []
INPUTS = [(torch.tensor([-1.0, 0.0, 0.5]),), (torch.tensor([1.0, 0.5, 0.25]),), (torch.tensor([3.0, 2.5, 1.25]),)]


def _reset():
    global COUNTER
    COUNTER = 0
    LOG.clear()


def bump() -> int:
    global COUNTER
    COUNTER += 1
    return COUNTER


def log(n: int) -> int:
    LOG.append(n)
    return len(LOG)


def bump_then_relu(x):
    global COUNTER
    COUNTER += 1
    return torch.relu(x) + COUNTER


class Bumps:
    def __init__(self, n):
        global COUNTER
        COUNTER += n


def push(items: list, n: int) -> int:
    items.append(n)
    return len(items)


class Config:
    def __init__(self):
        self.flag = False


def enable(cfg: Config) -> None:
    cfg.flag = True


def to_2tuple(a):
    return tuple(a) if isinstance(a, (list, tuple)) else (a, a)


def scaled(a: int, b: int) -> int:
    out = []
    for i in range(a):
        out.append(i * b)
    table = {}
    table[a] = sum(out)
    return table[a] + math.ceil(a / 2)


@dataclasses.dataclass(frozen=True)
class Dims:
    hidden: int = 4
    heads: int = 2


def _outcome(model, refused: str | None = None):
    """Equal to eager on every input, or (when `refused` is given) refused by name."""
    _reset()
    try:
        proto = export(model, copy.deepcopy(INPUTS[0]))
    except LoweringError as exc:
        assert refused is not None and re.search(refused, str(exc)), str(exc)
        return "refused"
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for args in INPUTS:
        _reset()
        assert_session_matches(session, model, args)
    return "lowered"


# ---------------------------------------------------------------- what changes shared state


class CounterUnderIf(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            a = bump()
        else:
            a = 0
        return x * a + bump()


def test_a_global_counter_under_a_data_dependent_if_is_never_silently_wrong():
    assert _outcome(CounterUnderIf(), refused=r"COUNTER") == "refused"
    assert COUNTER == 0  # not bumped for real at export


class CounterTwice(torch.nn.Module):
    def forward(self, x):
        return x * bump() + bump()


def test_a_global_counter_called_twice_counts_twice():
    assert _outcome(CounterTwice(), refused=r"COUNTER") == "refused"


class ModuleList(torch.nn.Module):
    def forward(self, x):
        n = log(1)
        if x.sum() > 0:
            n = log(2)
        return x * n


def test_appending_to_a_module_level_list_under_an_if():
    assert _outcome(ModuleList(), refused=r"LOG|append") == "refused"
    assert LOG == []


class SetsAFlag(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Config()

    def forward(self, x):
        cfg = Config()
        enable(cfg)
        y = x * 2 if cfg.flag else x
        if x.sum() > 0:
            enable(self.cfg)
        return y + (1 if self.cfg.flag else 0)


def test_a_helper_that_sets_an_attribute_of_a_config_passed_in():
    model = SetsAFlag()
    assert _outcome(model, refused=r"flag") == "refused"
    assert model.cfg.flag is False


class LocalFlag(torch.nn.Module):
    def forward(self, x):
        cfg = Config()
        enable(cfg)
        return x * 2 if cfg.flag else x


def test_a_flag_set_on_forward_s_own_config_is_read_back():
    assert _outcome(LocalFlag()) == "lowered"


class BumpThenTorch(torch.nn.Module):
    def forward(self, x):
        return bump_then_relu(x)


def test_a_helper_that_changes_a_global_then_reaches_torch_changes_it_once():
    assert _outcome(BumpThenTorch(), refused=r"COUNTER") == "refused"
    assert COUNTER == 0  # neither run for real and stopped, nor run twice


class MutatesItsArgument(torch.nn.Module):
    def forward(self, x):
        items = [1]
        n = push(items, 2)
        if x.sum() > 0:
            n = n + push(items, 3)
        return x * n + len(items)


def test_a_helper_that_appends_to_its_list_argument():
    # the interpreter lowered it from source, but lost the helper's change inside the branch
    assert _outcome(MutatesItsArgument(), refused=r"`items` .* changed .* by a function it calls") == "refused"


class MutatesItsArgumentInALoop(torch.nn.Module):
    def forward(self, x):
        items = [1]
        n = push(items, 2)
        s = x.sum()
        while s > 0:
            n = n + push(items, 3)
            s = s - 1
        return x * n + len(items)


def test_a_helper_that_appends_to_its_list_argument_in_a_data_loop():
    assert _outcome(MutatesItsArgumentInALoop(), refused=r"items") == "refused"


# ---------------------------------------------------------------- still run as Python


class Pure(torch.nn.Module):
    def forward(self, x):
        a, b = to_2tuple(3)
        f = functools.partial(max, 2)
        d = dataclasses.replace(Dims(), heads=4)
        r = a + b + f(5) + math.ceil(2.5) + d.hidden // d.heads + scaled(3, 2)
        if x.sum() > 0:
            r = r + scaled(2, 5)
        return x * r


def test_pure_helpers_still_run_as_python():
    assert _outcome(Pure()) == "lowered"


SCALES = {}  # keyed by class, as a registry of per-class settings is


class ByItsClassName(torch.nn.Module):
    """`str(self.__class__)` looks at a module class, which is not built: a registry read
    keyed by it runs as Python."""

    def forward(self, x):
        scale = SCALES.get(str(self.__class__), 2.0)
        if x.sum() > 0:
            return x * scale
        return x - scale


def test_a_class_that_is_only_looked_at_is_not_built():
    assert _outcome(ByItsClassName()) == "lowered"


class Registry(collections.abc.Mapping):
    """A registry as libraries write them: `get` checks the name, then asks the mapping's own."""

    def __init__(self):
        self._items = {"double": 2.0}

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def get(self, key, default=None):
        if key != "double" and key not in self:
            raise KeyError(key)
        return super().get(key, default)


REGISTRY = Registry()


class ReadsARegistry(torch.nn.Module):
    def half(self, x):
        return x / 2

    def forward(self, x):
        scale = REGISTRY.get("double", 1.0) + len(inspect.signature(self.half).parameters)
        if x.sum() > 0:
            return x * scale
        return self.half(x)


def test_a_registry_read_and_a_signature_run_as_python():
    assert _outcome(ReadsARegistry()) == "lowered"


@pytest.mark.parametrize("call", [
    lambda: (to_2tuple, None, (3,), {}),
    lambda: (functools.partial, None, (max, 2), {}),
    lambda: (functools.partial(max, 2), None, (5,), {}),
    lambda: (math.ceil, None, (2.5,), {}),
    lambda: (dataclasses.replace, None, (Dims(),), {"heads": 4}),
    lambda: (Dims, None, (8, 2), {}),
    lambda: (scaled, None, (3, 2), {}),
    lambda: (sorted, None, ([3, 1, 2],), {"key": lambda a: -a}),
    lambda: (str, None, (ByItsClassName,), {}),
    lambda: (isinstance, None, (1, ByItsClassName), {}),
])
def test_the_scan_lets_pure_calls_run(call):
    assert may_change_state(*call()) is None


@pytest.mark.parametrize("call, why", [
    (lambda: (bump, None, (), {}), "global `COUNTER`"),
    (lambda: (log, None, (1,), {}), r"\.append\(\)"),
    (lambda: (push, None, ([], 1), {}), r"\.append\(\)"),
    (lambda: (enable, None, (Config(),), {}), r"\.flag"),
    (lambda: (bump_then_relu, None, (1,), {}), "global `COUNTER`"),
    (lambda: (functools.partial(push, []), None, (1,), {}), r"\.append\(\)"),
    (lambda: (map, None, (Bumps, [1]), {}), "global `COUNTER`"),  # map builds the class it is given
])
def test_the_scan_finds_changes_of_shared_state(call, why):
    assert re.search(why, may_change_state(*call()) or "")
