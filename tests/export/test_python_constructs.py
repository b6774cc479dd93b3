"""Python constructs of library code around forward (issue 13): try / except / finally,
zero-argument super(), ContextVar set / reset, attributes set for the call and
restored, objects and dataclasses built in forward. Each exports and matches eager on
onnxruntime on several inputs, or is refused with a message that says what to do."""

import contextvars
import dataclasses
import re

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


def _inputs(*shapes):
    return [(torch.randn(*s),) for s in shapes]


DYNAMIC = {"x": {0: "batch"}}


# ---------------------------------------------------------------- try / except / finally


class Config:
    scale = 2.0


def _scale_of(config):
    try:
        return config.missing_attribute  # AttributeError at export time, as in eager
    except AttributeError:
        return config.scale


class TryExceptTakesTheHandler(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = Config()

    def forward(self, x):
        try:
            import a_module_that_does_not_exist  # noqa: F401
            y = x * 100
        except ImportError:
            y = x * _scale_of(self.config)
        else:
            y = y + 1
        return y


class TryElseFinally(nn.Module):
    def forward(self, x):
        steps = []
        try:
            y = x + 1
        except ValueError:
            y = x - 1
        else:
            steps.append("else")
            y = y * 2
        finally:
            steps.append("finally")
        return y * len(steps)


class RaiseCaughtByKeyOrType(nn.Module):
    def forward(self, x):
        table = {"a": 1.0}
        try:
            scale = table["b"]
        except (TypeError, KeyError) as err:
            scale = 3.0 if isinstance(err, KeyError) else 4.0
        try:
            raise ValueError("bad")
        except ValueError:
            scale = scale + 1
        return x * scale


class FinallyRestoresAConfig(nn.Module):
    """transformers' merge_with_config_defaults: a config value set for the call, put back."""

    def __init__(self):
        super().__init__()
        self.config = Config()

    def forward(self, x):
        original = self.config.scale
        self.config.scale = 5.0
        try:
            y = x * self.config.scale
        finally:
            self.config.scale = original
        return y


class ReRaiseInHandler(nn.Module):
    def forward(self, x):
        try:
            try:
                raise KeyError("k")
            except KeyError:
                raise
            finally:
                x = x + 1
        except KeyError:
            x = x * 3
        return x


@pytest.mark.parametrize("model", [TryExceptTakesTheHandler(), TryElseFinally(), RaiseCaughtByKeyOrType(),
                                   FinallyRestoresAConfig(), ReRaiseInHandler()], ids=lambda m: type(m).__name__)
def test_try_statements_follow_python(model):
    inputs = _inputs((2, 3), (5, 3), (1, 3))
    export_and_compare(model, inputs[0], inputs, dynamic_shapes=DYNAMIC)


def test_finally_leaves_the_config_as_it_was():
    model = FinallyRestoresAConfig()
    export(model, (torch.randn(2, 3),))
    assert model.config.scale == 2.0 and "scale" not in vars(model.config)


class RaiseUnderADataBranchInTry(nn.Module):
    def forward(self, x):
        try:
            if x.sum() > 0:
                raise ValueError("positive")
            y = x + 1
        except ValueError:
            y = x - 1
        return y


class ExceptOnAComputedName(nn.Module):
    def forward(self, x):
        kinds = [ValueError, 3]
        try:
            raise ValueError()
        except kinds[1]:
            pass
        return x


class BareRaise(nn.Module):
    def forward(self, x):
        raise


class UncaughtRaise(nn.Module):
    def forward(self, x):
        try:
            raise ValueError("no")
        except KeyError:
            pass
        return x


@pytest.mark.parametrize("model, message", [
    (RaiseUnderADataBranchInTry(), "an exception is raised at line \\d+ inside a data-dependent branch or loop "
                                   "within this `try`: whether eager PyTorch raises it, and so whether the `except` "
                                   "at line \\d+ runs, depends on tensor data\nraise outside the data-dependent "
                                   "branch, or compute both results and choose with torch.where"),
    (ExceptOnAComputedName(), "`except kinds\\[1\\]` does not name exception classes known at export time\n"
                              "name the exception classes directly"),
    (BareRaise(), "a bare `raise` outside an `except` block"),
    (UncaughtRaise(), "`raise ValueError\\('no'\\)` is reached at export time for these inputs\nthe inputs given "
                      "to export take a path that raises; check the shapes and arguments"),
])
def test_try_refusals_say_why(model, message):
    with pytest.raises(LoweringError, match=message) as info:
        export(model, (torch.randn(2, 3),))
    assert info.value.path.endswith("test_python_constructs.py") and info.value.line


class RaiseOnOneSideOfADataBranch(nn.Module):
    """CLIP's `if seq_length > max_position_embedding: raise ValueError(...)` on a dynamic axis."""

    def forward(self, x):
        if x.shape[1] > 6:
            raise ValueError("too long")
        return x * 2


def test_a_raise_on_one_side_of_a_data_branch_is_a_check_on_the_input():
    inputs = [(torch.randn(2, n),) for n in (3, 6, 1)]
    proto = export(RaiseOnOneSideOfADataBranch(), inputs[0], dynamic_shapes={"x": {1: "n"}})
    assert not [n for n in proto.graph.node if n.op_type == "If"]
    export_and_compare(RaiseOnOneSideOfADataBranch(), inputs[0], inputs, dynamic_shapes={"x": {1: "n"}})


# ---------------------------------------------------------------- super()


class Base(nn.Module):
    def forward(self, x):
        return x * 2


class Child(Base):
    def forward(self, x):
        return super().forward(x) + 1


class ChannelsFirstLayerNorm(nn.LayerNorm):
    """transformers' ConvNextLayerNorm: super().forward of an nn module."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def test_zero_argument_super():
    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(Child(), inputs[0], inputs, dynamic_shapes=DYNAMIC)
    norm = ChannelsFirstLayerNorm(4).eval()
    with torch.no_grad():
        norm.weight.normal_()
        norm.bias.normal_()
    inputs = _inputs((2, 4, 3, 5), (1, 4, 3, 5))
    export_and_compare(norm, inputs[0], inputs, dynamic_shapes=DYNAMIC)


def _helper_calling_super():
    return super()


class SuperOutsideAMethod(nn.Module):
    def forward(self, x):
        _helper_calling_super()
        return x


def test_super_outside_a_method_is_refused():
    # a helper of static arguments runs as Python (static_calls): Python's own error, as eager's
    with pytest.raises(LoweringError, match=re.escape("RuntimeError('super(): no arguments')")):
        export(SuperOutsideAMethod(), (torch.randn(2, 3),))


# ---------------------------------------------------------------- ContextVar


_collector = contextvars.ContextVar("collector", default=None)


class Collects(nn.Module):
    """transformers' output capturing: a ContextVar set around the call and reset."""

    def forward(self, x):
        token = _collector.set([])
        try:
            _collector.get().append(x * 2)
            y = _collector.get()[0] + 1
        finally:
            _collector.reset(token)
        return y


class CountsCallsInAContextVar(nn.Module):
    def forward(self, x):
        _collector.set((_collector.get() or 0) + 1)
        return x * _collector.get()


class SetsAContextVarUnderData(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            _collector.set(1)
        return x


def test_context_var_set_and_reset():
    inputs = _inputs((2, 3), (3, 3))
    export_and_compare(Collects(), inputs[0], inputs, dynamic_shapes=DYNAMIC)
    assert _collector.get() is None


@pytest.mark.parametrize("model, message", [
    (CountsCallsInAContextVar(), "CountsCallsInAContextVar.forward changes ContextVar('collector') and leaves it "
                                 "changed, and the next call lowers differently: eager PyTorch's next call sees the "
                                 "change, which an exported graph cannot\nrestore it before forward returns (try / "
                                 "finally), or keep per-call state in local variables"),
    (SetsAContextVarUnderData(), "`ContextVar('collector').set()` is changed inside a data-dependent branch or loop: "
                                 "whether eager PyTorch changes it depends on tensor data, and untrace does not "
                                 "carry it through the graph\nkeep per-call state in local variables, or change it "
                                 "outside the data-dependent branch"),
])
def test_context_var_refusals(model, message):
    with pytest.raises(LoweringError, match=re.escape(message)):
        export(model, (torch.randn(2, 3),))
    assert _collector.get() is None  # undone either way


# ---------------------------------------------------------------- attributes and objects


class CountsCallsInTheConfig(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = Config()

    def forward(self, x):
        self.config.scale = self.config.scale + 1
        return x * self.config.scale


class SetsTheConfigOnce(nn.Module):
    """Lazy set-up: the first call sets what every later call sets again."""

    def __init__(self):
        super().__init__()
        self.config = Config()

    def forward(self, x):
        self.config.scale = 3.0
        return x * self.config.scale


class DeletesAModuleAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.flag = True

    def forward(self, x):
        del self.flag
        return x


@pytest.mark.parametrize("model, message", [
    (CountsCallsInTheConfig(), "CountsCallsInTheConfig.forward changes self.config.scale and leaves it changed, "
                               "and the next call lowers differently"),
    (DeletesAModuleAttribute(), "`del self.flag` in forward changes the module's state\nkeep per-call state in local "
                                "variables"),
])
def test_state_left_changed_is_refused(model, message):
    with pytest.raises(LoweringError, match=re.escape(message)):
        export(model, (torch.randn(2, 3),))
    assert not isinstance(model, CountsCallsInTheConfig) or model.config.scale == 2.0


def test_a_change_every_call_repeats_exports_and_stays_as_after_eager_first_call():
    inputs = _inputs((2, 3), (4, 3))
    model = SetsTheConfigOnce()
    export_and_compare(model, inputs[0], inputs, dynamic_shapes=DYNAMIC)
    assert model.config.scale == 3.0


def test_hooks_a_forward_installs_on_its_first_call_export():
    """transformers' output capturing installs its hooks in the first call that asks."""
    model = InstallsItsHook()
    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(model, inputs[0], dynamic_shapes=DYNAMIC)  # compares after the export installed it
    assert len(model.layer._forward_hooks) == 1
    export_and_compare(InstallsItsHook(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


def _add_one(module, args, output):
    return output + 1


class InstallsItsHook(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Layer()
        self.installed = False

    def forward(self, x):
        if not self.installed:
            self.layer.register_forward_hook(_add_one)
            self.installed = True
        return self.layer(x)


class SetsTheSameModuleValue(nn.Module):
    """Swin's set_shift_and_window_size: a module int set again to the value it has."""

    def __init__(self):
        super().__init__()
        self.window = 4

    def forward(self, x):
        if min(x.shape[1:]) <= self.window:
            self.window = min(x.shape[1:])
        return x * self.window


def test_a_module_attribute_set_to_the_value_it_had_exports():
    inputs = _inputs((2, 4), (3, 4))
    export_and_compare(SetsTheSameModuleValue(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


@dataclasses.dataclass
class Output:
    hidden: torch.Tensor
    extra: torch.Tensor | None = None
    scale: float = 1.0

    def __post_init__(self):
        self.hidden = self.hidden * self.scale


class Record:
    def __init__(self, value, offset=1):
        self.value = value + offset


class BuildsObjects(nn.Module):
    def forward(self, x):
        record = Record(x, offset=2)
        record.value = record.value * 3  # an attribute of the call's own object
        out = Output(record.value, scale=0.5)
        out.extra = out.hidden + 1
        return out.hidden, out.extra


def test_objects_and_dataclasses_built_in_forward():
    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(BuildsObjects(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


class MissingField(nn.Module):
    def forward(self, x):
        return Output().hidden


def test_a_dataclass_built_without_a_field_is_refused():
    # built from static arguments, it runs as Python (static_calls): Python's own error, as eager's
    with pytest.raises(LoweringError, match=re.escape("missing 1 required positional argument: 'hidden'")):
        export(MissingField(), (torch.randn(2, 3),))


# ---------------------------------------------------------------- forward hooks


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        return self.linear(x)


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = Layer(), Layer()

    def forward(self, x):
        return self.second(self.first(x))


def _hooked():
    model = TwoLayers().eval()

    def double_input(module, args):
        return (args[0] * 2,)

    def observe(module, args, output):
        return None  # keeps the output

    def add_input(module, args, output):
        return output + args[0]

    def shift_input(module, args, kwargs):
        return (args[0] - 1,), kwargs

    model.first.register_forward_pre_hook(double_input)
    model.first.register_forward_hook(observe)
    model.second.register_forward_hook(add_input)
    model.second.register_forward_pre_hook(shift_input, with_kwargs=True)
    return model


def test_forward_hooks_run_around_forward():
    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(_hooked(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


def test_a_hook_without_python_source_is_refused():
    model = TwoLayers().eval()
    model.first.register_forward_hook(torch.nn.functional.relu)
    with pytest.raises(LoweringError, match=re.escape(
            "Layer has a forward hook or pre-hook (relu) that untrace cannot read: eager PyTorch runs it on every "
            "call\nremove the hook before export (its handle's .remove()), or register a lowering for the module")):
        export(model, (torch.randn(2, 3),))


# ---------------------------------------------------------------- Python int defaults, f-strings


class KeepLast(nn.Module):
    """transformers' `logits_to_keep: int = 0`: a Python int default is a constant of the
    export (the legacy tracer made it a graph input)."""

    def forward(self, x, keep: int = 0):
        return x[:, slice(-keep, None) if isinstance(keep, int) else keep]


def test_a_python_int_default_is_a_constant_not_an_input():
    inputs = [(torch.randn(2, 5),), (torch.randn(3, 5),)]
    proto = export(KeepLast(), inputs[0], dynamic_shapes=DYNAMIC)
    assert [i.name for i in proto.graph.input] == ["x"]
    export_and_compare(KeepLast(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


class FormattedKeys(nn.Module):
    def forward(self, x):
        flags = {f"output_{k}": i for i, k in enumerate(["a", "b"])}
        name = f"{'x'!r}:{3.14159:.2f}:{{}}"
        return x * flags["output_b"] * len(name)


def test_f_strings_are_built_as_python_builds_them():
    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(FormattedKeys(), inputs[0], inputs, dynamic_shapes=DYNAMIC)


def _install(layer, k):
    def hook(module, args, output):
        return output * k

    layer.register_forward_hook(hook)


class InstallsANestedHook(nn.Module):
    """transformers' install_output_capuring_hook: the hook is a `def` inside the installer."""

    def __init__(self):
        super().__init__()
        self.layer = Layer()
        self.installed = False

    def forward(self, x):
        if not self.installed:
            _install(self.layer, 3)
            self.installed = True
        return self.layer(x)


def test_a_hook_defined_in_forward_is_installed_as_a_python_function():
    model = InstallsANestedHook().eval()
    inputs = _inputs((2, 3), (4, 3))
    export_and_compare(model, inputs[0], inputs, dynamic_shapes=DYNAMIC)
    (hook,) = model.layer._forward_hooks.values()
    assert hook.__name__ == "hook" and hook.__closure__[0].cell_contents == 3
    with torch.no_grad():  # eager keeps working with the hook the export installed
        torch.testing.assert_close(model(inputs[0][0]), model.layer.linear(inputs[0][0]) * 3)
