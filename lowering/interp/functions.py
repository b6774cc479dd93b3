"""Calls into user code: a Python function's source, parsed, structured and annotated
once, then interpreted in a new frame; closures and lambdas defined in forward."""

from __future__ import annotations

import dataclasses
import inspect
import os
import sysconfig

import torch

from analyzer.analyses.engine.regions import annotate_regions
from analyzer.frontend import ParseError, ir
from analyzer.frontend.function_source import SourceFile
from analyzer.frontend.structure import structure_control_flow
from lowering.errors import LoweringError
from lowering.interp.values import Closure, Frame, ReturnSignal


_MAX_DEPTH = 64


def annotate_and_structure(fn: ir.FunctionDef) -> ir.FunctionDef:
    structured = structure_control_flow(fn)
    annotate_regions(structured)
    return structured


def _find_def(body, line: int, name: str):
    for s in body:
        if isinstance(s, ir.FunctionDef) and s.name == name and (
                s.span.line == line or any(d.span.line == line for d in s.decorators)):
            return s
        if isinstance(s, (ir.ClassDef, ir.FunctionDef)):
            found = _find_def(s.body, line, name)
            if found is not None:
                return found
        for block in ir.child_blocks(s):
            found = _find_def(block, line, name)
            if found is not None:
                return found
    # Decorated functions report the first decorator's line in co_firstlineno.
    return None


def _find_lambda(body, fn) -> ir.FunctionDef | None:
    """A lambda made outside forward (`self.act = lambda t: ...` in `__init__`) as a
    function: the one `lambda` on its first line with its parameters; None when that line
    has several such (which one made `fn` cannot be told)."""
    code = fn.__code__
    names = list(inspect.signature(fn).parameters)
    found = {}
    for stmt in ir.walk_statements(body, into_defs=True):
        for top in ir.child_expressions(stmt):
            for e in ir.walk_expression(top):
                if isinstance(e, ir.Lambda) and e.span.line == code.co_firstlineno and [p.name for p in e.params] == names:
                    found[id(e)] = e
    if len(found) != 1:
        return None
    (e,) = found.values()
    return ir.FunctionDef("<lambda>", e.params, [ir.Return(e.body, e.span)], span=e.span, qualname=fn.__qualname__)


_TORCH_DIR = os.path.join(os.path.dirname(torch.__file__), "")  # with the separator: not torchvision/
# Python's own library (inspect, dataclasses, collections, ...): run for real, never read.
_STDLIB_DIR = os.path.join(sysconfig.get_paths()["stdlib"], "")
_EXPORTDB_DIR = os.path.join(_TORCH_DIR, "_export", "db", "examples", "")

# Packages whose calls go to the op table or to Python itself, matched as whole package
# names: `torchvision`, `torchaudio`, `numpy_utils` are user code like any other.
_LIBRARY_PACKAGES = frozenset({"torch", "builtins", "math", "numpy", "onnx", "typing", "functools", "contextlib"})


def _is_user_function(fn) -> bool:
    """Code untrace interprets from source: Python functions and classes outside the
    libraries whose calls go to the op table (PyTorch's own ExportDB examples count as
    user code)."""
    if not (inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn)):
        return False
    try:
        path = inspect.getsourcefile(fn) or ""
    except TypeError:
        return False
    if path.startswith(_EXPORTDB_DIR):
        return True
    if is_stdlib_path(path):
        return False
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if path.startswith("<") or code is not None and code.co_filename.startswith("<"):
        return False  # frozen stdlib modules, generated code (a dataclass's __init__): no source to read
    package = (getattr(fn, "__module__", "") or "").partition(".")[0]
    return not path.startswith(_TORCH_DIR) and package not in _LIBRARY_PACKAGES


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set on classes made by a `class` statement


