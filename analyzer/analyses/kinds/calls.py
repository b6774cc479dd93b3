"""Call semantics of the value-kind analysis: what a call returns and which facts it
emits. This module dispatches a call on what is called and runs project code (functions,
methods, classes, submodules, nested functions) with its arguments bound; the rest, one
concern a module:

- `external_calls`: PyTorch (functions, `nn` modules, tensor methods, value escapes,
  in-place writes), numpy, math and the standard library;
- `python_calls`: builtins and the methods of Python values;
- `call_values`: the values at calls shared by those (index levels, write targets,
  attribute values, unresolved results)."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds import ranks
from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.call_values import unknown_result, view_origin
from analyzer.analyses.kinds.external_calls import ExternalCallSemantics
from analyzer.analyses.kinds.facts import OpFact
from analyzer.analyses.kinds.module_state import built_here
from analyzer.analyses.kinds.python_calls import PythonCallSemantics
from analyzer.analyses.kinds.summaries import Summary
from analyzer.analyses.kinds.values import (
    FIXED_ROWS,
    SHAPE,
    STATIC,
    STATIC_PY,
    UNKNOWN,
    Value,
    default_value,
    join,
    join_all,
)
from analyzer.analyses.project.index import ClassKey, FunctionKey
from analyzer.analyses.ranges import fixed_rows
from analyzer.analyses.ranges.keyed_ranges import into_callee
from analyzer.analyses.ranges.symbolic_sizes import inward, outward
from analyzer.frontend import expr_text, ir


class CallSemantics(ExternalCallSemantics, PythonCallSemantics):
    """The calls half of `ExpressionEvaluator` (a mixin over its state)."""

    def call(self, func: Value, args: list[Value], kwargs: dict, node, state) -> Value:
        t = func.type
        if t == "ext":
            return self.call_external(func.ref, args, kwargs, node)
        if t == "method":
            return self.call_method(func.elem, func.ref, args, kwargs, node)
        if t == "function":
            return self.call_project_function(func, args, kwargs, node, state)
        if t == "class":
            return self.instantiate(func.ref, args, kwargs)
        if t == "module":
            return self.call_module(func, args, kwargs, node)
        if t == "modules":
            if func.ref == "torch.nn.Sequential":
                value = args[0] if args else UNKNOWN
                elems = func.elems if func.elems is not None else ((func.elem,) if func.elem is not None else ())
                for m in elems:
                    value = self.call_module(m, [value], {}, node) if m.type == "module" else UNKNOWN
                return value
            return UNKNOWN
        return unknown_result(args, kwargs)

    def call_module(self, module: Value, args, kwargs, node) -> Value:
        key = module.ref
        if isinstance(key, ClassKey):
            owner, forward = self.analyzer.find_method(key, "forward")
            if forward is None:
                owner, forward = self.analyzer.find_method(key, "__call__")
            if forward is None:
                return unknown_result(args, kwargs)
            return self.invoke(FunctionKey(owner.key.path, forward.qualname), forward, owner.key, module, args, kwargs, node)
        if isinstance(key, str):
            self.emit_op(key, node)
            if key in api.TUPLE_MODULES:
                return Value.container(UNKNOWN, level=STATIC)
            tensors = [a for a in args if a.type == "tensor"]
            origin = FIXED_ROWS if fixed_rows.kept_by_module(key, args) else None
            if key in api.ALIAS_MODULES and tensors and tensors[0] is args[0]:
                origin = view_origin(args[0]) or origin
            return Value.tensor(True, max((a.shape_level for a in tensors), default=SHAPE), origin=origin)
        if key is None:
            self._record_either(module, args, kwargs, node)
        tensors = [a for a in args if a.type == "tensor"]
        origin = FIXED_ROWS if isinstance(key, frozenset) and all(fixed_rows.kept_by_module(k, args) for k in key) else None
        if isinstance(key, frozenset) and key & api.ALIAS_MODULES and args and args[0].type == "tensor":
            origin = view_origin(args[0]) or origin  # `nn.Identity()` is one of them
        return Value.tensor(False, max((a.shape_level for a in tensors), default=SHAPE), origin=origin) if tensors else UNKNOWN

    def instantiate(self, key, args, kwargs) -> Value:
        if isinstance(key, ClassKey):
            if self.analyzer.is_module_class(key):
                return built_here(key)
            if any(v.type == "tensor" for v in (*args, *kwargs.values())):
                # An object holding tensors (a model output): its fields are not followed, so
                # it is what an unresolved call's result is, not a static Python value.
                return unknown_result(args, kwargs)
            return STATIC_PY
        return UNKNOWN

    def call_project_function(self, func: Value, args, kwargs, node, state) -> Value:
        ref = func.ref
        if isinstance(ref, tuple) and ref and ref[0] == "lambda":
            return unknown_result(args, kwargs)
        if isinstance(ref, tuple) and ref and ref[0] == "nested":
            fn = self.nested.get(ref[1])
            if fn is None or self.frame is None:
                return unknown_result(args, kwargs)
            bound = bind_arguments(fn, args, kwargs, None)
            summary = self.analyzer.call_function(("nested", id(fn)), fn, self.module, bound, None, None,
                                                  closure=dict(state))
            self._forward_facts(summary)
            return summary.returns
        if not isinstance(ref, FunctionKey):
            return unknown_result(args, kwargs)
        module = self.analyzer.module_ir(ref.path)
        if module is None:
            return unknown_result(args, kwargs)
        fn = find_function(module, ref.qualname)
        if fn is None:
            return unknown_result(args, kwargs)
        class_key = ClassKey(ref.path, ref.qualname.split(".")[0]) if "." in ref.qualname else None
        return self.invoke(ref, fn, class_key, func.elem, args, kwargs, node)

    def invoke(self, key: FunctionKey, fn: ir.FunctionDef, class_key, self_value, args, kwargs, node) -> Value:
        collect = self.frame.collect_attributes if self.frame is not None else None
        collecting = collect is not None and self_value is not None and self.frame.self_value == self_value
        if (collecting and class_key is not None and self_value.type == "module" and class_key != self_value.ref
                and self.analyzer.is_framework_base(class_key)):
            summary = self.analyzer.base_helper(key, fn, class_key, args, kwargs, collect)
            self._forward_facts(summary)
            return summary.returns
        crossing = self._other_self(self_value)
        accessor = _module_expression(fn, node) if crossing else None
        caller = None
        if crossing:
            caller = self.frame.self_value.ref if self.frame is not None and self.frame.self_value is not None else None
            args = [inward(self.analyzer, caller, accessor, self_value.ref, a) for a in args]
            kwargs = {k: inward(self.analyzer, caller, accessor, self_value.ref, v) for k, v in kwargs.items()}
        bound = bind_arguments(fn, args, kwargs, self_value)
        module = self.analyzer.module_ir(key.path)
        # Ranks are passed as the callee's own parameters' (`ranks`): its summaries are
        # shared by every caller, and what it returns relative to them is translated back.
        passed = {ranks.param_token(module.path if module is not None else key.path, fn.qualname, name): v.rank
                  for name, v in bound.items() if v.type == "tensor"}
        originals = {v: v for v in bound.values()}
        bound = into_callee({name: ranks.strip(v) for name, v in bound.items()}, fn, key.path, node, self_value,
                            self.frame, bind_arguments)
        self._record(node, bound)
        if collecting:
            # A helper called from __init__ (`self._build()`): its `self.x = ...` count too.
            summary = self.analyzer.call_function(key, fn, module, bound, self_value, class_key, collect=collect)
        else:
            summary = self.analyzer.call_function(key, fn, module, bound, self_value, class_key)
        # `@torch.jit._script_if_tracing`: scripted when called under the tracer, so its
        # branches and loops are kept; only the ops it exports are facts.
        scripted = any(expr_text(d).rsplit(".", 1)[-1] in api.SCRIPTED_WHEN_TRACING_DECORATORS for d in fn.decorators)
        self._forward_facts(summary, ops_only=scripted)
        # An argument returned as it was passed is the caller's very value (`is`: a training
        # target still at its default, `tracing_guards`), not an equal copy.
        returns = ranks.as_passed(ranks.substitute(summary.returns, passed), originals)
        return outward(self.analyzer, caller, accessor, self_value.ref, returns) if crossing else returns

    def _other_self(self, self_value) -> bool:
        """Whether the call runs a method of a module that is not this frame's `self`
        (`self.gate(h)`): sizes in values that cross it are written from the other side
        (`submodule_sizes`)."""
        if self_value is None or self_value.type != "module" or not isinstance(self_value.ref, ClassKey):
            return False
        return self.frame is None or self.frame.self_value != self_value

    def _record(self, node, bound: dict) -> None:
        """Keep the arguments bound at ``node`` when a run records its calls (`record_calls`)."""
        recording = self.analyzer.recording
        if recording is not None and id(node) in recording:
            recording[id(node)].append(bound)

    def _record_either(self, module: Value, args, kwargs, node) -> None:
        """A call of either of several project modules (`self.encoder`, built as one class
        or another): its arguments bound to the `forward` whose callers are recorded, when
        one is (`record_calls`); that class is one of them."""
        callee = self.analyzer.recorded_callee
        if callee is not None and not any(a.type == "starred" for a in args):
            self._record(node, explicit_arguments(callee, args, kwargs, module))

    def _forward_facts(self, summary: Summary, ops_only: bool = False) -> None:
        if self.sink is None or self.frame is None:
            return
        for f in summary.facts:
            if self.unexported and isinstance(f, OpFact):
                continue  # called from code that an export does not run
            if ops_only and not isinstance(f, OpFact):
                continue
            self.sink.append(replace(f, site=f.site.called_from(self.frame.qualname)))

    def emit_op(self, op: str, node) -> None:
        """An `OpFact` for a call resolved to PyTorch, with its literal keyword arguments."""
        if self.sink is None or not isinstance(node, ir.Call) or self.unexported:
            return
        keywords = tuple((a.keyword, a.value.value) for a in node.args
                         if a.keyword is not None and isinstance(a.value, ir.Const))
        self.emit(OpFact(self.site(node.span), op, self.text(node.func), keywords))


def _module_expression(fn: ir.FunctionDef, node):
    """The expression of the module whose method ``fn`` the call ``node`` runs: `self.gate`
    for `self.gate(h)` and `self.gate.forward(h)`; None when there is no such call."""
    func = node.func if isinstance(node, ir.Call) else None
    if isinstance(func, ir.Attribute) and func.attr == fn.name:
        return func.value
    return func


def explicit_arguments(fn: ir.FunctionDef, args: list[Value], kwargs: dict, self_value: Value | None) -> dict[str, Value]:
    """The parameters of a call with `**mapping` (`self.encoder(h, mask=m, **kwargs)`):
    those the call names or fills by position are bound, any other may come from the
    mapping (unknown)."""
    named = {k: v for k, v in kwargs.items() if k != "**"}
    bound = bind_arguments(fn, args, named, self_value)
    by_position = {p.name for p in fn.params[: len(args) + (self_value is not None)] if p.kind in ("positional", "posonly")}
    return {name: v if name in by_position or name in named else UNKNOWN for name, v in bound.items()}


def bind_arguments(fn: ir.FunctionDef, args: list[Value], kwargs: dict, self_value: Value | None) -> dict[str, Value]:
    """The values of ``fn``'s parameters for a call with ``args`` (a `*iterable` among them
    as a "starred" value) and ``kwargs`` (a `**mapping` under the key "**"), as Python
    binds them. An iterable of known items fills the positions one by one; one of unknown
    length may fill any position from its own on (its item, or the default); a mapping
    may fill any parameter the call does not name (its item, or the default)."""
    params = list(fn.params)
    positional = list(args)
    if self_value is not None and params and params[0].kind in ("positional", "posonly"):
        positional = [self_value] + positional
    positional, spread = _spread(positional)
    mapping = kwargs.get("**")
    named = {k: v for k, v in kwargs.items() if k != "**"}
    from_mapping = None if mapping is None else mapping.elem if mapping.type == "container" and mapping.elem is not None \
        else UNKNOWN
    bound: dict[str, Value] = {}
    i = 0
    for p in params:
        default = (default_value(p.default) if isinstance(p.default, ir.Const) else STATIC_PY) if p.default is not None else None
        if p.kind in ("positional", "posonly"):
            if i < len(positional):
                bound[p.name] = positional[i]
                i += 1
            elif p.name in named:
                bound[p.name] = named[p.name]
            elif spread is not None or from_mapping is not None:
                bound[p.name] = join(join(spread, from_mapping), default) or UNKNOWN
            elif default is not None:
                bound[p.name] = default
            else:
                bound[p.name] = UNKNOWN
        elif p.kind == "vararg":
            rest = tuple(positional[i:])
            bound[p.name] = Value.container(elems=rest) if spread is None else Value.container(join_all((*rest, spread)))
            i = len(positional)
        elif p.kind == "kwonly":
            if p.name in named:
                bound[p.name] = named[p.name]
            elif from_mapping is not None:
                bound[p.name] = join(from_mapping, default) or UNKNOWN
            else:
                bound[p.name] = default if default is not None else STATIC_PY
        elif p.kind == "kwarg":
            bound[p.name] = Value.container(from_mapping or UNKNOWN, ref="dict")
    return bound


def _spread(positional: list[Value]) -> tuple[list[Value], Value | None]:
    """The positional arguments with each `*iterable` of known items spread out, up to the
    first of unknown length, and that one's item (None when there is none)."""
    out: list[Value] = []
    for a in positional:
        if a.type != "starred":
            out.append(a)
            continue
        inner = a.elem
        if inner is not None and inner.type == "container" and inner.elems is not None:
            out.extend(inner.elems)
            continue
        item = inner.elem if inner is not None and inner.type in ("container", "modules") and inner.elem is not None \
            else UNKNOWN
        return out, item
    return out, None


def find_function(module: ir.Module, qualname: str) -> ir.FunctionDef | None:
    parts = qualname.split(".")
    body = module.body
    found = None
    for i, part in enumerate(parts):
        found = None
        for s in body:
            if isinstance(s, (ir.FunctionDef, ir.ClassDef)) and s.name == part:
                found = s
                break
        if found is None:
            return None
        if i + 1 < len(parts):
            body = found.body  # a deferred body is read only to look inside it
    return found if isinstance(found, ir.FunctionDef) else None

