"""The abstract interpreter that lowers `forward` source to ONNX, never calling it.

Every variable holds either a *known* Python value (constants, submodules,
parameters' owners, config, `None`, dtypes, tuples of those) or a *graph* value
(`lowering.graph.Value`). Statements are interpreted over the IR of the source
(`analyzer.frontend`, made structured by `structure_control_flow`, regions annotated
by `annotate_regions`):

- an `if` whose predicate is known picks its branch; a graph predicate emits an ONNX
  `If` whose outputs are the region's results (assigned in either branch ∩ live after);
- a loop over a known iterable unrolls; `range(graph_int)` emits a `Loop` with a trip
  count, a `while` on a graph predicate a `Loop` with a condition; carried values are
  the region's carried set; `list.append` in a graph loop becomes a scan output;
- calls go to the op table (`lowering.ops`), to user code (interpreted from its own
  source, recursively), or are evaluated for real when they are pure Python on known
  values (`math.sqrt(4)`, `isinstance`, `range(3)`).

What it cannot lower faithfully raises `LoweringError` with file:line and a way out.
"""

from __future__ import annotations

import builtins
import dataclasses
import inspect
import math
import operator
import sys
from typing import Any

import numpy as np
import torch

from analyzer.analyses.regions import annotate_regions
from analyzer.frontend import ParseError, expr_text, ir, parse_module
from analyzer.frontend.structure import RETVAL, structure_control_flow
from lowering.aliasing import SELF_ALIAS_OPS, VIEW_OPS, Aliases, is_basic_index, is_in_place
from lowering.errors import LoweringError
from lowering.graph import GraphBuilder, Value
from lowering import numpy_arrays
from lowering.numpy_arrays import NDArray, NumpyMethod
from lowering.ops import registry
from lowering.seeded_random import DRAWS as _RANDOM_DRAWS, SeededGenerators

MAX_UNROLL = 10_000
_MAX_DEPTH = 64

_BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
           "@": "matmul", "&": "and_", "|": "or_", "^": "xor", "<<": "lshift", ">>": "rshift"}
_CMPOPS = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}
_PY_BIN = {k: getattr(operator, v) for k, v in _BINOPS.items()}
_PY_CMP = {k: getattr(operator, v) for k, v in _CMPOPS.items()}

# Pure functions safe to run for real on known arguments.
_PURE_MODULES = ("math", "operator", "builtins", "functools", "itertools", "numbers", "collections", "typing", "enum",
                 "contextlib")
# Pure restructuring of containers, safe to run for real even with graph values as leaves.
_PURE_WITH_GRAPH = {"torch.utils._pytree.tree_flatten", "torch.utils._pytree.tree_unflatten",
                    "torch.utils._pytree.tree_map", "torch.utils._pytree.tree_leaves"}
# Runtime checks on data: the exported graph drops them, as torch.onnx does.
_RUNTIME_CHECKS = {"torch._check", "torch._check_is_size", "torch._assert", "torch._check_with"}
_PURE_TORCH = {"torch.is_tensor", "torch.jit.is_scripting", "torch.jit.is_tracing", "torch.onnx.is_in_onnx_export",
               "torch.is_grad_enabled", "torch.get_default_dtype", "torch.finfo", "torch.iinfo", "torch.device",
               "torch.is_floating_point", "torch.compiler.is_compiling", "torch._assert", "torch._check",
               "torch.promote_types", "torch.Size"}


@dataclasses.dataclass
class Stacked:
    """The scan output of a graph loop: `value[i]` is what iteration i appended (only
    where `valid[i]`, when the append was conditional)."""

    value: Value
    valid: Value | None = None


@dataclasses.dataclass
class Maybe:
    """A list element appended under a data-dependent `if`: present where `valid`."""

    value: Any
    valid: Any


@dataclasses.dataclass
class GraphRange:
    """`range(start, stop, step)` with graph bounds: iterated by an ONNX Loop."""

    start: Any
    stop: Any
    step: Any


@dataclasses.dataclass
class GraphChoice:
    """`options[index]` with a graph index (a ModuleList indexed by data)."""

    options: list
    index: Value