def _is_library_python(fn) -> bool:
    """Pure-Python library code that a call reaches with no lowering registered for it
    (torch's own, such as `torch.distributions.Transform.__init__`, which is no torch
    operator): interpreted from its source like the model's own code, so that only real
    operators need lowerings. Not: C functions and methods (no source), Python's own
    library (run as Python on static values), frozen or generated code, and the packages
    whose calls go to NumPy, ONNX or typing."""
    fn = getattr(fn, "__func__", fn)
    if not (inspect.isfunction(fn) or inspect.isclass(fn)):
        return False
    if inspect.isclass(fn) and not fn.__flags__ & _HEAP_TYPE:
        return False  # a class defined in C (torch.Size), whatever file its module has
    try:
        path = inspect.getsourcefile(fn) or ""
    except TypeError:
        return False
    code = getattr(fn, "__code__", None)
    if not path or path.startswith("<") or is_stdlib_path(path) or code is not None and code.co_filename.startswith("<"):
        return False
    package = (getattr(fn, "__module__", "") or "").partition(".")[0]
    return package not in _LIBRARY_PACKAGES - {"torch"}


def _same_state(g, old, new) -> bool:
    if old is new:
        return True
    if isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        return type(old) is type(new) and len(old) == len(new) and all(_same_state(g, a, b) for a, b in zip(old, new))
    if isinstance(old, torch.Tensor):
        t = g.const_value(new)
        return t is not None and t.dtype == old.dtype and t.shape == old.shape and bool(torch.equal(t, old.detach()))
    return False
def is_stdlib_path(path: str) -> bool:
    return path.startswith(_STDLIB_DIR) and "site-packages" not in path


@dataclasses.dataclass
class ReadSources:
    """The files read and the functions parsed, structured and annotated from them: shared
    by the lowerings of one export (a fork or a lazy set-up lowers forward again), which
    read the same files and only read the IR."""

    files: dict[str, SourceFile] = dataclasses.field(default_factory=dict)  # by path
    functions: dict = dataclasses.field(default_factory=dict)  # by (file, first line, name)


