"""Python semantics: statements, names, assignment, constants, operators, attributes,
subscripts, truth. One small method per IR node kind (`_stmt_<Kind>`, `_ev_<Kind>`), as
torch.fx's Interpreter has one per opcode; control flow is in `control_flow`, calls in
`torch_calls` and `functions`, containers in `containers`."""

from __future__ import annotations

import builtins
import inspect
import math
import operator

import torch

from analyzer.frontend import expr_text, ir
from lowering.errors import LoweringError
from lowering.graph import Value
from lowering import numpy_arrays
from lowering.numpy_arrays import NDArray
from lowering.ops import registry
from lowering.interp import complex_values
from lowering.interp.context_managers import context_decorated
from lowering.interp.values import ComplexPair
from lowering.interp.python_numbers import refuse_first_iteration_alias
from lowering.interp.python_state import _CONTAINERS, has_varying_items
from lowering.interp.functions import _is_user_function, annotate_and_structure
from lowering.interp.module_attributes import converts_itself
from lowering.interp.object_state import changes_module_tensors
from lowering.interp.output_calls import takes_a_message
from lowering.interp.values import (MISSING, BoundUserMethod, Closure, Frame, GraphChoice, ReturnSignal, Stacked,
                                    TensorMethod)


_BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
           "@": "matmul", "&": "and_", "|": "or_", "^": "xor", "<<": "lshift", ">>": "rshift"}


_PY_BIN = {k: getattr(operator, v) for k, v in _BINOPS.items()}

# Binary operators whose result is a float when an operand is (`//` and `%` too: Python's float floor division).
_FLOAT_RESULTS = ("+", "-", "*", "/", "//", "%", "**")


# Statements and expressions refused by name, with the way out (the conformance corpus
# holds an entry for each: tests/export/conformance).
_UNLOWERED_STATEMENTS = {
    "Match": ("a `match` statement is", "rewrite it with if / elif, or move it into a helper called with static "
                                        "values (run as Python at export time)"),
    "ClassDef": ("a `class` statement inside forward is", "define the class at module level"),
}
_UNLOWERED_EXPRESSIONS = {
    "yield": ("`yield` (a generator) in code untrace reads", "build and return a list; a generator helper called "
                                                            "with static values runs as Python at export time"),
    "await": ("`await`", "call the function without `async` / `await`"),
}