_SEQUENCE_OPS = {"torch.stack", "torch.cat", "torch.concat", "torch.concatenate", "torch.tensor", "torch.as_tensor"}
_ValuesIndices = __import__("collections").namedtuple("return_types", ["values", "indices"])
_VALUES_INDICES = {"topk", "sort", "max", "min", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin"}


@dataclasses.dataclass
class BoundUserMethod:
    obj: Any
    function: Any  # a Python function object


@dataclasses.dataclass
class TensorMethod:
    value: Value
    name: str


@dataclasses.dataclass
class Closure:
    fn: ir.FunctionDef
    frame: "Frame"


class _Missing:
    def __repr__(self) -> str:
        return "<unbound>"


MISSING = _Missing()


class _ShapeChanges(Exception):
    """A loop-carried value's shape differs between iterations: redo with free dims."""


class ReturnSignal(Exception):
    def __init__(self, value):
        self.value = value


@dataclasses.dataclass
class Frame:
    env: dict
    globals: dict
    path: str
    qualname: str
    self_obj: Any = None
    cls: Any = None
    graph: int = 0  # id of the builder this frame's code emits into (alias updates stay inside it)


class Interpreter:
    def __init__(self, root: torch.nn.Module, graph: GraphBuilder):
        self.root = root
        self.g = graph
        self.module_paths = {id(m): name for name, m in root.named_modules()}
        self.tensor_names: dict[int, str] = {}
        for name, p in root.named_parameters(remove_duplicate=False):
            self.tensor_names.setdefault(id(p), name)
        for name, b in root.named_buffers(remove_duplicate=False):
            self.tensor_names.setdefault(id(b), name)
        self._sources: dict[str, ir.Module] = {}
        self._functions: dict[Any, ir.FunctionDef] = {}
        self.depth = 0
        self.location: tuple[str, int] = ("<unknown>", 0)
        self.frames: list[Frame] = []  # active frames, for in-place updates of aliases
        self.probes_enabled = False
        self._probes: dict[int, list[tuple[str, Value]]] = {}  # id(builder) -> (key, 1-d int64)
        self.generators = SeededGenerators()  # torch.Generator()s made by forward: draws are constants
        self.aliases = Aliases()  # which values share memory; which an in-place update left stale
        # Graph values that are Python numbers in eager (sizes, len(), int(t)): `n += 1` rebinds them.
        self.python_numbers: set[Value] = set()
        self._state_values: set[Value] = set()  # parameters and buffers (initializers)

    # ================================================================ entry

    def call_forward(self, module: torch.nn.Module, args: list, kwargs: dict):
        fn = getattr(type(module), "forward")
        return self.call_python_function(fn, [module, *args], kwargs)

    # ================================================================ sources

    def function_ir(self, fn) -> tuple[ir.FunctionDef, str, dict]:
        """The structured, annotated IR of a Python function, its file and globals."""
        code = getattr(fn, "__code__", None)
        if code is None:
            raise self.error(f"cannot read the source of {fn!r}", "register a lowering for it (lowering.register_lowering)")
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        path = code.co_filename
        if key not in self._functions:
            module = self._sources.get(path)
            if module is None:
                try:
                    with open(path, "rb") as fh:
                        module = parse_module(fh.read(), path)
                except (OSError, ParseError) as exc:
                    raise self.error(f"cannot read the source of {fn.__qualname__} in {path}: {exc}",
                                     "register a lowering for it (lowering.register_lowering)") from None
                self._sources[path] = module
            found = _find_def(module.body, code.co_firstlineno, code.co_name)
            if found is None:
                raise self.error(f"cannot find the source of {fn.__qualname__} in {path}",
                                 "register a lowering for it (lowering.register_lowering)")
            structured = structure_control_flow(found)
            annotate_regions(structured)
            self._functions[key] = structured
        return self._functions[key], path, fn.__globals__

    # ================================================================ errors

    def error(self, message: str, hint: str | None = None, construct: str | None = None) -> LoweringError:
        path, line = self.location
        return LoweringError(message, path=path, line=line, construct=construct,
                             hint=hint or "rewrite it with torch.where / torch.cond, register a lowering "
                                          "(lowering.register_lowering), or script it")

    # ================================================================ calls into user code

    def call_python_function(self, fn, args: list, kwargs: dict, self_obj=None):
        fn_ir, path, globs = self.function_ir(fn)
        qualname = fn_ir.qualname
        if self.depth > _MAX_DEPTH:
            raise self.error(f"call depth over {_MAX_DEPTH} (recursion?) in {qualname}", construct="call")
        frame = Frame({}, globs, path, qualname, graph=id(self.g))
        # Free variables of nested functions and decorator wrappers: their cells' contents.
        for name, cell in zip(fn.__code__.co_freevars, getattr(fn, "__closure__", None) or ()):
            try:
                frame.env[name] = cell.cell_contents
            except ValueError:
                pass
        self._bind_parameters(fn_ir, fn, args, kwargs, frame)
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
                raise self.error(f"cannot call {fn_ir.qualname}: {exc}", construct="call") from None
            bound.apply_defaults()
            for name, value in bound.arguments.items():
                param = sig.parameters[name]
                if param.kind is inspect.Parameter.VAR_POSITIONAL:
                    value = tuple(value)
                elif param.kind is inspect.Parameter.VAR_KEYWORD:
                    value = dict(value)
                frame.env[name] = value
            return
        raise self.error(f"cannot bind the arguments of {fn_ir.qualname}", construct="call")

    # ================================================================ statements

    def exec_block(self, stmts, frame: Frame) -> None:
        for s in stmts:
            self.exec_stmt(s, frame)

    def exec_stmt(self, s, frame: Frame) -> None:
        self.location = (frame.path, s.span.line)
        with self.g.location(frame.path, s.span.line):
            method = getattr(self, "_stmt_" + type(s).__name__, None)
            if method is None:
                raise self.error(f"`{type(s).__name__}` statements are not supported in forward", construct=type(s).__name__)
            method(s, frame)

    def _stmt_Pass(self, s, frame):
        pass

    def _stmt_Assign(self, s, frame):
        value = self.eval(s.value, frame)
        for t in s.targets:
            self.assign(t, value, frame)

    def _stmt_AugAssign(self, s, frame):
        if isinstance(s.target, ir.Subscript):
            base = self.eval(s.target.value, frame)
            if isinstance(base, NDArray):
                raise self._numpy_in_place(expr_text(s.target.value))
            index = self.eval(s.target.index, frame)
            current = self.subscript(base, index)
            self.setitem(s.target, base, index, self.binop(s.op, current, self.eval(s.value, frame)), frame)
            return
        current = self.eval(s.target, frame)
        if isinstance(current, NDArray):
            raise self._numpy_in_place(expr_text(s.target))
        operand = self.eval(s.value, frame)
        in_place = f"operator.i{_BINOPS[s.op]}"
        tensor = isinstance(current, Value) and current not in self.python_numbers
        if tensor and registry.lookup(in_place, self.g.opset):
            value = self.call_op(in_place, [current, operand], {})  # keeps the tensor's dtype, as torch does
        else:
            value = self.binop(s.op, current, operand)
        if isinstance(current, list) and not isinstance(value, Value):
            current[:] = value  # list += keeps identity, as in Python
            value = current
        if tensor:
            self.update_aliases(current, value, expr_text(s.target))  # `x += 1` on a tensor is in place
        self.assign(s.target, value, frame)

    def _stmt_ExprStmt(self, s, frame):
        self.eval(s.value, frame)

    def _stmt_Return(self, s, frame):
        raise ReturnSignal(self.eval(s.value, frame) if s.value is not None else None)

    def _stmt_Raise(self, s, frame):
        raise self.error(f"`raise {expr_text(s.exc)}` is reached at export time for these inputs",
                         "the inputs given to export take a path that raises; check the shapes and arguments",
                         construct="raise")

    def _stmt_Assert(self, s, frame):
        test = self.test_value(self.eval(s.test, frame))
        if isinstance(test, Value):
            return  # a runtime check on data: dropped, as torch.onnx does with torch._assert
        if not test:
            raise self.error(f"assertion `{expr_text(s.test)}` fails for the export inputs", construct="assert")

    def _stmt_Import(self, s, frame):
        import importlib

        for name, asname in s.names:
            if s.module is None:
                mod = importlib.import_module(name)
                frame.env[asname or name.split(".")[0]] = mod if asname else importlib.import_module(name.split(".")[0])
            else:
                package = frame.globals.get("__package__")
                mod = importlib.import_module(("." * s.level) + s.module, package) if s.level else importlib.import_module(s.module)
                frame.env[asname or name] = getattr(mod, name)

    def _stmt_FunctionDef(self, s, frame):
        frame.env[s.name] = Closure(annotate_and_structure(s), frame)

    def _stmt_Global(self, s, frame):
        pass

    def _stmt_Nonlocal(self, s, frame):
        pass

    def _stmt_Delete(self, s, frame):
        for t in s.targets:
            if isinstance(t, ir.Name):
                frame.env.pop(t.id, None)

    def _stmt_With(self, s, frame):
        for ctx, target in s.items:
            value = self.eval(ctx, frame)
            if not _is_harmless_context(value):
                raise self.error(f"`with {expr_text(ctx)}` is not supported", construct="with")
            if target is not None:
                self.assign(target, None, frame)
        self.exec_block(s.body, frame)

    def _stmt_If(self, s, frame):
        test = self.test_value(self.eval(s.test, frame))
        if isinstance(test, Value):
            self.emit_if(s, test, frame)
        elif self.truth(test):
            self.exec_block(s.body, frame)
        else:
            self.exec_block(s.orelse, frame)

    def _stmt_Loop(self, s, frame):
        if s.kind == "for":
            iterable = self.eval(s.iter, frame)
            if isinstance(iterable, GraphRange):
                self.emit_loop(s, frame, trip=iterable)
                return
            if isinstance(iterable, Value) and iterable.rank and isinstance(self.g.size(iterable, 0), Value):
                # Rows of a dynamic first axis: a Loop that gathers row i.
                self.emit_loop(s, frame, trip=GraphRange(0, self.g.size(iterable, 0), 1), rows=iterable)
                return
            try:
                items = list(self.iterate(iterable))
            except TypeError:
                raise self.error(f"cannot iterate over {type(iterable).__name__}", construct="for") from None
            for item in items:
                self.assign(s.target, item, frame)
                self.exec_block(s.body, frame)
            self.exec_block(s.orelse, frame)
            return
        for _ in range(MAX_UNROLL):
            test = self.test_value(self.eval(s.test, frame))
            if isinstance(test, Value):
                self.emit_loop(s, frame, cond=test)
                return
            if not self.truth(test):
                self.exec_block(s.orelse, frame)
                return
            self.exec_block(s.body, frame)
        raise self.error(f"`while` loop ran {MAX_UNROLL} times at export time", construct="while")

    def iterate(self, iterable):
        if isinstance(iterable, NDArray):
            raise self.error("iterating over a NumPy array of tensor data is not supported by untrace",
                             "iterate over the tensor", construct="for")
        if isinstance(iterable, Value):
            return iter(self.unpack(iterable, 0, True))  # rows of a static first axis
        if isinstance(iterable, torch.nn.ModuleDict):
            return iter(iterable.keys())
        if isinstance(iterable, dict):
            return iter(iterable.keys())
        return iter(iterable)

    # ================================================================ assignment

    def assign(self, target, value, frame: Frame) -> None:
        if isinstance(target, ir.Name):
            frame.env[target.id] = value
        elif isinstance(target, (ir.Tuple, ir.List)):
            items = self.unpack(value, len(target.elts), any(isinstance(e, ir.Starred) for e in target.elts))
            star = next((i for i, e in enumerate(target.elts) if isinstance(e, ir.Starred)), None)
            if star is None:
                if len(items) != len(target.elts):
                    raise self.error(f"cannot unpack {len(items)} values into {len(target.elts)}", construct="assign")
                for t, v in zip(target.elts, items):
                    self.assign(t, v, frame)
            else:
                after = len(target.elts) - star - 1
                for t, v in zip(target.elts[:star], items[:star]):
                    self.assign(t, v, frame)
                self.assign(target.elts[star].value, list(items[star:len(items) - after]), frame)
                for t, v in zip(target.elts[star + 1:], items[len(items) - after:]):
                    self.assign(t, v, frame)
        elif isinstance(target, ir.Subscript):
            base = self.eval(target.value, frame)
            index = self.eval(target.index, frame)
            self.setitem(target, base, index, value, frame)
        elif isinstance(target, ir.Attribute):
            owner = self.eval(target.value, frame)
            if isinstance(owner, torch.nn.Module):
                raise self.error(f"assigning `{expr_text(target)}` in forward changes the module's state",
                                 "keep per-call state in local variables", construct="assign")
            raise self.error(f"cannot assign to `{expr_text(target)}`", construct="assign")
        else:
            raise self.error(f"cannot assign to `{expr_text(target)}`", construct="assign")

    def unpack(self, value, n: int, starred: bool) -> list:
        if isinstance(value, NDArray):
            raise self.error("unpacking a NumPy array of tensor data is not supported by untrace", construct="unpack")
        if isinstance(value, Value):
            if value.rank is None or value.rank == 0:
                raise self.error("cannot unpack a tensor of unknown rank", construct="unpack")
            size = self.g.size(value, 0)
            if isinstance(size, Value):
                if starred:
                    return [Stacked(value)]  # list(t) / t.unbind(0) over a dynamic axis: its rows
                raise self.error("unpacking a tensor along a dynamic dimension into names", construct="unpack")
            return list(self.call_op("Tensor.unbind", [value], {}))
        if isinstance(value, Stacked):
            raise self.error("unpacking the list built by a graph loop", "stack it with torch.stack", construct="unpack")
        try:
            return list(value)
        except TypeError:
            raise self.error(f"cannot unpack {type(value).__name__}", construct="unpack") from None

    def _numpy_in_place(self, name: str) -> LoweringError:
        return self.error(f"in-place update of the NumPy array `{name}`: it may share memory with a tensor, which "
                          "untrace does not track", f"update out of place (`{name} = {name} + ...`, np.where)",
                          construct="numpy")

    def setitem(self, target, base, index, value, frame):
        if isinstance(base, NDArray):
            raise self._numpy_in_place(expr_text(target.value))
        if isinstance(base, Value):
            new = self.call_op("operator.setitem", [base, index, value], {})
            if isinstance(target.value, ir.Name):
                self.update_aliases(base, new, expr_text(target.value))
                frame.env[target.value.id] = new
                return
            raise self.error(f"index assignment into `{expr_text(target.value)}`: only into a variable",
                             "assign the tensor to a local name first", construct="setitem")
        if isinstance(base, (list, dict)):
            base[index] = value
            return
        raise self.error(f"cannot assign into {type(base).__name__}", construct="setitem")

    # ================================================================ expressions

    def eval(self, e, frame: Frame):
        method = getattr(self, "_ev_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"expression `{expr_text(e)}` is not supported", construct=type(e).__name__)
        return method(e, frame)

    def _ev_Const(self, e, frame):
        return e.value

    def _ev_FormattedString(self, e, frame):
        return "".join(str(self.eval(v, frame)) for v in e.values)

    def _ev_Name(self, e, frame):
        if e.id in frame.env:
            value = frame.env[e.id]
            if self.aliases.stale or self.aliases.active_loops:
                self.check_read(e.id, value)
            return value
        if e.id in frame.globals:
            return frame.globals[e.id]
        if hasattr(builtins, e.id):
            return getattr(builtins, e.id)
        raise self.error(f"name `{e.id}` is not defined here", construct="name")

    def _ev_Tuple(self, e, frame):
        return tuple(self._elements(e.elts, frame))

    def _ev_List(self, e, frame):
        return list(self._elements(e.elts, frame))

    def _ev_Set(self, e, frame):
        return set(self._elements(e.elts, frame))

    def _elements(self, elts, frame):
        out = []
        for x in elts:
            if isinstance(x, ir.Starred):
                out.extend(self.unpack(self.eval(x.value, frame), 0, True))
            else:
                out.append(self.eval(x, frame))
        return out

    def _ev_Dict(self, e, frame):
        out = {}
        for k, v in e.items:
            if k is None:
                out.update(self.eval(v, frame))
            else:
                out[self.eval(k, frame)] = self.eval(v, frame)
        return out

    def _ev_Slice(self, e, frame):
        return slice(*(self.eval(x, frame) if x is not None else None for x in (e.lower, e.upper, e.step)))

    def _ev_Starred(self, e, frame):
        return self.eval(e.value, frame)

    def _ev_NamedExpr(self, e, frame):
        value = self.eval(e.value, frame)
        frame.env[e.target.id] = value
        return value

    def _ev_Lambda(self, e, frame):
        fn = ir.FunctionDef("<lambda>", e.params, [ir.Return(e.body, e.span)], span=e.span, qualname="<lambda>")
        return Closure(fn, frame)

    def _ev_IfExp(self, e, frame):
        test = self.test_value(self.eval(e.test, frame))
        if isinstance(test, Value):
            # Lazy, like Python: each side is evaluated only in its own If branch.
            return self.graph_choice(test, lambda: self.eval(e.body, frame), lambda: self.eval(e.orelse, frame),
                                     "ifexp", e.span.line)
        return self.eval(e.body, frame) if self.truth(test) else self.eval(e.orelse, frame)

    def _ev_BoolOp(self, e, frame):
        result = self.test_value(self.eval(e.values[0], frame))
        for sub in e.values[1:]:
            if isinstance(result, Value):
                other = self.test_value(self.eval(sub, frame))
                op = "torch.logical_and" if e.op == "and" else "torch.logical_or"
                result = self.call_op(op, [self.to_bool(result), self.to_bool(other)], {})
                continue
            if (e.op == "and") != bool(self.truth(result)):
                return result
            result = self.test_value(self.eval(sub, frame))
        return result

    def test_value(self, v):
        """A predicate's value: a NumPy array's truth is its tensor's (one element)."""
        return v.value if isinstance(v, NDArray) else v

    def _ev_UnaryOp(self, e, frame):
        v = self.eval(e.operand, frame)
        if isinstance(v, NDArray):
            if e.op != "not":
                return numpy_arrays.unary(self, e.op, v)
            v = v.value
        if isinstance(v, Value):
            if e.op == "not":
                return self.call_op("torch.logical_not", [self.to_bool(v)], {})
            name = {"-": "operator.neg", "+": "operator.pos", "~": "operator.invert"}[e.op]
            return self.call_op(name, [v], {})
        if e.op == "not":
            return not self.truth(v)
        return {"-": operator.neg, "+": operator.pos, "~": operator.invert}[e.op](v)

    def _ev_Compare(self, e, frame):
        left = self.eval(e.left, frame)
        result = None
        for op, comp in zip(e.ops, e.comparators):
            right = self.eval(comp, frame)
            if op in ("is", "is not"):
                r = left is right
                r = r if op == "is" else not r
            elif op in ("in", "not in"):
                if isinstance(left, (Value, NDArray)) or isinstance(right, (Value, NDArray)):
                    raise self.error("`in` on tensors is not supported", construct="compare")
                r = (left in right) if op == "in" else (left not in right)
            else:
                r = self.compare(op, left, right)
            result = r if result is None else self._and(result, r)
            left = right
        return result

    def _and(self, a, b):
        a, b = self.test_value(a), self.test_value(b)
        if isinstance(a, Value) or isinstance(b, Value):
            return self.call_op("torch.logical_and", [self.to_bool(a), self.to_bool(b)], {})
        return a and b

    def compare(self, op, a, b):
        if isinstance(a, NDArray) or isinstance(b, NDArray):
            return numpy_arrays.compare(self, op, a, b)
        if isinstance(a, Value) or isinstance(b, Value):
            return self.call_op(f"operator.{_CMPOPS[op]}", [a, b], {})
        return _PY_CMP[op](a, b)

    def _ev_BinOp(self, e, frame):
        return self.binop(e.op, self.eval(e.left, frame), self.eval(e.right, frame))

    def binop(self, op, a, b):
        if isinstance(a, NDArray) or isinstance(b, NDArray):
            return numpy_arrays.binop(self, op, a, b)
        if isinstance(a, Value) or isinstance(b, Value):
            result = self.call_op(f"operator.{_BINOPS[op]}", [a, b], {})
            if all(x in self.python_numbers if isinstance(x, Value) else isinstance(x, (int, float)) for x in (a, b)):
                self.python_number(result)
            return result
        return _PY_BIN[op](a, b)

    def _ev_Attribute(self, e, frame):
        return self.attribute(self.eval(e.value, frame), e.attr)

    def attribute(self, base, attr: str):
        if isinstance(base, NDArray):
            return numpy_arrays.attribute(self, base, attr)
        if isinstance(base, Value):
            if attr == "shape":
                return self.shape(base)
            if attr == "ndim":
                return self._rank(base)
            if attr == "dtype":
                return base.dtype
            if attr == "device":
                return torch.device("cpu")
            if attr in ("is_cuda", "requires_grad", "is_sparse", "is_quantized"):
                return False
            if attr in ("T", "mT"):
                return self.call_op("Tensor.t" if attr == "T" and base.rank == 2 else "Tensor.mT", [base], {})
            if attr == "data":
                return base
            return TensorMethod(base, attr)
        if isinstance(base, torch.Tensor):
            base = self.tensor_constant(base)
            return self.attribute(base, attr)
        try:
            value = getattr(base, attr)
        except AttributeError:
            raise self.error(f"`{type(base).__name__}` has no attribute `{attr}`", construct="attribute") from None
        if isinstance(value, torch.Tensor) and not isinstance(base, type):
            return self.tensor_constant(value, owner=base, attr=attr)
        if inspect.ismethod(value) and _is_user_function(value.__func__):
            return BoundUserMethod(value.__self__, value.__func__)
        return value

    def tensor_constant(self, t: torch.Tensor, owner=None, attr: str | None = None) -> Value:
        name = self.tensor_names.get(id(t))
        if name is None and owner is not None and attr is not None:
            prefix = self.module_paths.get(id(owner))
            name = f"{prefix}.{attr}" if prefix else attr
            self.tensor_names[id(t)] = name
        if name is None:
            return self.g.const(t.detach())
        value = self.g.initializer(name, t.detach())
        self._state_values.add(value)
        return value

    def shape(self, v: Value) -> tuple:
        if v.rank is None:
            raise self.error("the rank of this tensor is unknown at export time", construct="shape")
        return tuple(self.python_number(self.g.size(v, d)) for d in range(v.rank))

    def python_number(self, v):
        """Note that graph value `v` stands for a Python int/float of eager code."""
        if isinstance(v, Value):
            self.python_numbers.add(v)
        return v

    def _rank(self, v: Value) -> int:
        if v.rank is None:
            raise self.error("the rank of this tensor is unknown at export time", construct="shape")
        return v.rank

    def _ev_Subscript(self, e, frame):
        return self.subscript(self.eval(e.value, frame), self.eval(e.index, frame))

    def subscript(self, base, index):
        if isinstance(base, torch.Tensor):
            base = self.tensor_constant(base)
        if isinstance(base, NDArray):
            return numpy_arrays.getitem(self, base, index)
        if isinstance(base, Value):
            if any(isinstance(p, NDArray) for p in (index if isinstance(index, tuple) else (index,))):
                raise self.error("indexing a tensor with a NumPy array is not supported by untrace",
                                 "convert it with torch.from_numpy first", construct="subscript")
            return self.call_op("operator.getitem", [base, index], {})
        if isinstance(base, Stacked):
            raise self.error("indexing the list built by a graph loop", "stack it with torch.stack first",
                             construct="subscript")
        if isinstance(index, Value):
            if isinstance(base, (list, tuple)) and all(isinstance(x, (int, float, bool)) for x in base):
                return self.call_op("operator.getitem", [self.g.const(list(base)), index], {})
            if isinstance(base, (torch.nn.ModuleList, torch.nn.Sequential, list, tuple)) and len(base) > 0:
                return GraphChoice(list(base), index)
            raise self.error("indexing a Python container with a tensor value", construct="subscript")
        return base[index]

    def _ev_Comprehension(self, e, frame):
        inner = Frame(dict(frame.env), frame.globals, frame.path, frame.qualname, frame.self_obj, frame.cls)
        results = []

        def run(level):
            if level == len(e.generators):
                if e.kind == "dict":
                    results.append((self.eval(e.key, inner), self.eval(e.elt, inner)))
                else:
                    results.append(self.eval(e.elt, inner))
                return
            gen = e.generators[level]
            iterable = self.eval(gen.iter, inner)
            rows = _rows_of(iterable, self)
            if rows is not None and e.kind in ("list", "generator") and len(e.generators) == 1 and not gen.ifs:
                # [f(row) for row in t] over a dynamic axis: a Loop whose scan output is the list.
                results.append(self.map_rows(rows, lambda row: (self.assign(gen.target, row, inner),
                                                                self.eval(e.elt, inner))[1]))
                return
            if isinstance(iterable, (Value, GraphRange)):
                raise self.error("a comprehension over a tensor or a graph-sized range", construct="comprehension")
            for item in list(self.iterate(iterable)):
                self.assign(gen.target, item, inner)
                if all(self.static_truth(self.eval(c, inner), "comprehension filter") for c in gen.ifs):
                    run(level + 1)

        run(0)
        if e.kind == "list":
            return results
        if e.kind == "set":
            return set(results)
        if e.kind == "dict":
            return dict(results)
        return results  # a generator consumed once behaves as its list

    def static_truth(self, v, what: str) -> bool:
        if isinstance(v, Value):
            raise self.error(f"a {what} on tensor values", construct=what)
        return self.truth(v)

    def truth(self, v) -> bool:
        if isinstance(v, torch.Tensor):
            raise self.error("the truth value of a tensor constant", construct="bool")
        return bool(v)

    def _ev_Call(self, e, frame):
        func = self.eval(e.func, frame)
        args, kwargs = [], {}
        for a in e.args:
            v = self.eval(a.value, frame)
            if a.star == "*":
                args.extend(self.unpack(v, 0, True))
            elif a.star == "**":
                kwargs.update(v)
            elif a.keyword is not None:
                kwargs[a.keyword] = v
            else:
                args.append(v)
        # `lst.append(v)` etc. mutate known lists in place.
        return self.call(func, args, kwargs)

    # ================================================================ calls

    def call(self, func, args, kwargs):
        if isinstance(func, NumpyMethod):
            return numpy_arrays.call_method(self, func, args, kwargs)
        if numpy_arrays.is_numpy_callable(func):
            return numpy_arrays.call_function(self, func, args, kwargs)
        if isinstance(func, TensorMethod):
            return self.tensor_method(func.value, func.name, args, kwargs)
        if isinstance(func, GraphChoice):
            return self.call_choice(func, 0, args, kwargs)
        if isinstance(func, BoundUserMethod):
            return self.call_python_function(func.function, [func.obj, *args], kwargs)
        if isinstance(func, Closure):
            return self.call_closure(func, args, kwargs)
        if isinstance(func, torch.nn.Module):
            return self.call_module(func, args, kwargs)
        if inspect.isclass(func) and issubclass(func, torch.nn.Module):
            raise self.error(f"creating a module ({func.__name__}) inside forward", "create it in __init__", construct="call")
        if inspect.isclass(func) and _is_user_function(func) and func.__init__ is object.__init__ and not args and not kwargs:
            return func()  # a plain user object with no constructor code
        if inspect.ismethod(func) and _is_user_function(func.__func__):
            return self.call_python_function(func.__func__, [func.__self__, *args], kwargs)
        if inspect.ismethod(func) and getattr(func, "__name__", "") == "apply" and isinstance(func.__self__, type) \
                and issubclass(func.__self__, torch.autograd.Function):
            return self.call_python_function(func.__self__.forward, [_AutogradContext(), *args], kwargs)
        if func is torch.Generator:
            return self.generators.create(self, args, kwargs)
        if self.generators.is_method(func):
            return self.generators.call_method(self, func, args, kwargs)
        if getattr(func, "__module__", "") == "torch._higher_order_ops.map" and getattr(func, "__name__", "") == "map":
            return self.functional_map(args, kwargs)
        special = _BUILTIN_HANDLERS.get(func) if _hashable(func) else None
        if special is not None:
            return special(self, args, kwargs)
        owner = getattr(func, "__self__", None)
        if inspect.isbuiltin(func) and isinstance(owner, (list, dict, set, str, tuple, bytes)):
            return func(*args, **kwargs)  # list.append, dict.get, str.format ...
        name = registry.canonical_name(func) if callable(func) else None
        if name is not None:
            if name in ("torch.cond",):
                return self.torch_cond(args, kwargs)
            if name in numpy_arrays.TO_TORCH and args and isinstance(args[0], (NDArray, np.ndarray, np.generic)):
                return numpy_arrays.to_tensor(self, name, func, args, kwargs)
            if name in _RANDOM_DRAWS and kwargs.get("generator") is not None:
                return self.generators.draw(self, func, name, args, kwargs)
            if name in _RUNTIME_CHECKS and self._has_graph(args, kwargs):
                return None
            if name in _SEQUENCE_OPS and args and isinstance(args[0], (list, tuple)) and any(
                    isinstance(x, (Stacked, Maybe)) for x in args[0]):
                return self.sequence_op(name, list(args[0]), *args[1:], **kwargs)
            if name in _PURE_WITH_GRAPH:
                return func(*args, **kwargs)
            lowering = registry.lookup(name, self.g.opset)
            if lowering is not None and (self._has_graph(args, kwargs) or name.startswith(("torch.", "Tensor."))):
                return self.call_torch(name, func, args, kwargs)
            if not self._has_graph(args, kwargs) and self._is_pure(func, name):
                try:
                    return func(*args, **kwargs)
                except Exception as exc:
                    raise self.error(f"{name}(...) failed at export time: {exc}", construct="call") from None
            if lowering is not None:
                return self.call_torch(name, func, args, kwargs)
            if _is_user_function(func):
                return self.call_python_function(func, args, kwargs)
            raise self.error(f"no lowering for `{name}`",
                             f"register one with lowering.register_lowering({name!r}, fn), or rewrite with supported torch ops",
                             construct="call")
        raise self.error(f"cannot call {func!r}", construct="call")

    def _is_pure(self, func, name: str) -> bool:
        module = getattr(func, "__module__", None) or ""
        if name in _PURE_TORCH:
            return True
        return module.split(".")[0] in _PURE_MODULES or isinstance(func, type) and func in (int, float, bool, str, tuple, list, dict, set, slice, range)

    def _has_graph(self, args, kwargs) -> bool:
        return any(_contains_graph(a) for a in args) or any(_contains_graph(v) for v in kwargs.values())

    def call_op(self, name: str, args, kwargs):
        lowering = registry.lookup(name, self.g.opset)
        if lowering is None:
            raise self.error(f"no lowering for `{name}` at opset {self.g.opset}",
                             f"register one with lowering.register_lowering({name!r}, fn)", construct="call")
        args = [self._materialise(a) for a in args]
        kwargs = {k: self._materialise(v) for k, v in kwargs.items()}
        try:
            result = lowering(self.g, *args, **kwargs)
        except LoweringError as exc:
            if exc.path is None:
                exc.path, exc.line = self.location
            raise
        except TypeError as exc:
            raise self.error(f"{name}: {exc}", construct="call") from None
        result = self.track_results(name, args, kwargs, result)
        if type(result) is tuple and len(result) == 2 and name.rsplit(".", 1)[-1] in _VALUES_INDICES:
            return _ValuesIndices(*result)  # torch.return_types: .values / .indices
        return result

    def _materialise(self, v):
        """Turn real tensors into initializers/constants and loop scan lists into tensors
        before they reach an op lowering."""
        if isinstance(v, NDArray) or isinstance(v, (list, tuple)) and any(isinstance(x, NDArray) for x in v):
            raise self.error("a NumPy array passed to a torch operation is not supported by untrace",
                             "convert it with torch.from_numpy first", construct="call")
        if isinstance(v, torch.Tensor):
            return self.tensor_constant(v)
        if isinstance(v, np.generic) and not isinstance(v, np.void):
            return v.item()  # torch takes a NumPy scalar as the Python number it holds (weak dtype)
        if isinstance(v, Stacked):
            return v.value
        if isinstance(v, list) and any(isinstance(x, Stacked) for x in v):
            raise self.error("a list mixing a graph loop's appended values with others", construct="call")
        if isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            return type(v)(self._materialise(x) for x in v)
        return v

    def tensor_method(self, value: Value, name: str, args, kwargs):
        if name in ("size",):
            shape = self.shape(value)
            if args or "dim" in kwargs:
                d = args[0] if args else kwargs["dim"]
                return shape[d]
            return shape
        if name in ("dim", "ndimension"):
            return self._rank(value)
        if name in ("numel", "nelement"):
            return self.python_number(self.g.numel(value))
        if name == "item":
            # A one-element tensor -> 0-d (Reshape fails at run time otherwise, as item() does).
            number = value if value.rank == 0 else self.g.op("Reshape", value, self.g.shape_tensor([]))
            return self.python_number(self.fresh_copy(number) if number is value else number)
        if name == "tolist":
            return self.tolist(value)
        if name == "numpy":
            if args or set(kwargs) - {"force"}:
                raise self.error("`.numpy()` with these arguments", construct="numpy")
            return numpy_arrays.from_tensor(self, value, copy=False)  # the same memory as the tensor
        if name == "unbind" and value.rank:
            d = (args[0] if args else kwargs.get("dim", 0)) % value.rank
            if isinstance(self.g.size(value, d), Value):
                rows = value if d == 0 else self.call_op("torch.movedim", [value, d, 0], {})
                return [Stacked(rows)]
        if name in ("is_floating_point",):
            return value.dtype.is_floating_point
        if name == "get_device":
            return -1
        if name in ("append",):
            raise self.error("append on a tensor", construct="call")
        if f"Tensor.{name}" in _RANDOM_DRAWS and kwargs.get("generator") is not None:
            return self.generators.draw(self, getattr(torch.Tensor, name), f"Tensor.{name}", [value, *args], kwargs)
        result = self.call_op(f"Tensor.{name}", [value, *args], kwargs)
        if name.endswith("_") and not name.startswith("_") and isinstance(result, Value):
            self.update_aliases(value, result)  # x.add_(1): every name for x sees the update
        return result

    def call_torch(self, name: str, func, args, kwargs):
        """A torch function through the op table; `torch.relu_(x)`, `F.relu(x, inplace=True)`
        update their first argument in place."""
        result = self.call_op(name, args, kwargs)
        if args and isinstance(args[0], Value) and isinstance(result, Value) and (
                is_in_place(name) or _inplace_flag(func, args, kwargs)):
            self.update_aliases(args[0], result)
        return result

    def tolist(self, value: Value):
        """`.tolist()` of a tensor with a static shape: nested lists of 0-d graph values."""
        if value.rank == 0:
            return value
        if value.static_shape is None:
            raise self.error("`.tolist()` of a tensor whose shape is not known at export time",
                             "keep the value as a tensor", construct="tolist")
        return [self.tolist(row) for row in self.call_op("Tensor.unbind", [value], {})]

    def sequence_op(self, name: str, items: list, dim: int = 0, **kwargs):
        """torch.stack / torch.cat / torch.tensor over a list that a graph loop appended to:
        the loop's scan output (iterations on axis 0) moved into place."""
        dim = kwargs.pop("dim", dim)
        dtype = kwargs.pop("dtype", None)
        if name in ("torch.tensor", "torch.as_tensor"):
            name, dim = "torch.stack", 0
        parts, valids = [], []
        for item in items:
            valid = None
            if isinstance(item, Maybe):
                valid = self.call_op("Tensor.reshape", [self.to_bool(item.valid), [1]], {})
                item = item.value
            if isinstance(item, Stacked):
                v = item.value
                valid = item.valid
                if valid is not None and name != "torch.stack":
                    # Each iteration's piece spans `piece` positions along dim: repeat its flag.
                    piece = self.shape(v)[1 + dim % (v.rank - 1)]
                    steps = self.shape(v)[0]
                    grid = self.g.op("Expand", self.g.unsqueeze(self.to_bool_vector(valid), [1]),
                                     self.g.shape_tensor([steps, piece]))
                    valid = self.g.op("Reshape", grid, self.g.const([-1], dtype=torch.int64))
                if name == "torch.stack":
                    rank = v.rank
                    d = dim % rank
                    if d:
                        v = self.call_op("torch.movedim", [v, 0, d], {})
                else:
                    # cat of T pieces along d: move the iteration axis next to d and merge.
                    rank = v.rank - 1
                    d = dim % rank
                    v = self.call_op("torch.movedim", [v, 0, d], {})
                    shape = list(self.shape(v))
                    merged = self.binop("*", shape[d], shape[d + 1])
                    v = self.call_op("Tensor.reshape", [v, [*shape[:d], merged, *shape[d + 2:]]], {})
            else:
                v = self.as_graph(item)
                if name == "torch.stack":
                    v = self.call_op("torch.unsqueeze", [v, dim], {})
            parts.append(v)
            valids.append(valid)
        out = parts[0] if len(parts) == 1 else self.call_op("torch.cat", [parts], {"dim": dim})
        if any(v is not None for v in valids):
            masks = []
            for part, valid in zip(parts, valids):
                if valid is None:
                    valid = self.call_op("torch.ones", [[self.shape(part)[dim]]], {"dtype": torch.bool})
                masks.append(valid)
            mask = masks[0] if len(masks) == 1 else self.call_op("torch.cat", [masks], {"dim": 0})
            out = self.g.op("Compress", out, mask, axis=dim % out.rank)
        return self.g.cast(out, dtype) if dtype is not None else out

    def to_bool_vector(self, v: Value) -> Value:
        return v if v.dtype == torch.bool else self.g.op("Cast", v, to=torch.bool)

    def update_aliases(self, old: Value, new: Value, updated: str | None = None) -> None:
        """An in-place update: every variable bound to the same tensor now holds `new`;
        every other value sharing its memory (views, its base) is stale from here on
        (`lowering.aliasing`)."""
        if new is old or not isinstance(new, Value):
            return
        updated = updated or self._name_of(old)
        if self.aliases.root(old) in self._state_values:
            raise self.error(f"in-place update of `{updated}`, a parameter or buffer (or a view of one), changes the "
                             "module's state: the next call would see it", "update a copy (`.clone()`) or out of "
                             "place", construct="inplace")
        for frame in self.frames:
            if frame.graph != id(self.g):
                continue  # a frame outside this If branch / Loop body keeps its value
            for name, bound in frame.env.items():
                if bound is old:
                    frame.env[name] = new
        read_before = self.aliases.mark_updated(old, new, updated, self.location[1], self.g)
        if read_before:
            name = self._name_of(read_before[0])
            raise self.error(
                f"in-place update of `{updated}` inside a graph loop, after `{name}`, which shares its memory, was "
                "read earlier in the loop body: from the second iteration on eager PyTorch reads the updated "
                "values there, which untrace does not track",
                f"take a copy before the loop (`{name} = {name}.clone()`), or update out of place "
                f"(`{updated} = {updated} + ...`)", construct="inplace")

    def track_results(self, name: str, args, kwargs, result, in_place: bool = False):
        """Record views; give a value the lowering handed out before a fresh Identity, unless
        eager PyTorch too returns the same tensor (`lowering.aliasing`)."""
        inputs = {id(v) for v in _graph_leaves((args, kwargs))}
        base = args[0] if args and isinstance(args[0], Value) else None
        view = base is not None and name in VIEW_OPS and (name != "operator.getitem" or is_basic_index(args[1]))
        keeps_self = in_place or name in SELF_ALIAS_OPS or is_in_place(name) or _inplace_flag(None, args, kwargs)

        def fresh(v):
            if not isinstance(v, Value):
                return v
            if id(v) in inputs and keeps_self and not view:
                return v
            if id(v) in inputs or v in self.aliases.handed_out:
                v = self.g.op("Identity", v)
            self.aliases.made(v, self.g)
            if view:
                self.aliases.add_view(v, base, self.location[1])
            return v

        if isinstance(result, Value):
            return fresh(result)
        if isinstance(result, (tuple, list)) and any(isinstance(v, Value) for v in result):
            items = [fresh(v) for v in result]
            return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
        return result

    def check_read(self, name: str, value) -> None:
        """Refuse to read a value that an in-place update left stale; note reads inside
        graph loops (see `Aliases.note_read`)."""
        for leaf in _graph_leaves(value):
            mark = self.aliases.staleness(leaf, self.g)
            if mark is not None:
                raise self._stale_error(name, leaf, mark, leaf is value)
            self.aliases.note_read(leaf, self.g)

    def _stale_error(self, name: str, leaf: Value, mark, direct: bool) -> LoweringError:
        made = self.aliases.view_line.get(leaf)
        if not direct:
            relation = f"`{name}` holds a tensor that shares its memory"
        elif mark.through_view:
            relation = f"the update went through a view of `{name}`"
        elif made is not None:
            relation = f"`{name}` is a view of it made at line {made}"
        else:
            relation = f"`{name}` shares its memory"
        return self.error(
            f"in-place update of `{mark.updated}` at line {mark.line} while `{name}` is live ({relation}): eager "
            f"PyTorch shows the update through `{name}`, which untrace does not track",
            f"take a copy before the update (`{name} = ....clone()`), or update out of place "
            f"(`{mark.updated} = {mark.updated} + ...` instead of `+=`, `.add_`, index assignment)",
            construct="inplace")

    def check_region_result(self, name: str, value, builder: GraphBuilder) -> None:
        """A value leaving an If branch or a Loop body must not be stale there."""
        for leaf in _graph_leaves(value):
            mark = self.aliases.staleness(leaf, builder)
            if mark is not None:
                raise self._stale_error(name, leaf, mark, False)

    def fresh_copy(self, v: Value) -> Value:
        """A copy of `v`: a value of its own, so that in-place updates do not alias it."""
        return self.track_results("copy", [v], {}, v)

    def _name_of(self, v: Value) -> str:
        for frame in reversed(self.frames):
            for name, bound in frame.env.items():
                if bound is v and not name.startswith("$"):
                    return name
        return "a tensor"

    def call_module(self, module: torch.nn.Module, args, kwargs):
        if type(module) is torch.nn.Sequential:
            value = args[0] if args else None
            for child in module:
                value = self.call_module(child, [value], {})
            return value
        name = registry.canonical_name(type(module))
        lowering = registry.lookup(name, self.g.opset) if name else None
        path = self.module_paths.get(id(module), "")
        if lowering is not None:
            call = registry.ModuleCall(module, path, self.g)
            args = [self._materialise(a) for a in args]
            kwargs = {k: self._materialise(v) for k, v in kwargs.items()}
            try:
                result = lowering(self.g, call, *args, **kwargs)
            except LoweringError as exc:
                if exc.path is None:
                    exc.path, exc.line = self.location
                raise
            in_place = getattr(module, "inplace", False) is True
            result = self.track_results(name, args, kwargs, result, in_place)
            if in_place and args and isinstance(args[0], Value) and isinstance(result, Value):
                self.update_aliases(args[0], result)  # nn.ReLU(inplace=True) and the like
            return result
        forward = type(module).forward
        if type(module).forward is torch.nn.Module.forward:
            raise self.error(f"{type(module).__name__} has no forward", construct="call")
        if not _is_user_function(forward):
            raise self.error(f"no lowering for module {name}",
                             f"register one with lowering.register_lowering({type(module).__name__}, fn)", construct="call")
        return self.call_python_function(forward, [module, *args], kwargs)

    def call_closure(self, closure: Closure, args, kwargs):
        fn = closure.fn
        frame = Frame(dict(closure.frame.env), closure.frame.globals, closure.frame.path, fn.qualname,
                      closure.frame.self_obj, closure.frame.cls, graph=id(self.g))
        params = fn.params
        positional = list(args)
        for p in params:
            if p.kind in ("positional", "posonly"):
                if positional:
                    frame.env[p.name] = positional.pop(0)
                elif p.name in kwargs:
                    frame.env[p.name] = kwargs.pop(p.name)
                elif p.default is not None:
                    frame.env[p.name] = self.eval(p.default, closure.frame)
                else:
                    raise self.error(f"missing argument {p.name} of {fn.qualname}", construct="call")
            elif p.kind == "vararg":
                frame.env[p.name] = tuple(positional)
                positional = []
            elif p.kind == "kwonly":
                frame.env[p.name] = kwargs.pop(p.name) if p.name in kwargs else self.eval(p.default, closure.frame)
            elif p.kind == "kwarg":
                frame.env[p.name] = dict(kwargs)
        return self.run_frame(fn.body, frame)

    def call_choice(self, choice: "GraphChoice", start: int, args, kwargs):
        """`modules[i](x)` with a graph index: an If chain over the candidates."""
        if start == len(choice.options) - 1:
            return self.call(choice.options[start], args, kwargs)
        is_this = self.call_op("operator.eq", [choice.index, start], {})
        return self.graph_choice(is_this, lambda: self.call(choice.options[start], args, kwargs),
                                 lambda: self.call_choice(choice, start + 1, args, kwargs), "if", self.location[1])

    def map_rows(self, rows: Value, fn) -> "Stacked":
        """fn over the rows of `rows` (dynamic first axis) in an ONNX Loop; the results
        stacked as a scan output."""
        body = self.g.subgraph()
        i = body.add_input(body.fresh("iter"), torch.int64, ())
        cond = body.add_input(body.fresh("cond"), torch.bool, ())
        saved, self.g = self.g, body
        try:
            out = self.as_graph(fn(self.call_op("operator.getitem", [rows, i], {})))
            body.add_output(cond)
            body.add_output(out, shape=_rank_only(out))
        finally:
            self.g = saved
        count = self.g.size(rows, 0)
        scan = self.g.op("Loop", count, self.g.const(True), outputs=1, body=body.build_graph())
        return Stacked(scan)

    def functional_map(self, args, kwargs):
        """functorch's map(f, xs, *args): f over the first axis of xs, results stacked."""
        fn, xs, *rest = args
        rows = self.unpack(xs, 0, True)
        results = [self.call(fn, [row, *rest], {}) for row in rows]
        return self.call_op("torch.stack", [results], {"dim": 0})

    def torch_cond(self, args, kwargs):
        pred, true_fn, false_fn, operands = (list(args) + [kwargs.get(k) for k in ("pred", "true_fn", "false_fn", "operands")][len(args):])[:4]
        operands = list(operands or ())
        if not isinstance(pred, Value):
            return self.call(true_fn if self.truth(pred) else false_fn, operands, {})
        return self.graph_choice(pred, lambda: self.call(true_fn, operands, {}), lambda: self.call(false_fn, operands, {}),
                                 "cond", self.location[1])

    def graph_choice(self, test: Value, then_fn, else_fn, construct: str, line: int):
        """An expression-level If (ternary, torch.cond): each side built in its branch."""
        cond = self.to_bool(test)
        results, graphs = [], []
        for fn in (then_fn, else_fn):
            sub = self.g.subgraph()
            saved, self.g = self.g, sub
            try:
                results.append(fn())
            finally:
                self.g = saved
            graphs.append(sub)
        flat_t, spec = _flatten(results[0])
        flat_f, spec_f = _flatten(results[1])
        self.check_region_result(construct, flat_t, graphs[0])
        self.check_region_result(construct, flat_f, graphs[1])
        if spec != spec_f:
            raise self.error(f"the two sides of this {construct} return different structures", construct=construct)
        if not _contains_graph(results[0]) and not _contains_graph(results[1]) and _same(results[0], results[1]):
            return results[0]
        for sub, flat, other in ((graphs[0], flat_t, flat_f), (graphs[1], flat_f, flat_t)):
            saved, self.g = self.g, sub
            try:
                for v, o in zip(flat, other):
                    bv = self._branch_value(v, o)
                    sub.add_output(bv, shape=_rank_only(bv))
            finally:
                self.g = saved
        probe_keys = self._branch_probes(graphs) if self.probes_enabled else []
        self.add_probe(f"probe|{self.location[0]}|{line}|{construct}|branch", cond)
        outs = self.g.op("If", cond, outputs=len(flat_t) + len(probe_keys),
                         then_branch=graphs[0].build_graph(), else_branch=graphs[1].build_graph())
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        for key, v in zip(probe_keys, outs[len(flat_t):]):
            self.add_probe(key, v)
        return _unflatten(spec, outs[:len(flat_t)])

    # ================================================================ graph helpers

    def to_bool(self, v) -> Value:
        """A 0-d bool graph value for `bool(v)`."""
        v = self.as_graph(v)
        if v.rank not in (0, None):
            if v.static_shape is not None and math.prod(v.static_shape) == 1:
                v = self.g.op("Reshape", v, self.g.shape_tensor([]))
            else:
                raise self.error("the truth value of a tensor with more than one element", construct="bool")
        if v.dtype != torch.bool:
            v = self.g.op("Cast", v, to=torch.bool)
        return v

    def as_graph(self, v) -> Value:
        if isinstance(v, Value):
            return v
        if isinstance(v, torch.Tensor):
            return self.tensor_constant(v)
        if isinstance(v, Stacked):
            return v.value
        if isinstance(v, (bool, int, float)) or (isinstance(v, (list, tuple)) and all(isinstance(x, (bool, int, float)) for x in v)):
            return self.g.const(v)
        raise self.error(f"a {type(v).__name__} where the graph needs a tensor", construct="value")

    # ================================================================ If

    def emit_if(self, s: ir.If, test: Value, frame: Frame):
        cond = self.to_bool(test)
        names = list(dict.fromkeys(list(s.results) + _mutated_containers(s, frame)))
        envs = []
        graphs = []
        for block in (s.body, s.orelse):
            sub = self.g.subgraph()
            branch = Frame(_copy_containers(frame.env), frame.globals, frame.path, frame.qualname, frame.self_obj,
                           frame.cls, graph=id(sub))
            saved, self.g = self.g, sub
            self.frames.append(branch)
            try:
                self.exec_block(block, branch)
            finally:
                self.frames.pop()
                self.g = saved
            envs.append(branch.env)
            graphs.append(sub)
        self.location = (frame.path, s.span.line)
        outputs = self._merge_branches(s, names, envs, graphs, frame)
        probe_keys = self._branch_probes(graphs) if self.probes_enabled else []
        if not s.synthetic:
            self.add_probe(self._probe_key(frame, s, "if", "branch"), cond)
        if not outputs and not probe_keys:
            return
        then_graph, else_graph = graphs
        n_results = sum(len(o[1][1]) for o in outputs)
        values = self.g.op("If", cond, outputs=n_results + len(probe_keys), then_branch=then_graph.build_graph(),
                           else_branch=else_graph.build_graph())
        values = values if isinstance(values, tuple) else (values,)
        for key, v in zip(probe_keys, values[n_results:]):
            self.add_probe(key, v)
        values = values[:n_results]
        for (name, spec, prefix), value in zip(outputs, _chunks(values, [len(o[1][1]) for o in outputs])):
            merged = _unflatten(spec[0], list(value))
            frame.env[name] = merged if prefix is None else prefix + merged

    def _branch_probes(self, graphs) -> list[str]:
        """Yield each branch's probes from the If; a side that never reaches a probe
        yields [-1] for it."""
        per_branch = [dict(self.take_probes(sub)) for sub in graphs]
        keys = list(dict.fromkeys(k for probes in per_branch for k in probes))
        lengths = {}
        for key in keys:
            sizes = {p[key].shape[0] if p[key].shape and isinstance(p[key].shape[0], int) else None
                     for p in per_branch if key in p}
            lengths[key] = sizes.pop() if len(sizes) == 1 else None
        for sub, probes in zip(graphs, per_branch):
            saved, self.g = self.g, sub
            try:
                for key in keys:
                    value = probes.get(key)
                    if value is None:
                        # Not reached on this side: -1 per entry the other side records, so a
                        # Loop's per-iteration probe vectors keep one length.
                        value = self.g.const([-1] * (lengths[key] or 1), dtype=torch.int64)
                    sub.add_output(value, shape=(lengths[key],))
            finally:
                self.g = saved
        return keys

    def _merge_branches(self, s, names, envs, graphs, frame):
        """Decide each result: equal known values stay known; the rest become If outputs."""
        outputs = []
        for name in names:
            a = envs[0].get(name, MISSING)
            b = envs[1].get(name, MISSING)
            if a is MISSING or b is MISSING:
                present = a if b is MISSING else b
                if name.startswith("$") or name == RETVAL:
                    pass
                elif a is MISSING and b is MISSING:
                    continue
                else:
                    side = "else" if a is not MISSING else "then"
                    raise self.error(
                        f"`{name}` is assigned on one side of this data-dependent `if` only, and used after it",
                        f"assign `{name}` on the {side} side too, before the `if`, or use torch.where",
                        construct="if")
            if not _contains_graph(a) and not _contains_graph(b) and _same(a, b):
                frame.env[name] = a
                continue
            before = frame.env.get(name, MISSING)
            prefix = None
            if type(a) is list and type(b) is list and type(before) is list and _starts_with(a, before) and _starts_with(b, before):
                # Only what each branch appended differs; a side that appended nothing
                # yields placeholders marked absent.
                prefix, a, b = list(before), a[len(before):], b[len(before):]
                if len(a) != len(b) and min(len(a), len(b)) == 0:
                    appended = a or b
                    present = [Maybe(x, True) for x in appended]
                    absent = [Maybe(MISSING, False) for _ in appended]
                    a, b = (present, absent) if a else (absent, present)
            flat_a, spec_a = _flatten(a)
            flat_b, spec_b = _flatten(b)
            if a is MISSING or a is None and name.startswith("$"):
                flat_a, spec_a = [MISSING] * len(flat_b), spec_b
            if b is MISSING or b is None and name.startswith("$"):
                flat_b, spec_b = [MISSING] * len(flat_a), spec_a
            if _spec_without_maybe(spec_a) == _spec_without_maybe(spec_b) and spec_a != spec_b:
                flat_a, spec_a, flat_b, spec_b = _align_maybe(a, b)
            if spec_a != spec_b:
                raise self.error(f"`{name}` has a different structure on the two sides of a data-dependent `if`"
                                 f" ({_describe(a)} vs {_describe(b)})", construct="if")
            for graph, flat in ((graphs[0], flat_a), (graphs[1], flat_b)):
                self.check_region_result(name, flat, graph)
            per_branch = []
            for graph, flat, other in ((graphs[0], flat_a, flat_b), (graphs[1], flat_b, flat_a)):
                saved, self.g = self.g, graph
                try:
                    per_branch.append([self._branch_value(self._placeholder(o) if v is MISSING else v, o)
                                       for v, o in zip(flat, other)])
                finally:
                    self.g = saved
            for graph, values, others in ((graphs[0], *per_branch), (graphs[1], per_branch[1], per_branch[0])):
                for bv, ov in zip(values, others):
                    # Declared shape: the dims both branches agree on (the If output's shape).
                    graph.add_output(bv, shape=_common_shape(bv, ov))
            outputs.append((name, (spec_a, flat_a), prefix))
        return outputs

    def _branch_value(self, v, other):
        """A branch output, cast to the dtype both branches agree on."""
        gv = self.as_graph(v)
        if not isinstance(other, Value) and not isinstance(other, _Missing) and isinstance(other, (bool, int, float)):
            target = self.g.result_type(gv, other) if isinstance(v, Value) else self.as_graph(other).dtype
            if isinstance(v, Value):
                target = v.dtype
            else:
                target = torch.result_type(torch.tensor(v), torch.tensor(other))
            return self.g.cast(gv, target)
        if isinstance(other, Value) and not isinstance(v, Value):
            return self.g.cast(gv, other.dtype)
        if isinstance(other, Value) and other.dtype != gv.dtype:
            raise self.error(f"a value is {gv.dtype} on one side of a data-dependent `if` and {other.dtype} on the other",
                             "cast both sides to one dtype", construct="if")
        return gv

    def _placeholder(self, other):
        """A value for a slot the branch never reaches (a `$retval` not yet set)."""
        ref = self.as_graph(other) if not isinstance(other, _Missing) else None
        if ref is None:
            return self.g.const(False)
        if ref.static_shape is not None and ref.static_shape:
            return self.g.op("ConstantOfShape", self.g.const(list(ref.static_shape), dtype=torch.int64),
                             value=_zero_tensor(ref.dtype), out_dtype=ref.dtype, out_shape=ref.static_shape)
        rank = ref.rank or 0
        return self.g.op("ConstantOfShape", self.g.const([0] * rank, dtype=torch.int64) if rank else self.g.shape_tensor([]),
                         value=_zero_tensor(ref.dtype), out_dtype=ref.dtype, out_shape=(0,) * rank if rank else ())

    # ================================================================ Loop

    def emit_loop(self, s: ir.Loop, frame: Frame, trip: GraphRange | None = None, cond: Value | None = None,
                  rows: Value | None = None):
        """First with carried values keeping their shapes before the loop; when an iteration
        changes a shape, again with every carried dim free."""
        try:
            return self._emit_loop(s, frame, trip, cond, rows, relaxed=False)
        except _ShapeChanges:
            return self._emit_loop(s, frame, trip, cond, rows, relaxed=True)

    def _emit_loop(self, s, frame, trip, cond, rows, relaxed: bool):
        mutated = _mutated_containers(s, frame)
        carried = list(dict.fromkeys([n for n in s.carried if n in frame.env or n.startswith("$")]
                                     + [n for n in mutated if isinstance(frame.env[n], Value)]))
        # Python lists that the body appends to become scan outputs.
        scans = [n for n in dict.fromkeys(carried + mutated) if isinstance(frame.env.get(n), list)]
        carried = [n for n in carried if n not in scans]
        for n in mutated:
            if n not in scans and isinstance(frame.env.get(n), dict):
                raise self.error(f"`{n}` (a dict) is changed inside a graph loop", construct="loop")
        for n in carried:
            if n not in frame.env:
                raise self.error(f"`{n}` is assigned in this loop and used after it, but is not set before it",
                                 f"initialise `{n}` before the loop", construct="loop")
        init = {n: frame.env[n] for n in carried}
        for n in carried:
            self.check_region_result(n, init[n], self.g)  # the loop reads them
        body = self.g.subgraph()
        self.aliases.enter_loop_body(body)
        self.aliases.active_loops += 1
        iter_num = body.add_input(body.fresh("iter"), torch.int64, ())
        cond_in = body.add_input(body.fresh("cond"), torch.bool, ())
        self.python_number(iter_num)
        inner = Frame(dict(frame.env), frame.globals, frame.path, frame.qualname, frame.self_obj, frame.cls,
                      graph=id(body))
        flat_init = {}
        for n in carried:
            flat, spec = _flatten(init[n])
            values = []
            for v in flat:
                gv = self.as_graph(v)
                shape = gv.shape if not relaxed else _rank_only(gv)
                carried_in = body.add_input(body.fresh(n.strip("$") or "v"), gv.dtype, shape)
                if isinstance(v, Value):
                    # The same tensor as before the loop: an in-place update in the body
                    # reaches the other names for it.
                    self.aliases.add_view(carried_in, v, None)
                    if v in self.python_numbers:
                        self.python_number(carried_in)
                self.aliases.made(carried_in, body)
                values.append(carried_in)
            flat_init[n] = (flat, spec)
            inner.env[n] = _unflatten(spec, values)
        scan_start = {n: len(frame.env[n]) for n in scans}
        for n in scans:
            inner.env[n] = list(frame.env[n])
        trips_in = body.add_input(body.fresh("trips"), torch.int64, ()) if self.probes_enabled else None
        saved, self.g = self.g, body
        self.frames.append(inner)
        try:
            if rows is not None:
                self.assign(s.target, self.call_op("operator.getitem", [rows, iter_num], {}), inner)
            elif trip is not None:
                index = iter_num
                if not (isinstance(trip.start, int) and trip.start == 0 and isinstance(trip.step, int) and trip.step == 1):
                    index = self.call_op("operator.add", [self.call_op("operator.mul", [iter_num, trip.step], {}), trip.start], {})
                self.assign(s.target, index, inner)
            self.exec_block(s.body, inner)
            if s.kind == "while":
                next_cond = self.eval(s.test, inner)
                next_cond = self.to_bool(next_cond) if isinstance(next_cond, Value) else self.as_graph(bool(self.truth(next_cond)))
            else:
                next_cond = cond_in
            body.add_output(next_cond)
            for n in carried:
                flat, spec = _flatten(inner.env.get(n, MISSING))
                self.check_region_result(n, flat, body)
                if spec != flat_init[n][1]:
                    raise self.error(f"`{n}` changes structure inside a graph loop", construct="loop")
                for v, v0 in zip(flat, flat_init[n][0]):
                    gv = self.as_graph(v)
                    g0 = self.as_graph(v0)
                    if gv.dtype != g0.dtype:
                        gv = self.g.cast(gv, g0.dtype) if not isinstance(v, Value) or _is_int_like(gv.dtype, g0.dtype) else gv
                    if gv.dtype != g0.dtype:
                        raise self.error(f"`{n}` changes dtype inside a graph loop ({g0.dtype} -> {gv.dtype})",
                                         construct="loop")
                    if not relaxed and gv.shape != g0.shape:
                        raise _ShapeChanges()
                    body.add_output(gv, shape=_rank_only(gv))
            if trips_in is not None:
                body.add_output(self.call_op("operator.add", [trips_in, 1], {}), shape=())
            scan_values = []
            scan_masks: dict[str, bool] = {}
            for n in scans:
                appended = inner.env[n][scan_start[n]:]
                if len(appended) != 1 or not isinstance(appended[0], (Value, Maybe, int, float)):
                    raise self.error(f"a graph loop must append exactly one tensor to `{n}` per iteration",
                                     construct="loop")
                item = appended[0]
                if isinstance(item, Maybe):
                    sv = self.as_graph(item.value)
                    valid = self.to_bool(item.valid)
                    body.add_output(sv, shape=_rank_only(sv))
                    body.add_output(valid, shape=())
                    scan_masks[n] = True
                else:
                    sv = self.as_graph(item)
                    body.add_output(sv, shape=_rank_only(sv))
                scan_values.append(sv)
            body_probes = self.take_probes(body)
            for _, pv in body_probes:
                body.add_output(pv, shape=(None,))
        finally:
            self.frames.pop()
            self.g = saved
            self.aliases.active_loops -= 1
        if trip is not None:
            count = self._trip_count(trip)
            cond0 = self.g.const(True)
        else:
            count = None
            cond0 = self.to_bool(cond)
        init_values = [self.as_graph(v) for n in carried for v in flat_init[n][0]]
        if trips_in is not None:
            init_values.append(self.g.const(0, dtype=torch.int64))
        n_out = len(init_values) + len(scans) + len(scan_masks) + len(body_probes)
        if n_out == 0:
            body.add_output(self.as_graph(0), shape=())  # ONNX wants at least one output
            n_out = 1
        outs = self.g.op("Loop", count, cond0, *init_values, outputs=n_out, body=body.build_graph())
        outs = outs if isinstance(outs, tuple) else (outs,)
        pos = 0
        for n in carried:
            k = len(flat_init[n][0])
            frame.env[n] = _unflatten(flat_init[n][1], list(outs[pos:pos + k]))
            pos += k
        if trips_in is not None:
            self.add_probe(self._probe_key(frame, s, s.kind, "trips"), outs[pos])
            pos += 1
        for n in scans:
            if scan_masks.get(n):
                frame.env[n] = frame.env[n][:scan_start[n]] + [Stacked(outs[pos], outs[pos + 1])]
                pos += 2
            else:
                frame.env[n] = frame.env[n][:scan_start[n]] + [Stacked(outs[pos])]
                pos += 1
        for key, _ in body_probes:
            self.add_probe(key, outs[pos])  # one entry per iteration, flattened
            pos += 1

    # ================================================================ probes

    def _probe_key(self, frame: Frame, node, construct: str, kind: str) -> str:
        return f"probe|{frame.path}|{node.span.line}|{construct}|{kind}"

    def add_probe(self, key: str, value: Value) -> None:
        """Record a coverage probe (`export(probes=True)`): a 1-d int64 vector in the
        current graph; taken out of If branches and Loop bodies by their emitters."""
        if not self.probes_enabled:
            return
        v = self.g.cast(value, torch.int64)
        v = self.g.op("Reshape", v, self.g.const([-1], dtype=torch.int64))
        self._probes.setdefault(id(self.g), []).append((key, v))

    def take_probes(self, builder: GraphBuilder) -> list[tuple[str, Value]]:
        """The probes recorded in `builder`, one 1-d vector per key (repeats concatenated)."""
        merged: dict[str, list[Value]] = {}
        for key, v in self._probes.pop(id(builder), []):
            merged.setdefault(key, []).append(v)
        saved, self.g = self.g, builder
        try:
            return [(k, vs[0] if len(vs) == 1 else self.g.op("Concat", *vs, axis=0)) for k, vs in merged.items()]
        finally:
            self.g = saved

    def _trip_count(self, r: GraphRange) -> Value:
        # ceil((stop - start) / step), at least 0.
        span = self.call_op("operator.sub", [r.stop, r.start], {}) if not (isinstance(r.start, int) and r.start == 0) else r.stop
        if not (isinstance(r.step, int) and r.step == 1):
            span = self.call_op("operator.floordiv", [self.call_op("operator.add", [span, self.call_op("operator.sub", [r.step, 1], {})], {}), r.step], {})
        span = self.g.cast(self.as_graph(span), torch.int64)
        return self.call_op("torch.clamp", [span], {"min": 0})


# ============================================================================ builtins


def _len(interp: Interpreter, args, kwargs):
    (x,) = args
    if isinstance(x, NDArray):
        if x.scalar or x.value.rank == 0:
            raise interp.error("len() of a 0-d NumPy array (eager raises)", construct="len")
        x = x.value
    if isinstance(x, Value):
        return interp.python_number(interp.g.size(x, 0))
    if isinstance(x, Stacked):
        return interp.python_number(interp.g.size(x.value, 0))
    return len(x)


def _range(interp: Interpreter, args, kwargs):
    if any(isinstance(a, Value) for a in args):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
        if isinstance(step, Value):
            raise interp.error("range() with a graph step", construct="range")
        return GraphRange(start, stop, step)
    return range(*args)


def _scalar(kind):
    def convert(interp: Interpreter, args, kwargs):
        x = args[0] if args else 0
        if isinstance(x, NDArray):
            x = x.value
        if isinstance(x, Value):
            # int(t) / float(t) of a graph value stays in the graph as a 0-d tensor.
            if kind is bool:
                return interp.to_bool(x)
            scalar = x
            if scalar.rank not in (0, None):
                scalar = interp.g.op("Reshape", scalar, interp.g.shape_tensor([]))
            number = interp.g.cast(scalar, torch.int64 if kind is int else torch.float32)
            # A new Python number, never the tensor itself (`t += 1` stays in place on t).
            return interp.python_number(interp.fresh_copy(number) if number is x else number)
        if isinstance(x, torch.Tensor):
            return kind(x)
        return kind(*args, **kwargs)

    return convert


def _minmax(kind):
    def pick(interp: Interpreter, args, kwargs):
        values = list(args[0]) if len(args) == 1 and not isinstance(args[0], Value) else list(args)
        if any(isinstance(v, Value) for v in values):
            op = "torch.maximum" if kind is max else "torch.minimum"
            out = values[0]
            for v in values[1:]:
                a, b = interp.as_graph(out), interp.as_graph(v)
                a, b = interp.g.promote(a, b)
                out = interp.call_op(op, [a, b], {})
            return out
        return kind(*args, **kwargs)

    return pick


def _isinstance(interp: Interpreter, args, kwargs):
    obj, classes = args
    if isinstance(obj, NDArray):
        return isinstance(np.ones(()) if not obj.scalar else np.float32(0), classes)
    if isinstance(obj, Value):
        classes = classes if isinstance(classes, tuple) else (classes,)
        return any(c is torch.Tensor or (isinstance(c, type) and issubclass(torch.Tensor, c)) for c in classes)
    return isinstance(obj, classes)


def _list(kind):
    def make(interp: Interpreter, args, kwargs):
        if args and isinstance(args[0], Value):
            return kind(interp.unpack(args[0], 0, True))
        if args and isinstance(args[0], Stacked):
            raise interp.error(f"{kind.__name__}() of a graph loop's appended values", construct="call")
        return kind(*args)

    return make


def _abs(interp: Interpreter, args, kwargs):
    if isinstance(args[0], NDArray):
        return interp.call(np.absolute, [args[0]], {})
    if isinstance(args[0], Value):
        return interp.call_op("torch.abs", [args[0]], {})
    return abs(args[0])



def _iterating(kind):
    def make(interp: Interpreter, args, kwargs):
        return kind(*[list(interp.iterate(a)) if isinstance(a, Value) else a for a in args], **kwargs)

    return make


def _sum(interp: Interpreter, args, kwargs):
    items = list(interp.iterate(args[0]))
    total = args[1] if len(args) > 1 else kwargs.get("start", 0)
    for item in items:
        total = interp.binop("+", total, item)
    return total


def _round(interp: Interpreter, args, kwargs):
    x = args[0]
    ndigits = args[1] if len(args) > 1 else kwargs.get("ndigits")
    if isinstance(x, Value):
        if ndigits is not None:
            raise interp.error("round(x, ndigits) of a graph value", construct="round")
        # Python's round() is round-half-even and returns an int, as ONNX Round does.
        return interp.g.cast(interp.call_op("torch.round", [interp.g.cast(x, torch.float32)], {}), torch.int64)
    return round(*args, **kwargs)


_BUILTIN_HANDLERS = {
    round: _round, sum: _sum, torch.sym_min: _minmax(min), torch.sym_max: _minmax(max),
    enumerate: _iterating(enumerate), zip: _iterating(zip), reversed: _iterating(reversed),
    len: _len, range: _range, int: _scalar(int), float: _scalar(float), bool: _scalar(bool),
    max: _minmax(max), min: _minmax(min), isinstance: _isinstance, list: _list(list), tuple: _list(tuple),
    abs: _abs,
}


# ============================================================================ helpers


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


_TORCH_DIR = __import__("os").path.dirname(torch.__file__)
_EXPORTDB_DIR = __import__("os").path.join(_TORCH_DIR, "_export", "db", "examples")


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
    module = getattr(fn, "__module__", "") or ""
    return not path.startswith(_TORCH_DIR) and not module.startswith(
        ("torch", "builtins", "math", "numpy", "onnx", "typing", "functools", "contextlib"))


class _AutogradContext:
    """`ctx` for an autograd.Function's forward: saving for backward does nothing here."""

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *args):
        pass

    def set_materialize_grads(self, value):
        pass


def _rows_of(iterable, interp) -> Value | None:
    """The tensor whose rows a value iterates over, when that axis is dynamic."""
    if isinstance(iterable, list) and len(iterable) == 1 and isinstance(iterable[0], Stacked) and iterable[0].valid is None:
        return iterable[0].value
    if isinstance(iterable, Value) and iterable.rank and isinstance(interp.g.size(iterable, 0), Value):
        return iterable
    return None


def _mutated_containers(stmt, frame: Frame) -> list[str]:
    """Lists, dicts and tensors that a region changes in place (`lst.append(v)`,
    `d[k] = v`, `t[i] = v`, `x.add_(1)`): they are region results (If outputs, Loop
    carried values) too, and each branch/body works on its own copy."""
    from analyzer.analyses.kinds import mutated_names

    return sorted(n for n in mutated_names(stmt) if isinstance(frame.env.get(n), (list, dict, Value)))


def _copy_containers(env: dict) -> dict:
    return {k: (list(v) if type(v) is list else dict(v) if type(v) is dict else v) for k, v in env.items()}


def _common_shape(a: Value, b: Value):
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        return _rank_only(a)
    return tuple(x if x == y and x is not None else None for x, y in zip(a.shape, b.shape))


def _rank_only(v: Value):
    """Declared shape of a region output: its rank, every dim free (shapes may differ
    between branches and iterations)."""
    return None if v.rank is None else (None,) * v.rank


def _graph_leaves(v, depth: int = 0):
    """The graph values inside a (nested) container."""
    if isinstance(v, Value):
        yield v
    elif isinstance(v, (list, tuple)) and depth < 8:
        for x in v:
            yield from _graph_leaves(x, depth + 1)
    elif isinstance(v, dict) and depth < 8:
        for x in v.values():
            yield from _graph_leaves(x, depth + 1)
    elif isinstance(v, (Maybe, Stacked, NDArray)):
        yield from _graph_leaves(v.value, depth + 1)
    elif dataclasses.is_dataclass(v) and not isinstance(v, type) and depth < 8:
        for field in dataclasses.fields(v):
            yield from _graph_leaves(getattr(v, field.name, None), depth + 1)


def _inplace_flag(func, args, kwargs) -> bool:
    """`inplace=True` given to an `F` function, by keyword or position."""
    if kwargs.get("inplace") is True:
        return True
    if func is None or not inspect.isfunction(func):
        return False
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return False
    return bound.arguments.get("inplace") is True


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _contains_graph(v) -> bool:
    if isinstance(v, (Value, Stacked, GraphRange, NDArray)):
        return True
    if isinstance(v, (list, tuple)):
        return any(_contains_graph(x) for x in v)
    if isinstance(v, dict):
        return any(_contains_graph(x) for x in v.values())
    return False


def _same(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float, bool, str, type(None), torch.dtype)):
        return a == b
    return False


