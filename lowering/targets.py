"""Loading the TARGET of `untrace export` / `verify`, and the user's code it runs.

TARGET is `package.module:callable` or `path/to/file.py:callable`; the callable returns
the module (a class is instantiated with no arguments). `--weights CKPT` loads a
state dict with `torch.load(weights_only=True)`.

What the user's code raises while untrace runs it (the target's import and factory, the
checkpoint) is a `TargetError`: one line naming what is wrong, with the file:line of the
user's code where there is one, exit code 2.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import pickle
import pickletools
import re
import site
import sys
import sysconfig
import traceback
import warnings
import zipfile
from collections.abc import Mapping

import torch

from analyzer.cli import UsageError


class TargetError(UsageError):
    """A TARGET, argument or output path that cannot be used, or the user's code failing
    while untrace runs it: a usage error (exit 2), reported in one line."""


# ======================================================================================
# the user's code: where an exception it raised comes from


def shown(path: str) -> str:
    """A path as messages show it: relative to the working directory when under it."""
    from lowering.verification.coverage import display_path

    return display_path(os.path.abspath(path))


@functools.cache
def _not_user_code() -> tuple[str, ...]:
    """Folders whose frames are not the user's: untrace, the standard library, installed
    packages (torch raising on the user's behalf is reported where the user called it)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders = {os.path.join(root, package) for package in ("lowering", "analyzer")}
    folders |= {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders |= set(site.getsitepackages()) | {site.getusersitepackages()}
    return tuple(os.path.realpath(f) + os.sep for f in folders if f)


def user_frame(exc: BaseException, own_file: str | None = None) -> str | None:
    """`path:line` of the deepest frame of ``exc``'s traceback in the user's code: in
    ``own_file`` (the target's file, even when it is installed) or in no folder of
    :func:`_not_user_code`."""
    own = os.path.realpath(own_file) if own_file else None
    excluded = _not_user_code()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
            continue
        real = os.path.realpath(frame.filename)
        if real == own or not real.startswith(excluded):
            return f"{shown(frame.filename)}:{frame.lineno}"
    return None


def describe_exception(exc: BaseException) -> str:
    """`Type: first line of the message` (torch's messages go on for paragraphs)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


@contextlib.contextmanager
def running_user_code(what: str, own_file: str | None = None):
    """Turn what the user's code raises while ``what`` runs ("importing m.py", "calling
    build()") into a TargetError that says where. SystemExit too: a module that calls
    sys.exit() must not end untrace with no word."""
    try:
        yield
    except TargetError:
        raise
    except SyntaxError as exc:
        raise TargetError(f"{_syntax_error_position(exc, own_file)}: syntax error: {exc.msg} (while {what})") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the user's code raises is theirs
        where = user_frame(exc, own_file)
        raise TargetError(f"{where + ': ' if where else ''}{what} raised {describe_exception(exc)}") from None


def _syntax_error_position(exc: SyntaxError, own_file: str | None) -> str:
    """`path:line:column` of the error in a file; for source compiled from a string
    (`<string>`), where the user's code compiled it."""
    if exc.filename and not exc.filename.startswith("<"):
        return f"{shown(exc.filename)}:{exc.lineno}" + (f":{exc.offset}" if exc.offset else "")
    return user_frame(exc, own_file) or f"line {exc.lineno}"


# ======================================================================================
# TARGET


def _is_file_target(location: str) -> bool:
    return location.endswith(".py") or os.sep in location or (os.altsep or os.sep) in location


def target_file(target: str) -> str | None:
    """The file of a `file.py:callable` TARGET (None for a module TARGET)."""
    location = target.rpartition(":")[0]
    return location if location and _is_file_target(location) else None


def load_target(target: str, weights: str | None = None) -> torch.nn.Module:
    location, sep, attr = target.rpartition(":")
    if not sep or not location or not attr:
        raise TargetError(f"TARGET must be `package.module:callable` or `file.py:callable`, got {target!r}")
    if _is_file_target(location):
        module, own_file = _import_file(location), location
    else:
        module = _import_module(location)
        own_file = getattr(module, "__file__", None)
    if not hasattr(module, attr):
        raise TargetError(f"{location} has no attribute {attr!r}")
    model = _build(getattr(module, attr), attr, own_file)
    if not isinstance(model, torch.nn.Module):
        raise TargetError(f"{target} returned {type(model).__name__}, not an nn.Module")
    _check_has_python_forward(model, target)
    if weights:
        load_weights(model, weights)
    return model


def _import_file(location: str):
    if os.path.isdir(location):
        raise TargetError(f"{location}: is a folder; TARGET names a Python file and a callable in it")
    if not os.path.isfile(location):
        raise TargetError(f"{location}: no such file")
    name = "_untrace_target_" + os.path.splitext(os.path.basename(location))[0]
    # an explicit source loader: the file is Python whatever its name ends with
    loader = importlib.machinery.SourceFileLoader(name, location)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    sys.modules[name] = module
    directory = os.path.dirname(os.path.abspath(location))
    sys.path.insert(0, directory)
    try:
        with running_user_code(f"importing {location}", location):
            loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)  # as `import` does: no half-initialised module left
        raise
    finally:
        sys.path.remove(directory)
    return module


def _import_module(location: str):
    with running_user_code(f"importing {location}"):
        try:
            return importlib.import_module(location)
        except ModuleNotFoundError as exc:
            if exc.name and (location == exc.name or location.startswith(exc.name + ".")):
                raise TargetError(f"cannot import {location}: {exc}") from None
            raise  # a module the target imports is missing: the target's own mistake


def _build(factory, attr: str, own_file: str | None):
    """The module TARGET names: the object itself, or what calling it with no arguments gives."""
    if isinstance(factory, torch.nn.Module) or not callable(factory):
        return factory
    _check_takes_no_arguments(factory, attr)
    with running_user_code(f"calling {attr}()", own_file):
        return factory()


def _check_has_python_forward(model: torch.nn.Module, target: str) -> None:
    """untrace reads forward's Python source: a TorchScript module, or torch.compile's
    wrapper (whose forward takes *args), has none of the user's to read; nor has a module
    whose class defines no forward (nn.Module's placeholder takes *input and raises)."""
    if isinstance(model, torch.jit.ScriptModule):
        wrapper = "a TorchScript module (from torch.jit.script or torch.jit.trace)"
    elif type(model).__name__ == "OptimizedModule" and hasattr(model, "_orig_mod"):
        wrapper = "a torch.compile wrapper"
    else:
        wrapper = None
    if wrapper is not None:
        raise TargetError(f"{target} returned {wrapper}; untrace lowers forward from its Python source: "
                          "return the nn.Module itself")
    if type(model).forward is torch.nn.Module.forward:
        cls = type(model)
        where = _class_definition(cls)
        raise TargetError(f"{where + ': ' if where else ''}class {cls.__name__} has no forward method "
                          f"(TARGET {target}): define forward(self, ...) in it")


def _check_takes_no_arguments(factory, attr: str) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: let the call say
        return
    try:
        signature.bind()
    except TypeError:
        needed = [p.name for p in signature.parameters.values()
                  if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        where = _definition(factory)
        raise TargetError(
            f"{where + ': ' if where else ''}{attr} takes required arguments ({', '.join(needed)}), but untrace "
            "calls TARGET with none: name a function that builds the module with no arguments") from None


def _class_definition(cls: type) -> str | None:
    """`path:line` of a class statement."""
    try:
        return f"{shown(inspect.getsourcefile(cls))}:{inspect.getsourcelines(cls)[1]}"
    except (TypeError, OSError):
        return None


def _definition(obj) -> str | None:
    """`path:line` of the def of a function, or of a class's __init__."""
    function = obj.__init__ if isinstance(obj, type) else obj
    try:
        function = inspect.unwrap(function)
        return f"{shown(inspect.getsourcefile(function))}:{inspect.getsourcelines(function)[1]}"
    except (TypeError, OSError):
        return None


# ======================================================================================
# --weights


_SAVE_ONE = "untrace loads only those, saved with torch.save(model.state_dict(), PATH)"


def load_weights(model: torch.nn.Module, weights: str) -> None:
    state = read_state_dict(weights)
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError) as exc:
        raise TargetError(f"--weights {weights}: does not fit {type(model).__name__}: {_state_dict_errors(exc)}") from None


def read_state_dict(path: str) -> Mapping:
    """The state dict of the checkpoint at ``path``, read with weights_only=True. When torch
    refuses the file, its advice to retry with weights_only=False is not passed on: that
    runs arbitrary code, which untrace never does for a checkpoint."""
    if os.path.isdir(path):
        raise TargetError(f"--weights {path}: is a folder, not a checkpoint file")
    if not os.path.exists(path):
        raise TargetError(f"--weights {path}: no such file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's advice on pickle protocols: the error says what matters
            state = torch.load(path, map_location="cpu", weights_only=True)
    except OSError as exc:
        raise TargetError(f"--weights {path}: cannot read it: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - whatever torch.load refuses is the file's fault
        why = _why_refused(exc, path)
        raise TargetError(f"--weights {path}: not a plain state dict ({why}); {_SAVE_ONE}") from None
    if isinstance(state, Mapping) and isinstance(state.get("state_dict"), Mapping):
        state = state["state_dict"]
    if not isinstance(state, Mapping):
        raise TargetError(f"--weights {path}: holds a {type(state).__name__}, not a state dict; {_SAVE_ONE}")
    return state


def _why_refused(exc: Exception, path: str) -> str:
    if isinstance(exc, pickle.UnpicklingError):
        refused = _refused_by_weights_only(str(exc))
        if _written_by_torch_save(path):
            # torch.load read the checkpoint's format, and its weights-only unpickler
            # refused something in the pickle: a checkpoint, not a safe one to load
            return ("a PyTorch checkpoint holding what torch.load(weights_only=True) refuses"
                    + (f": {refused}" if refused else ""))
        return "it is not a PyTorch checkpoint"
    if isinstance(exc, EOFError):
        return "the file is empty or cut short"
    if isinstance(exc, RuntimeError) and "zip archive" in str(exc):
        return "it is not a PyTorch checkpoint, or one cut short"
    if isinstance(exc, RuntimeError) and zipfile.is_zipfile(path):
        return "a zip archive that torch.save did not write, such as an .npz file"
    return f"torch.load raised {describe_exception(exc)}"


# What torch's weights-only unpickler says it refused (torch/_weights_only_unpickler.py),
# as a phrase: "a pickled __main__.Net".
_REFUSALS = (
    (r"Unsupported global: GLOBAL (\S+) was not", "a pickled {0}"),
    (r"unsupported GLOBAL (\S+) whose module (\S+) is blocked", "{0}, from the module {1}, which torch blocks"),
    (r"Trying to call reduce for unrecognized function (.+?)(?: which belongs to|$)", "a call of {0}"),
    (r"Can only build .* but got <class '([^']+)'>", "an object of class {0}"),
    (r"Can only create new object .* but got <class '([^']+)'>", "an object of class {0}"),
    (r"(\S+) must be imported to load (.+)", "{1} (it needs {0} imported)"),
    (r"Unsupported operand (\d+)", "{opcode}"),
)


def _refused_by_weights_only(message: str) -> str | None:
    for pattern, phrase in _REFUSALS:
        found = re.search(pattern, message, re.MULTILINE)
        if found:
            groups = [group.strip("`").strip() for group in found.groups()]
            return _opcode(int(groups[0])) if phrase == "{opcode}" else phrase.format(*groups)
    return None


def _opcode(code: int) -> str:
    """A pickle opcode the weights-only unpickler does not read, and the protocol that
    brought it (torch.save writes protocol 2 unless given another pickle_protocol)."""
    op = pickletools.code2op.get(chr(code))
    if op is None:
        return f"pickle opcode {code}"
    default = torch.serialization.DEFAULT_PROTOCOL
    return f"the pickle opcode {op.name} (pickle protocol {op.proto}; torch.save writes protocol {default} by default)"


def _written_by_torch_save(path: str) -> bool:
    """Whether ``path`` is in a format torch.save writes: a zip archive (the default since
    torch 1.6), or the legacy format, which starts with a pickle of torch's magic
    number. That pickle is read by an unpickler that resolves no global at all, so it
    can run nothing."""
    if zipfile.is_zipfile(path):
        return True

    class _NoGlobals(pickle.Unpickler):
        def find_class(self, module, name):
            raise pickle.UnpicklingError(f"{module}.{name}")

    try:
        with open(path, "rb") as f:
            return _NoGlobals(f).load() == torch.serialization.MAGIC_NUMBER
    except Exception:  # noqa: BLE001 - anything else is not that pickle
        return False


def _state_dict_errors(exc: Exception) -> str:
    """Every missing, unexpected and mis-sized key of load_state_dict's message, on one line."""
    lines = [line.strip().rstrip(".").strip() for line in str(exc).splitlines()]
    lines = [line for line in lines if line and not line.startswith("Error(s) in loading state_dict")]
    return "; ".join(lines)