class UserCode:
    def function_ir(self, fn) -> tuple[ir.FunctionDef, str, dict]:
        """The structured, annotated IR of a Python function, its file and globals."""
        code = getattr(fn, "__code__", None)
        if code is None:
            raise self.error(f"cannot read the source of {fn!r}", "register a lowering for it (lowering.register_lowering)")
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        path = code.co_filename
        if key not in self._functions:
            source = self._sources.get(path)
            if source is None:
                try:
                    with open(path, "rb") as fh:
                        source = SourceFile(fh.read(), path)
                except OSError as exc:
                    raise self._unreadable(fn, path, exc) from None
                self._sources[path] = source
            found = source.function(code) if code.co_name != "<lambda>" else None  # its own lines, no whole parse
            if found is None and code.co_name == "<lambda>":
                try:
                    found = _find_lambda(source.module().body, fn)
                except ParseError as exc:
                    raise self._unreadable(fn, path, exc) from None
            if found is None:
                try:
                    module = source.module()
                except ParseError as exc:
                    raise self._unreadable(fn, path, exc) from None
                found = _find_def(module.body, code.co_firstlineno, code.co_name)
            if found is None and code.co_name == "<lambda>":
                raise self.error(f"cannot find the source of {fn.__qualname__} in {path}: line "
                                 f"{code.co_firstlineno} holds no lambda, or several, with its parameters",
                                 "write each lambda on its own line, or define the function with `def`")
            if found is None:
                raise self.error(f"cannot find the source of {fn.__qualname__} in {path}",
                                 "register a lowering for it (lowering.register_lowering)")
            structured = structure_control_flow(found)
            annotate_regions(structured)
            self._functions[key] = structured
        return self._functions[key], path, fn.__globals__

    def _unreadable(self, fn, path: str, exc: Exception):
        if isinstance(exc, ParseError):
            # the source is there but untrace will not read it (nested past its bound):
            # the place is the user's line, and the first way out is shallower code
            return LoweringError(f"cannot read the source of {fn.__qualname__}: {exc.message}", path=path,
                                 line=exc.line, hint="write it in shallower steps (name the intermediate "
                                 "results), or register a lowering for it (lowering.register_lowering)")
        return self.error(f"cannot read the source of {fn.__qualname__} in {path}: {exc}",
                          "register a lowering for it (lowering.register_lowering)")

    def leaves_state_unchanged(self, module: torch.nn.Module, name: str, value) -> bool:
        """Whether `module.name = value` in forward keeps the attribute as it was: the same
        object, or tensors equal in dtype, shape and values to the ones it held (a cache
        refreshed for the dtype and device it already has). Such an assignment is exact to
        skip; any other changes state that the next call would see."""
        if not hasattr(module, name) or (id(module), name) in self.attribute_writes:
            return False  # (an attribute forward assigned already is call-local: `module_attributes`)
        return _same_state(self.g, getattr(module, name), value)

    def call_python_function(self, fn, args: list, kwargs: dict, self_obj=None):
        fn_ir, path, globs = self.function_ir(fn)
        qualname = fn_ir.qualname
        if self.depth > _MAX_DEPTH:
            raise self.error(f"call depth over {_MAX_DEPTH} (recursion?) in {qualname}", construct="call",
                             hint="check for unbounded recursion; write the recursion as a loop")
        frame = Frame({}, globs, path, qualname, graph=id(self.g), function=fn)
        # Free variables of nested functions and decorator wrappers: their cells' contents.
        for name, cell in zip(fn.__code__.co_freevars, getattr(fn, "__closure__", None) or ()):
            try:
                frame.env[name] = cell.cell_contents
            except ValueError:
                continue
            self.mark_foreign(frame.env[name], name)  # a cell outlives the call
        self._bind_parameters(fn_ir, fn, args, kwargs, frame)
        frame.first_param = fn_ir.params[0].name if fn_ir.params else None
        if fn_ir.params and fn_ir.params[0].name == "self" and args:
            frame.self_obj = args[0]
        saved = self.location
        self.depth += 1
        try:
            return self.run_frame(fn_ir.body, frame)
        finally:
            self.depth -= 1
            self.location = saved

    def run_frame(self, body, frame: Frame):
        """Execute a function body in `frame`; its return value (None when it falls off)."""
        self.frames.append(frame)
        try:
            self.exec_block(body, frame)
        except ReturnSignal as ret:
            return ret.value
        finally:
            self.frames.pop()
        return None

    def _bind_parameters(self, fn_ir: ir.FunctionDef, fn, args, kwargs, frame: Frame):
        try:
            sig = inspect.signature(fn, follow_wrapped=False)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise self.error(f"cannot call {fn_ir.qualname}: {exc}", construct="call",
                                 hint="call it with the arguments its signature takes") from None
            bound.apply_defaults()
            for name, value in bound.arguments.items():
                param = sig.parameters[name]
                if param.kind is inspect.Parameter.VAR_POSITIONAL:
                    value = tuple(value)
                elif param.kind is inspect.Parameter.VAR_KEYWORD:
                    value = dict(value)
                elif value is param.default:
                    self.mark_foreign(value, f"the default of `{name}`")  # made once, shared by every call
                frame.env[name] = value
            return
        raise self.error(f"cannot bind the arguments of {fn_ir.qualname}", construct="call",
                         hint="call it with the arguments its signature takes")

    def call_closure(self, closure: Closure, args, kwargs):
        fn = closure.fn
        # Free variables are read when the function runs, from its defining frame as it is
        # now: inside an If branch or a Loop body, that frame's copy for the region.
        defining = self.current_view(closure.frame)
        frame = Frame(dict(defining.env), defining.globals, defining.path, fn.qualname, defining.self_obj,
                      defining.cls, graph=id(self.g), enclosing=closure.frame.root())
        params = fn.params
        positional = list(args)

        def default(p):
            if closure.defaults is not None and p.name in closure.defaults:
                return closure.defaults[p.name]
            return self.eval(p.default, closure.frame)

        for p in params:
            if p.kind in ("positional", "posonly"):
                if positional:
                    frame.env[p.name] = positional.pop(0)
                elif p.name in kwargs:
                    frame.env[p.name] = kwargs.pop(p.name)
                elif p.default is not None:
                    frame.env[p.name] = default(p)
                else:
                    raise self.error(f"missing argument {p.name} of {fn.qualname}", construct="call",
                                     hint="pass the missing argument")
            elif p.kind == "vararg":
                frame.env[p.name] = tuple(positional)
                positional = []
            elif p.kind == "kwonly":
                frame.env[p.name] = kwargs.pop(p.name) if p.name in kwargs else default(p)
            elif p.kind == "kwarg":
                frame.env[p.name] = dict(kwargs)
        return self.run_frame(fn.body, frame)