def _flatten(v):
    """(leaves, structure) of nested tuples/lists/dicts; leaves are graph values or scalars."""
    if isinstance(v, Maybe):
        return [v.value, v.valid], ("maybe", ("leaf", "leaf"))
    if isinstance(v, NDArray):
        return [v.value], ("ndarray", ("leaf",) if not v.scalar else ("scalar",))
    if isinstance(v, (tuple, list)):
        leaves, specs = [], []
        for x in v:
            lv, sp = _flatten(x)
            leaves += lv
            specs.append(sp)
        return leaves, (type(v).__name__, tuple(specs))
    if isinstance(v, dict):
        leaves, specs = [], []
        for k in v:
            lv, sp = _flatten(v[k])
            leaves += lv
            specs.append((k, sp))
        return leaves, ("dict", tuple(specs))
    return [v], "leaf"


def _unflatten(spec, leaves: list):
    it = iter(leaves)

    def build(sp):
        if sp == "leaf":
            return next(it)
        kind, children = sp
        if kind == "dict":
            return {k: build(c) for k, c in children}
        if kind == "maybe":
            return Maybe(build(children[0]), build(children[1]))
        if kind == "ndarray":
            return NDArray(next(it), scalar=children == ("scalar",))
        items = [build(c) for c in children]
        return tuple(items) if kind == "tuple" else items

    return build(spec)


