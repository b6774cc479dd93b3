"""Call semantics of the value-kind analysis: what a call returns and which facts it
emits, for project functions and classes, submodules, builtins, Python methods, and
PyTorch (functions, `nn` modules, tensor methods, value escapes, in-place writes)."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses import torch_api as api
from analyzer.analyses.facts import EscapeFact, InplaceFact, IterationFact, OpFact
from analyzer.analyses.levels import Level
from analyzer.analyses.module_state import as_state, built_here
from analyzer.analyses.project import ClassKey, FunctionKey
from analyzer.analyses.shapes import call_args, pieces, repeats_are_data, row_count_level, row_of, size_level
from analyzer.analyses.summaries import BOOL_METHODS, Summary
from analyzer.analyses.values import (
    DATA,
    KNOWN_WHEN_TRACED,
    NDARRAY,
    NONE,
    PARAM_VALUED,
    ROWS,
    SHAPE,
    STATIC,
    STATIC_PY,
    UNKNOWN,
    Value,
    join,
    join_all,
    known_level,
    known_python_level,
    known_ref,
)
from analyzer.frontend import expr_text, ir


class CallSemantics:
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
        return _unknown_result(args, kwargs)

    def call_module(self, module: Value, args, kwargs, node) -> Value:
        key = module.ref
        if isinstance(key, ClassKey):
            owner, forward = self.analyzer.find_method(key, "forward")
            if forward is None:
                owner, forward = self.analyzer.find_method(key, "__call__")
            if forward is None:
                return _unknown_result(args, kwargs)
            return self.invoke(FunctionKey(owner.key.path, forward.qualname), forward, owner.key, module, args, kwargs, node)
        if isinstance(key, str):
            self.emit_op(key, node)
            if key in api.TUPLE_MODULES:
                return Value.container(UNKNOWN, level=STATIC)
            tensors = [a for a in args if a.type == "tensor"]
            return Value.tensor(True, max((a.shape_level for a in tensors), default=SHAPE))
        tensors = [a for a in args if a.type == "tensor"]
        return Value.tensor(False, max((a.shape_level for a in tensors), default=SHAPE)) if tensors else UNKNOWN

    def instantiate(self, key, args, kwargs) -> Value:
        if isinstance(key, ClassKey):
            if self.analyzer.is_module_class(key):
                return built_here(key)
            return STATIC_PY
        return UNKNOWN

    def call_project_function(self, func: Value, args, kwargs, node, state) -> Value:
        ref = func.ref
        if isinstance(ref, tuple) and ref and ref[0] == "lambda":
            return _unknown_result(args, kwargs)
        if isinstance(ref, tuple) and ref and ref[0] == "nested":
            fn = self.nested.get(ref[1])
            if fn is None or self.frame is None:
                return _unknown_result(args, kwargs)
            bound = bind_arguments(fn, args, kwargs, None)
            summary = self.analyzer.call_function(("nested", id(fn)), fn, self.module, bound, None, None,
                                                  closure=dict(state))
            self._forward_facts(summary)
            return summary.returns
        if not isinstance(ref, FunctionKey):
            return _unknown_result(args, kwargs)
        module = self.analyzer.module_ir(ref.path)
        if module is None:
            return _unknown_result(args, kwargs)
        fn = _find_function(module, ref.qualname)
        if fn is None:
            return _unknown_result(args, kwargs)
        class_key = ClassKey(ref.path, ref.qualname.split(".")[0]) if "." in ref.qualname else None
        return self.invoke(ref, fn, class_key, func.elem, args, kwargs, node)

    def invoke(self, key: FunctionKey, fn: ir.FunctionDef, class_key, self_value, args, kwargs, node) -> Value:
        if any(a.type == "starred" for a in args) or "**" in kwargs:
            return _unknown_result(args, kwargs)
        collect = self.frame.collect_attributes if self.frame is not None else None
        collecting = collect is not None and self_value is not None and self.frame.self_value == self_value
        if (collecting and class_key is not None and self_value.type == "module" and class_key != self_value.ref
                and self.analyzer.is_framework_base(class_key)):
            summary = self.analyzer.base_helper(key, fn, class_key, args, kwargs, collect)
            self._forward_facts(summary)
            return summary.returns
        bound = bind_arguments(fn, args, kwargs, self_value)
        module = self.analyzer.module_ir(key.path)
        if collecting:
            # A helper called from __init__ (`self._build()`): its `self.x = ...` count too.
            summary = self.analyzer.call_function(key, fn, module, bound, self_value, class_key, collect=collect)
        else:
            summary = self.analyzer.call_function(key, fn, module, bound, self_value, class_key)
        # `@torch.jit._script_if_tracing`: scripted when called under the tracer, so its
        # branches and loops are kept; only the ops it exports are facts.
        scripted = any(expr_text(d).rsplit(".", 1)[-1] in api.SCRIPTED_WHEN_TRACING_DECORATORS for d in fn.decorators)
        self._forward_facts(summary, ops_only=scripted)
        return summary.returns

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

    # ------------------------------------------------------------------ external calls

    def call_external(self, qualname: str, args, kwargs, node) -> Value:
        name = qualname
        if name.startswith("builtins."):
            return self.call_builtin(name[9:], args, kwargs, node)
        if name.startswith("torch.nn.functional."):
            name = "torch." + name[len("torch.nn.functional."):]
            qualname_is_functional = True
        else:
            qualname_is_functional = False
        if qualname.startswith("torch."):
            return self.call_torch(qualname, name, args, kwargs, node, qualname_is_functional)
        tensor_args = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor" and a.certain]
        root = qualname.split(".")[0]
        if root in ("numpy", "np"):
            if tensor_args:
                self.emit(EscapeFact(self.site(node.span), "np." + qualname.split(".", 1)[-1], "numpy", self.text(node)))
                return Value.python(DATA)
            return Value.python(_max_level(args, kwargs))
        if root == "math":
            if tensor_args:
                self.emit(EscapeFact(self.site(node.span), qualname, "python", self.text(node)))
                return Value.python(DATA)
            return Value.python(_max_level(args, kwargs))
        if root in ("typing", "warnings", "logging", "functools", "itertools", "operator", "copy", "dataclasses"):
            if qualname == "itertools.groupby" and args and args[0].type == "container":
                # Runs of equal items: how many there are is as dynamic as the items' values.
                items = args[0].elem
                return Value.container(UNKNOWN, level=max(args[0].level, items.level if items is not None and items.type != "tensor" else STATIC))
            if root == "itertools" or root == "functools":
                return _unknown_result(args, kwargs)
            return STATIC_PY
        return _unknown_result(args, kwargs)

    def call_torch(self, qualname: str, name: str, args, kwargs, node, functional: bool) -> Value:
        if qualname.startswith("torch.nn.") and not functional:
            cls = qualname
            if cls in api.CONTAINER_MODULES:
                modules = [m for a in args for m in _modules_in(a)]
                elems = tuple(modules) if args and all(a.type == "module" for a in args) else None
                return Value("modules", ref=cls, elem=join_all(modules), elems=elems)
            if cls in api.TENSOR_FACTORIES:
                return Value.tensor(origin="parameter", ref=PARAM_VALUED)
            if cls.startswith(("torch.nn.init.", "torch.nn.utils.")):
                return args[0] if args else UNKNOWN
            return built_here(cls)
        if api.is_static_function(qualname):
            return STATIC_PY
        self.emit_op(qualname, node)
        if name in api.SHAPE_FUNCTIONS:
            tensor = next((a for a in args if a.type == "tensor"), None)
            return Value.python(tensor.shape_level if tensor else SHAPE)
        if not api.returns_tensor(qualname):
            return _unknown_result(args, kwargs)
        tensors = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor"]
        shape_level = max([a.shape_level for a in tensors] + [as_index_level(a) for a in args if a.type == "python"] + [SHAPE])
        shape_level = max(shape_level, *[as_index_level(v) for k, v in kwargs.items() if k in ("size", "end", "start", "steps")] or [STATIC])
        if name in api.TUPLE_FUNCTIONS or (name in api.TUPLE_WITH_DIM_FUNCTIONS and (len(args) > 1 and args[1].type == "python" or "dim" in kwargs)):
            return pieces(name.rsplit(".", 1)[-1], args[1:], kwargs, Value.tensor(True, shape_level), call_args(node)[1:])
        if (name == "torch.where" and len(args) == 1 and not kwargs) or (name == "torch.nonzero" and kwargs.get("as_tuple")):
            return Value.container(Value.tensor(True, DATA))  # one index tensor per dimension
        if name in api.DATA_SHAPE_FUNCTIONS or (name == "torch.repeat_interleave" and repeats_are_data(
                args[1:] if len(args) > 1 or "repeats" in kwargs else args, kwargs)):  # `repeat_interleave(repeats)`
            return Value.tensor(True, DATA)
        if name in ("torch.cond",):
            # What the branch functions return: a tensor, or a tuple of them to unpack.
            return Value.tensor(False, shape_level)
        ref = "bool" if name.rsplit(".", 1)[-1] in BOOL_METHODS else None
        if not api.is_random(name):
            ref = _shape_valued(args, kwargs, tensors_needed=False) or ref
        return Value.tensor(True, shape_level, ref=ref)

    def call_builtin(self, name: str, args, kwargs, node) -> Value:
        first = args[0] if args else UNKNOWN
        if name in api.TENSOR_TO_PYTHON_BUILTINS:
            if first.type == "tensor" and first.ref in KNOWN_WHEN_TRACED:
                return Value.python(max(known_level(first.ref), first.ctl))
            if first.is_certain_tensor:
                self.emit(EscapeFact(self.site(node.span), name, "python", self.text(node)))
                return Value.python(DATA)
            if first.type == "tensor":
                return Value.python(first.ctl)
            return Value.python(first.level if first.type in ("python", "unknown", "container") else STATIC)
        if name == "len":
            if first.type == "tensor":
                return Value.python(first.shape_level)
            if first.type == "container" and first.ref == "shape":
                return STATIC_PY  # `len(t.shape)`: the rank, fixed in every graph
            if first.type in ("container", "python"):
                return Value.python(max(first.level, first.ctl))
            return STATIC_PY
        if name == "range":
            level = max((as_index_level(a) for a in args), default=STATIC)
            return Value.container(Value.python(level), level=level, ref="range")
        if name in ("enumerate", "reversed", "iter", "sorted", "list", "tuple", "set", "frozenset"):
            if first.type == "tensor":
                # Over a tensor sized by data (`nonzero`) the number of rows is data: a loop
                # over them is the data loop's finding (UT102), not a tensor iteration.
                rows = row_count_level(first)
                if first.certain and (rows < DATA or name in ("list", "tuple")):
                    self.emit(IterationFact(self.site(node.span), name if name in ("list", "tuple", "enumerate") else "for", self.text(node)))
                row = row_of(first)
                if name == "enumerate":  # (index, row) pairs: unpacking one is no tensor unpacking
                    return Value.container(Value.container(elems=(STATIC_PY, row)), level=rows)
                return Value.container(row, level=rows)
            if first.type in ("container", "modules"):
                elem = first.elem
                if name == "enumerate":
                    elem = Value.container(elems=(STATIC_PY, first.elem or UNKNOWN))
                if name in ("list", "tuple") and first.elems is not None:
                    return replace(first, type="container", ref=name)
                level = max(first.level, first.ctl)
                if name in ("set", "frozenset") and elem is not None and elem.type in ("python", "unknown"):
                    level = max(level, elem.level)  # duplicates dropped by value: the size is as dynamic as the items
                return Value.container(elem or UNKNOWN, level=level, ref=ROWS if first.ref == ROWS and name != "set" else None)
            if first.type == "python":
                return Value.container(Value.python(first.level), level=first.level)
            return Value.container(UNKNOWN)
        if name == "zip":
            level = STATIC
            elems = []
            rows = None
            # Zipped with the layers of a ModuleList (`zip(stacked, self.norms)`), the count is the model's.
            by_modules = any(a.type == "modules" for a in args)
            for a in args:
                if a.type == "tensor":
                    if a.certain and row_count_level(a) < DATA and not by_modules:
                        self.emit(IterationFact(self.site(node.span), "zip", self.text(node)))
                    level = max(level, row_count_level(a))
                    elems.append(row_of(a))
                elif a.type in ("container", "modules"):
                    level = max(level, a.level)
                    rows = rows or (ROWS if a.ref == ROWS else None)
                    elems.append(a.elem or UNKNOWN)
                else:
                    elems.append(UNKNOWN)
            return Value.container(Value.container(elems=tuple(elems)), level=level, ref=rows)
        if name in ("map", "filter"):
            return Value.container(UNKNOWN, level=max((a.level for a in args if a.type == "container"), default=STATIC))
        if name == "getattr" and len(args) >= 2:
            return UNKNOWN
        if name in api.STATIC_BUILTINS:
            if name == "super" and self.frame is not None and self.frame.self_value is not None:
                return Value("super", ref=self.frame.class_key, elem=self.frame.self_value)
            return STATIC_PY
        if name in api.PYTHON_MATH_BUILTINS:
            tensors = [a for a in args if a.type == "tensor"]
            if tensors:
                return Value.tensor(any(a.certain for a in tensors), max(a.shape_level for a in tensors),
                                    ref=_shape_valued(args, kwargs))
            if name in ("min", "max", "sum", "all", "any") and len(args) == 1 and first.type == "container":
                elem = first.elem or UNKNOWN
                return Value.python(max(first.level, elem.level if elem.type != "tensor" else DATA))
            return Value.python(_max_level(args, kwargs))
        if name == "next":
            if first.type == "container":
                return first.elem or UNKNOWN
            return UNKNOWN
        if name in ("dict",):
            return Value.container(UNKNOWN, ref="dict")
        return _unknown_result(args, kwargs)

    def call_method(self, recv: Value, name: str, args, kwargs, node) -> Value:
        if recv is None:
            return UNKNOWN
        known_tensor_method = name in api.TENSOR_METHODS or name in api.SHAPE_METHODS or name in api.STATIC_METHODS \
            or name in api.PYTHON_ESCAPE_METHODS or name in api.NUMPY_ESCAPE_METHODS or api.is_inplace_method(name)
        if recv.is_certain_tensor:
            self.emit_op(f"Tensor.{name}", node)
        if recv.is_certain_tensor or (recv.type in ("tensor", "unknown") and recv.level >= DATA and known_tensor_method):
            # An assumed tensor (an un-annotated forward argument) is only taken for one when
            # it is used like one: `cache.get_seq_length()` says it is something else.
            return self.tensor_method(recv, name, args, kwargs, node)
        if recv.type == "tensor":
            return _unknown_result(args, kwargs)
        if recv.type == "super":
            owner, method = self.analyzer.find_method(recv.ref, name, after=recv.ref) if isinstance(recv.ref, ClassKey) else (None, None)
            if method is None:
                return _unknown_result(args, kwargs)
            return self.invoke(FunctionKey(owner.key.path, method.qualname), method, owner.key, recv.elem, args, kwargs, node)
        if recv.type == "module":
            if name == "register_buffer" or name == "register_parameter":
                collect = self.frame.collect_attributes if self.frame is not None else None
                if collect is not None and isinstance(node.args[0].value, ir.Const):
                    collect[node.args[0].value.value] = Value.tensor(origin="parameter", ref=PARAM_VALUED)
                return NONE
            if name in ("parameters", "buffers", "modules", "children", "named_parameters"):
                return Value.container(UNKNOWN)
            return _unknown_result(args, kwargs)
        if recv.type == "modules":
            if name in ("values", "children", "modules"):
                return Value.container(recv.elem or UNKNOWN)
            if name == "items":
                return Value.container(Value.container(elems=(STATIC_PY, recv.elem or UNKNOWN)))
            if name == "keys":
                return Value.container(STATIC_PY)
            return UNKNOWN
        if recv.type == "container":
            if name in ("items",):
                return Value.container(Value.container(elems=(STATIC_PY, recv.elem or UNKNOWN)), level=recv.level)
            if name in ("values", "copy"):
                return Value.container(recv.elem or UNKNOWN, level=recv.level, ref=recv.ref)
            if name in ("keys",):
                return Value.container(STATIC_PY, level=recv.level)
            if name in ("get", "pop"):
                return join(recv.elem or UNKNOWN, args[1] if len(args) > 1 else NONE) or UNKNOWN
            if name in ("index", "count"):
                return Value.python(recv.level)
            return UNKNOWN
        if recv.type in ("python", "none"):
            return Value.python(max([recv.level] + [a.level for a in args if a.type == "python"]))
        return _unknown_result(args, kwargs)

    def tensor_method(self, recv: Value, name: str, args, kwargs, node) -> Value:
        shape_level = recv.shape_level if recv.type == "tensor" else SHAPE
        if name in api.SHAPE_METHODS:
            if name == "size" and not args and "dim" not in kwargs:
                return Value.container(Value.python(shape_level), level=shape_level, ref="shape")
            if name == "size" and isinstance(node, ir.Call) and node.args:
                return Value.python(size_level(shape_level, node.args[0].value))
            return Value.python(shape_level)
        if name in api.STATIC_METHODS:
            return STATIC_PY
        if name == "type" and not args and not kwargs:
            return STATIC_PY
        if name in api.PYTHON_ESCAPE_METHODS and recv.ref in KNOWN_WHEN_TRACED:
            known = known_level(recv.ref)
            return Value.python(known) if name == "item" else Value.container(Value.python(known), level=shape_level)
        if name in api.PYTHON_ESCAPE_METHODS:
            if id(node) not in self.check_conditions:
                self.emit(EscapeFact(self.site(node.span), name, "python", self.text(node)))
            if name == "tolist":
                # Its values are data; its length is the tensor's size.
                return Value.container(Value.python(DATA), level=shape_level)
            return Value.python(DATA)
        if name in api.NUMPY_ESCAPE_METHODS:
            self.emit(EscapeFact(self.site(node.span), name, "numpy", self.text(node)))
            return Value("python", DATA, shape_level=shape_level, ref=NDARRAY)
        if name in api.INDEX_PUT_METHODS and name.endswith("_"):
            self.emit(InplaceFact(self.site(node.span), "index_put_", self.text(node), written_kind(recv)))
            return recv
        if api.is_inplace_method(name):
            if recv.origin in ("input", "view"):
                self.emit(InplaceFact(self.site(node.span), "inplace-input", self.text(node), recv.origin))
            return recv
        tensors = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor"]
        level = max([shape_level] + [a.shape_level for a in tensors] + [as_index_level(a) for a in args if a.type in ("python", "container")])
        if name in api.TUPLE_METHODS or (name in api.TUPLE_WITH_DIM_METHODS and (args and args[0].type == "python" or "dim" in kwargs)):
            return pieces(name, args, kwargs, Value.tensor(True, level, origin=view_origin(recv) if name in api.VIEW_METHODS else None),
                          call_args(node))
        if name in api.DATA_SHAPE_METHODS or (name == "repeat_interleave" and repeats_are_data(args, kwargs)):
            return Value.tensor(True, DATA)
        ref = "bool" if name in BOOL_METHODS else None
        if recv.ref in KNOWN_WHEN_TRACED and not api.is_random(name):
            ref = _shape_valued([recv, *args], kwargs) or ref
        return Value.tensor(True, level, ref=ref, origin=view_origin(recv) if name in api.VIEW_METHODS else None)


# ====================================================================== helpers



def as_attribute(value: Value, item: bool = False) -> Value:
    """What `self.x = value` makes `self.x` in forward: parameters and tensors stay
    tensors; Python values computed in __init__ are configuration (static). A container
    may grow after __init__; the common `item` of one keeps its count (`picks`)."""
    if value.type == "tensor":
        return Value.tensor(True, SHAPE, origin="parameter", ref=PARAM_VALUED)
    if value.type in ("python", "none", "container"):
        return replace(value, level=STATIC, ctl=STATIC) if value.type != "container" else replace(
            value, level=STATIC, ctl=STATIC, elems=tuple(map(as_attribute, value.elems)) if item and value.elems else None,
            elem=as_attribute(value.elem, item=True) if value.elem else None)
    return as_state(replace(value, ctl=STATIC))


def view_origin(base: Value) -> str | None:
    """The origin of a view of ``base`` (`base[0]`, `base.view(...)`, `base.T`): it writes
    into what ``base`` writes into. A view of a local tensor is local until it is bound
    to a name of its own while its base has one (`FunctionAnalysis.statement`)."""
    return base.origin if base.origin in ("input", "parameter", "view") else None


def written_kind(tensor: Value) -> str:
    """What an in-place write goes into, for UT301: a forward "input", a "parameter" or
    buffer (module state), a "view" of another tensor (the write changes it too), or a
    "local" tensor the code made itself (`torch.zeros(...)`, `x.clone()`, an op's result),
    which the legacy tracer records faithfully."""
    return tensor.origin if tensor.origin in ("input", "parameter", "view") else "local"


def as_index_level(v: Value) -> Level:
    """Level of a Python value used as a size, bound or index."""
    if v.type in ("python", "container"):
        return max(v.level, v.ctl)
    if v.type == "unknown":
        return v.level if v.level < DATA else STATIC
    return STATIC


def index_shape_level(index: Value) -> Level:
    if index.type == "tensor":
        return DATA if index.ref == "bool" else index.shape_level
    if index.type == "container" and index.elems is not None:
        return max((index_shape_level(e) for e in index.elems), default=STATIC)
    return as_index_level(index)


def _shape_valued(args, kwargs, tensors_needed: bool = True) -> str | None:
    """The `ref` (`known_ref`) of a result computed from tensors known when traced
    (shape- or param-valued) and Python values of at most shape level, when every
    argument is one of those (and, with ``tensors_needed``, at least one is such a
    tensor); None otherwise."""
    values = list(args) + [v for k, v in kwargs.items() if k != "**"]
    refs: set = set()
    python_level = STATIC
    for v in values:
        if v.type == "tensor":
            if v.ref not in KNOWN_WHEN_TRACED:
                return None
            refs.add(v.ref)
        elif v.type in ("python", "none", "method"):
            if known_python_level(v) > SHAPE:
                return None
            python_level = max(python_level, known_python_level(v))
        elif v.type == "container":
            elem = v.elem
            if max(v.level, v.ctl) > SHAPE or (elem is not None and (elem.type == "tensor" and elem.ref not in KNOWN_WHEN_TRACED
                                                                     or elem.type not in ("tensor", "python", "none")
                                                                     or max(elem.level, elem.ctl) > SHAPE and elem.type != "tensor")):
                return None
            python_level = max(python_level, v.level, v.ctl)
            if elem is not None:
                if elem.type == "tensor":
                    refs.add(elem.ref)
                else:
                    python_level = max(python_level, elem.level, elem.ctl)
        elif v.type != "ext":  # dtypes, devices
            return None
    return known_ref(refs, python_level) if refs or not tensors_needed else None


def _max_level(args, kwargs) -> Level:
    return max([a.level for a in list(args) + list(kwargs.values()) if a.type in ("python", "container")] + [STATIC])


def _unknown_result(args, kwargs) -> Value:
    """An unresolvable call: `unknown`, but carrying `data` when fed by tensor values."""
    values = list(args) + list(kwargs.values())
    if any(v.type == "tensor" and v.certain for v in values):
        return Value("unknown", DATA)
    level = max([v.level for v in values if v.type in ("python", "container")] + [STATIC])
    return Value("unknown", level)


def _modules_in(v: Value) -> list[Value]:
    if v.type == "module":
        return [v]
    if v.type in ("container", "modules"):
        if v.elems is not None:
            return [m for e in v.elems for m in _modules_in(e)]
        return _modules_in(v.elem) if v.elem is not None else []
    if v.type == "starred" and v.elem is not None:
        return _modules_in(v.elem)
    return []


def bind_arguments(fn: ir.FunctionDef, args: list[Value], kwargs: dict, self_value: Value | None) -> dict[str, Value]:
    params = list(fn.params)
    positional = list(args)
    if self_value is not None and params and params[0].kind in ("positional", "posonly"):
        positional = [self_value] + positional
    bound: dict[str, Value] = {}
    i = 0
    for p in params:
        if p.kind in ("positional", "posonly"):
            if i < len(positional):
                bound[p.name] = positional[i]
                i += 1
            elif p.name in kwargs:
                bound[p.name] = kwargs[p.name]
            elif p.default is not None:
                bound[p.name] = NONE if isinstance(p.default, ir.Const) and p.default.value is None else STATIC_PY
            else:
                bound[p.name] = UNKNOWN
        elif p.kind == "vararg":
            bound[p.name] = Value.container(elems=tuple(positional[i:]))
            i = len(positional)
        elif p.kind == "kwonly":
            if p.name in kwargs:
                bound[p.name] = kwargs[p.name]
            else:
                bound[p.name] = NONE if isinstance(p.default, ir.Const) and p.default.value is None else STATIC_PY
        elif p.kind == "kwarg":
            bound[p.name] = Value.container(UNKNOWN, ref="dict")
    return bound


def _find_function(module: ir.Module, qualname: str) -> ir.FunctionDef | None:
    parts = qualname.split(".")
    body = module.body
    found = None
    for part in parts:
        found = None
        for s in body:
            if isinstance(s, (ir.FunctionDef, ir.ClassDef)) and s.name == part:
                found = s
                break
        if found is None:
            return None
        body = found.body
    return found if isinstance(found, ir.FunctionDef) else None