class PythonSemantics:
    def exec_block(self, stmts, frame: Frame) -> None:
        for s in stmts:
            self.exec_stmt(s, frame)

    def exec_stmt(self, s, frame: Frame) -> None:
        self.location = (frame.path, s.span.line)
        with self.g.location(frame.path, s.span.line):
            method = getattr(self, "_stmt_" + type(s).__name__, None)
            if method is None:
                what, hint = _UNLOWERED_STATEMENTS.get(type(s).__name__, (
                    f"`{type(s).__name__}` statements are", "move it out of forward, or rewrite it with supported "
                                                            "statements"))
                if isinstance(s, ir.Opaque):
                    what = f"a statement untrace does not model ({s.reason}) is"
                raise self.error(f"{what} not supported in forward", construct=type(s).__name__, hint=hint)
            method(s, frame)

    def _stmt_Pass(self, s, frame):
        pass

    def _stmt_Assign(self, s, frame):
        if converts_itself(s) and self.convert_module_attribute(s, frame):
            return  # `self.mean = self.mean.type_as(x)`: a fixed point, call-local (`module_attributes`)
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
            self.check_mutation(current, "+=")
            current[:] = value  # list += keeps identity, as in Python
            value = current
        if tensor:
            refuse_first_iteration_alias(self, current, expr_text(s.target))
            self.update_aliases(current, value, expr_text(s.target))  # `x += 1` on a tensor is in place
        self.assign(s.target, value, frame)

    def _stmt_ExprStmt(self, s, frame):
        self.eval(s.value, frame)

    def _stmt_Return(self, s, frame):
        raise ReturnSignal(self.eval(s.value, frame) if s.value is not None else None)

    def _stmt_Assert(self, s, frame):
        test = self.eval_test(s.test, frame)
        if isinstance(test, Value):
            return  # a runtime check on data: dropped, as torch.onnx does with torch._assert
        if not test:
            raise self.error(f"assertion `{expr_text(s.test)}` fails for the export inputs", construct="assert",
                             hint="export with inputs that pass the assertion")

    def _stmt_FunctionDef(self, s, frame):
        if s.is_async:
            raise self.error(f"`async def {s.name}` inside forward: a coroutine, which no graph runs",
                             "define it with `def`", construct="async def")
        defaults = {p.name: self.eval(p.default, frame) for p in s.params if p.default is not None}
        frame.env[s.name] = Closure(annotate_and_structure(s), frame, defaults)

    def _stmt_Global(self, s, frame):
        frame.global_names.update(s.names)

    def _stmt_Nonlocal(self, s, frame):
        frame.nonlocals.update(s.names)

    def _stmt_Delete(self, s, frame):
        for t in s.targets:
            if isinstance(t, ir.Name):
                frame.env.pop(t.id, None)
            elif isinstance(t, ir.Subscript):
                base = self.eval(t.value, frame)
                index = self.eval(t.index, frame)
                if not isinstance(base, (list, dict)) or isinstance(index, Value):
                    raise self.error(f"`del {expr_text(t)}` is not supported", "build a new list or dict without it",
                                     construct="del")
                self.check_mutation(base, "del")
                if has_varying_items(base):
                    raise self.refuse_varying_list(base, "`del`")
                try:
                    del base[index]
                except (KeyError, IndexError) as exc:
                    raise self.error(f"`del {expr_text(t)}` fails for the export inputs: {exc!r}", construct="del",
                                     hint="eager PyTorch raises here too for these inputs: fix the call")
            elif isinstance(t, ir.Attribute):
                owner = self.eval(t.value, frame)
                if isinstance(owner, torch.nn.Module):
                    raise self.error(f"`del {expr_text(t)}` in forward changes the module's state",
                                     "keep per-call state in local variables", construct="del")
                self.delete_attribute(owner, t.attr, expr_text(t))
            else:
                raise self.error(f"`del {expr_text(t)}` is not supported", construct="del",
                                 hint="rebind the name instead of deleting it")

    def assign(self, target, value, frame: Frame) -> None:
        if isinstance(target, ir.Name):
            if target.id in frame.nonlocals or target.id in frame.global_names:
                self.assign_outer(frame, target.id, value)
                return
            frame.env[target.id] = value
        elif isinstance(target, (ir.Tuple, ir.List)):
            items = self.unpack(value, len(target.elts), any(isinstance(e, ir.Starred) for e in target.elts))
            star = next((i for i, e in enumerate(target.elts) if isinstance(e, ir.Starred)), None)
            if star is None:
                if len(items) != len(target.elts):
                    raise self.error(f"cannot unpack {len(items)} values into {len(target.elts)}", construct="assign",
                                     hint="unpack into as many names as there are values")
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
            if isinstance(owner, Value) and target.attr == "data" and owner in self._state_values and \
                    isinstance(target.value, ir.Attribute):
                module = self.eval(target.value.value, frame)
                if isinstance(module, torch.nn.Module) and self.replace_parameter_data(
                        module, target.value.attr, owner, value, expr_text(target)):
                    return
            if isinstance(owner, Value):
                what = ("replaces the values of a parameter or buffer for later calls" if owner in self._state_values
                        else "changes a tensor in place")
                raise self.error(f"assigning `{expr_text(target)}` in forward {what}, which untrace does not lower",
                                 "compute the new tensor and use it directly (a functional call such as "
                                 "F.conv2d(x, weight, bias))", construct="assign")
            if isinstance(owner, torch.nn.Module) and self.leaves_state_unchanged(owner, target.attr, value):
                return  # `self.cell_anchors = [a.to(dtype) for a in self.cell_anchors]` of the same dtype
            if isinstance(owner, torch.nn.Module) and (changes_module_tensors(value) or self.cache_rebuilds) and \
                    id(owner) not in self.local_objects:  # (a module built in forward is an object of the call)
                # Tensors (and containers that may hold them) are call-local: `module_attributes`; so is a
                # cache's static key, as the tables it keys.
                self.assign_module_attribute(owner, target.attr, value, expr_text(target))
                return
            self.set_attribute(owner, target.attr, value, expr_text(target))  # journaled: `object_state`
        else:
            raise self.error(f"cannot assign to `{expr_text(target)}`", construct="assign",
                             hint="assign to a name, an index or an attribute")

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
            if isinstance(base, dict):
                self.check_key(base, index)
                if self.memoize(base, index, value):
                    return
            self.check_mutation(base, "index assignment")
            self.check_key(base, index)
            if has_varying_items(base):
                raise self.refuse_varying_list(base, "index assignment")
            base[index] = value
            return
        raise self.error(f"cannot assign into {type(base).__name__}", construct="setitem",
                         hint="assign into a list, dict or tensor variable")

    def eval(self, e, frame: Frame):
        method = getattr(self, "_ev_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"expression `{expr_text(e)}` is not supported", construct=type(e).__name__,
                             hint="rewrite the expression with supported constructs (calls, operators, comprehensions)")
        return method(e, frame)

    def _ev_OpaqueExpr(self, e, frame):
        what, hint = _UNLOWERED_EXPRESSIONS.get(e.reason, (f"the expression `{expr_text(e)}`", "rewrite the "
                                                           "expression with supported constructs"))
        raise self.error(f"{what} is not supported by untrace", hint, construct=e.reason)

    def _ev_Const(self, e, frame):
        return e.value

    def _ev_FormattedString(self, e, frame):
        if e.template is None:
            raise self.error("an f-string untrace cannot build (a format spec with expressions in it, or an f-string "
                             "in a concatenation)", "build the string with str.format or + instead",
                             construct="f-string")
        out = []
        for part in e.template:
            if isinstance(part, str):
                out.append(part)
                continue
            index, conversion, spec = part
            value = self.eval(e.values[index], frame)
            if isinstance(value, Value) and not self.building_message:
                # its text would be the graph value's name, not the number eager prints
                raise self.error(f"an f-string of a tensor value (`{expr_text(e.values[index])}`) outside a message: "
                                 "its text is known only at run time", "keep the value as a tensor; an f-string of "
                                 "a tensor is lowered only as the message of an exception, a warning or a log "
                                 "call, where it names the value", construct="f-string")
            value = {"r": repr, "s": str, "a": ascii}[conversion](value) if conversion else value
            out.append(format(value, spec) if not isinstance(value, Value) else str(value))
        return "".join(out)

    def _ev_Name(self, e, frame):
        if e.id in frame.env:
            value = frame.env[e.id]
            if self.aliases.stale or self.aliases.active_loops:
                self.check_read(e.id, value)
            return value
        if e.id in frame.globals:
            value = frame.globals[e.id]
            self.mark_foreign(value, e.id)
            return value
        if hasattr(builtins, e.id):
            return getattr(builtins, e.id)
        raise self.error(f"name `{e.id}` is not defined here", construct="name",
                         hint="define the name before forward uses it (eager raises NameError here)")

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

    def _ev_BoolOp(self, e, frame):
        """`a or b` is `a` when `bool(a)` else `b` (`and` the converse): one of the values,
        not their truth. Where `bool(a)` is data, the graph chooses the value (`value_choice`)."""
        return self._bool_op(e, frame, truth_only=False)

    def eval_test(self, e, frame):
        """The truth of a predicate (`if`, `while`, ternary, `assert`, filter, `not`): of
        `a or b` it is `bool(a) or bool(b)` whatever values `a` and `b` are, a graph bool
        when either is data."""
        if not isinstance(e, ir.BoolOp):
            return self.test_value(self.eval(e, frame))
        return self._bool_op(e, frame, truth_only=True)

    def _bool_op(self, e, frame, truth_only: bool):
        """Python's short circuit over the operands; with `truth_only`, their truth values."""
        evaluate = self.eval_test if truth_only else self.eval
        result = evaluate(e.values[0], frame)
        for sub in e.values[1:]:
            truth = result if truth_only else self.test_value(result)
            if not isinstance(truth, Value):
                if (e.op == "and") != bool(self.truth(truth)):
                    return result
                result = evaluate(sub, frame)
                continue
            # Eager runs `sub` only when `truth` lets it: the names it binds are merged.
            runs = self.to_bool(truth)
            if e.op == "or":
                runs = self.call_op("torch.logical_not", [runs], {})
            before, snapshot = dict(frame.env), self.state_snapshot(frame)
            other = evaluate(sub, frame)
            self.check_state_kept(snapshot, f"`{e.op}`", e.span.line)
            self.merge_conditional_names(frame, before, runs, f"the right side of this `{e.op}`")
            result = self._joined(e, truth, result, other, truth_only)
        return result

    def _joined(self, e, truth: Value, result, other, truth_only: bool):
        """`result or other` (`and`) where the truth of `result` is the graph's."""
        if isinstance(other, bool) and (truth_only or isinstance(result, Value) and result.dtype == torch.bool
                                        and not result.rank):
            # `b and False` is False and `b or True` is True whatever the bool `b`;
            # `b and True`, `b or False` are `b`: what eager gets, a Python bool where it is one.
            return other if other is (e.op == "or") else result
        if truth_only:
            op = "torch.logical_and" if e.op == "and" else "torch.logical_or"
            return self.call_op(op, [self.to_bool(result), self.to_bool(other)], {})
        if has_varying_items(result) or has_varying_items(other):
            raise self.refuse_varying_list(result if has_varying_items(result) else other,
                                           f"the value of a data-dependent `{e.op}`")
        taken, skipped = (result, other) if e.op == "or" else (other, result)
        return self.value_choice(truth, taken, skipped, e.op, e.span.line)

    def test_value(self, v):
        """A predicate's value: a NumPy array's truth is its tensor's (one element); a list
        a graph region appended to is true when its graph length is not 0."""
        if has_varying_items(v):
            return self.compare(">", self.list_length(v), 0)
        if isinstance(v, Value) and v in self._state_values and v.static_shape is not None and \
                math.prod(v.static_shape) == 1:
            # A one-element parameter or buffer, read as it is (`if self.initted:`): an
            # initializer, so the graph's `If` would test a constant. Its value at export is
            # the branch every call of the graph takes; writes to it are refused, so eager
            # keeps it too.
            return bool(self.g.root._init_tensors[v.name])
        return v.value if isinstance(v, NDArray) else v

    def _ev_UnaryOp(self, e, frame):
        if e.op == "not":
            v = self.eval_test(e.operand, frame)
            if isinstance(v, Value):
                return self.call_op("torch.logical_not", [self.to_bool(v)], {})
            return not self.truth(v)
        v = self.eval(e.operand, frame)
        if isinstance(v, ComplexPair):
            if e.op != "-":
                raise complex_values.refuse(self, f"`{e.op}`")
            return complex_values.negate(self, v)
        if isinstance(v, NDArray):
            return numpy_arrays.unary(self, e.op, v)
        if isinstance(v, Value):
            name = {"-": "operator.neg", "+": "operator.pos", "~": "operator.invert"}[e.op]
            return self.call_op(name, [v], {})
        return {"-": operator.neg, "+": operator.pos, "~": operator.invert}[e.op](v)

    def _ev_BinOp(self, e, frame):
        return self.binop(e.op, self.eval(e.left, frame), self.eval(e.right, frame))

    def binop(self, op, a, b):
        if isinstance(a, ComplexPair) or isinstance(b, ComplexPair):
            return complex_values.binop(self, op, a, b)
        if isinstance(a, NDArray) or isinstance(b, NDArray):
            return numpy_arrays.binop(self, op, a, b)
        if isinstance(a, Value) or isinstance(b, Value):
            numbers = all(x in self.python_numbers if isinstance(x, Value) else isinstance(x, (int, float)) for x in (a, b))
            floats = any(isinstance(x, float) or isinstance(x, Value) and x.dtype.is_floating_point for x in (a, b))
            if numbers and op == "/" and not floats:
                a, b = (self._as_double(x) for x in (a, b))  # int / int of sizes: a Python float, a double
            elif numbers and floats and op in _FLOAT_RESULTS:
                # int meeting float (`n * 1.0`, `n / 2.0`): a Python float, a double; a float the graph
                # holds keeps its dtype (float(t) of a float32 tensor)
                held = next((x.dtype for x in (a, b) if isinstance(x, Value) and x.dtype.is_floating_point),
                            torch.float64)
                a, b = (self.g.cast(x, held) if isinstance(x, Value) and not x.dtype.is_floating_point else x
                        for x in (a, b))
            elif not numbers:
                a, b = self._weak_number(a, b), self._weak_number(b, a)
            result = self.call_op(f"operator.{_BINOPS[op]}", [a, b], {})
            if numbers:
                self.python_number(result)
            return result
        if op == "+" and isinstance(a, tuple) and isinstance(b, tuple) and isinstance(a, torch.Size) != isinstance(
                b, torch.Size):
            a, b = tuple(a), tuple(b)  # Size + a shape with graph sizes: a shape is a tuple here
        return _PY_BIN[op](a, b)

    def _as_double(self, x):
        return self.g.cast(x, torch.float64) if isinstance(x, Value) and x.dtype != torch.float64 else x

    def _weak_number(self, x, other):
        """A Python float held in the graph (a double) meeting a tensor takes the tensor's
        floating dtype, or the default dtype beside an integer tensor, as a Python float does."""
        if not (isinstance(x, Value) and x in self.python_numbers and x.dtype.is_floating_point):
            return x
        if not isinstance(other, Value) or other in self.python_numbers:
            return x
        return self.g.cast(x, other.dtype if other.dtype.is_floating_point else torch.get_default_dtype())

    def _ev_Attribute(self, e, frame):
        base = self.eval(e.value, frame)
        value = self.attribute(base, e.attr)
        if isinstance(base, torch.nn.Module):
            self.attribute_source = (base, e.attr, value)  # a cache's key, if a comparison takes it (module_attributes)
        if isinstance(value, TensorMethod):
            value.receiver = expr_text(e.value)  # `x[0].add_(1)` names `x[0]` if it is refused
        if isinstance(value, _CONTAINERS) and (id(base), e.attr) not in self.attribute_writes and \
                id(base) not in self.local_objects:
            # a container held by an object outlives the call (forward's own assignment is call-local, and so
            # is an object forward made: a container it was given from outside is marked where it was read)
            self.mark_foreign(value, expr_text(e))
        return value

    def attribute(self, base, attr: str):
        if isinstance(base, ComplexPair):
            return complex_values.attribute(self, base, attr)
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
            if attr == "requires_grad":
                return base in self.values_needing_grad  # a parameter's own flag; computed values: False
            if attr in ("is_cuda", "is_sparse", "is_quantized"):
                return False
            if attr in ("T", "mT"):
                return self.call_op("Tensor.t" if attr == "T" and base.rank == 2 else "Tensor.mT", [base], {})
            if attr == "data":
                return base
            return TensorMethod(base, attr)
        if isinstance(base, torch.Tensor):
            base = self.tensor_constant(base)
            return self.attribute(base, attr)
        if isinstance(base, torch.nn.Module):
            written = self.module_attribute(base, attr)
            if written is not MISSING:
                return written
        try:
            value = getattr(base, attr)
        except AttributeError as exc:
            raise self.python_exception(exc, f"`{type(base).__name__}` has no attribute `{attr}`",
                                        construct="attribute") from None
        if isinstance(value, torch.Tensor) and not isinstance(base, type):
            return self.tensor_constant(value, owner=base, attr=attr)
        if inspect.ismethod(value) and _is_user_function(value.__func__) and context_decorated(value.__func__) is None:
            return BoundUserMethod(value.__self__, value.__func__)  # (a decorated one is called under its manager)
        return value

    def python_number(self, v):
        """Note that graph value `v` stands for a Python int/float of eager code."""
        if isinstance(v, Value):
            self.python_numbers.add(v)
        return v

    def _rank(self, v: Value) -> int:
        if v.rank is None:
            raise self.error("the rank of this tensor is unknown at export time", construct="shape",
                             hint="reshape it to a known rank before this use")
        return v.rank

    def shape(self, v: Value) -> tuple:
        if v.rank is None:
            raise self.error("the rank of this tensor is unknown at export time", construct="shape",
                             hint="reshape it to a known rank before this use")
        return tuple(self.python_number(self.g.size(v, d)) for d in range(v.rank))

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
        if has_varying_items(base):
            if isinstance(index, int) and not isinstance(index, bool):
                return self.list_item(base, index)
            raise self.refuse_varying_list(base, "indexing")
        if isinstance(index, Value):
            if isinstance(base, (list, tuple)) and all(isinstance(x, (int, float, bool)) for x in base):
                return self.call_op("operator.getitem", [self.g.const(list(base)), index], {})
            if isinstance(base, (torch.nn.ModuleList, torch.nn.Sequential, list, tuple)) and len(base) > 0:
                return GraphChoice(list(base), index)
            raise self.error("indexing a Python container with a tensor value", construct="subscript",
                             hint="index a tensor (torch.stack the items first), or use a Python int index")
        memo = self.memoized(base) if isinstance(base, dict) else None
        if memo is not None and index in memo:
            return memo[index]
        try:
            return base[index]
        except (KeyError, IndexError, TypeError) as exc:
            raise self.python_exception(exc, f"indexing a {type(base).__name__} fails at export time: {exc!r}",
                                        construct="subscript") from None

    def static_truth(self, v, what: str) -> bool:
        if isinstance(v, Value):
            raise self.error(f"a {what} on tensor values", construct=what,
                             hint="rewrite it with torch.where, or compute the condition with Python values")
        return self.truth(v)

    def truth(self, v) -> bool:
        if isinstance(v, torch.Tensor):
            raise self.error("the truth value of a tensor constant", construct="bool",
                             hint="compare the constant with Python values, or use .any()/.all() explicitly")
        if has_varying_items(v):
            raise self.refuse_varying_list(v, "the truth value")
        return bool(v)

    building_message = False  # evaluating the arguments of an exception, a warning or a log call

    def _ev_Call(self, e, frame):
        func = self.eval(e.func, frame)
        args, kwargs = [], {}
        outer, self.building_message = self.building_message, takes_a_message(func)
        try:
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
        finally:
            self.building_message = outer
        # `lst.append(v)` etc. mutate known lists in place.
        first = e.args[0] if e.args else None
        self.first_argument = expr_text(first.value) if first is not None and not first.star and first.keyword is None else None
        return self.call(func, args, kwargs)