def _starts_with(items: list, prefix: list) -> bool:
    return len(items) >= len(prefix) and all(x is y for x, y in zip(items, prefix))


def _spec_without_maybe(spec):
    if spec == "leaf":
        return "leaf"
    kind, children = spec
    if kind == "maybe":
        return "leaf"
    if kind == "ndarray":
        return spec
    return kind, tuple(_spec_without_maybe(c) for c in children)


def _align_maybe(a, b):
    """Make list elements that are Maybe on one side Maybe on both (valid=True)."""
    def walk(x, y):
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and len(x) == len(y):
            pairs = [walk(p, q) for p, q in zip(x, y)]
            return type(x)(p for p, _ in pairs), type(y)(q for _, q in pairs)
        if isinstance(x, Maybe) and not isinstance(y, Maybe):
            return x, Maybe(y, True)
        if isinstance(y, Maybe) and not isinstance(x, Maybe):
            return Maybe(x, True), y
        return x, y

    a2, b2 = walk(a, b)
    fa, sa = _flatten(a2)
    fb, sb = _flatten(b2)
    return fa, sa, fb, sb


def _chunks(values, sizes):
    out, pos = [], 0
    for n in sizes:
        out.append(values[pos:pos + n])
        pos += n
    return out


def _describe(v) -> str:
    if isinstance(v, Value):
        return "a tensor"
    if v is MISSING:
        return "unbound"
    return repr(v) if isinstance(v, (int, float, bool, type(None), str)) else type(v).__name__


def _zero_tensor(dtype: torch.dtype):
    import onnx.numpy_helper
    import numpy as np

    return onnx.numpy_helper.from_array(np.zeros((1,), dtype=torch.empty((), dtype=dtype).numpy().dtype))


def _is_int_like(a, b) -> bool:
    return not a.is_floating_point and not b.is_floating_point


def _is_harmless_context(value) -> bool:
    name = type(value).__name__
    return name in ("no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "autocast", "nullcontext",
                    "_DecoratorContextManager") or value is None


_ = (sys,)
