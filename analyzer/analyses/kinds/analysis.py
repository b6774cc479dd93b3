"""The value-kind analysis: what every value depends on, and the facts that follow.

Requires: the IR of the file being checked, and a `Project` to resolve classes and
helpers in other files. Computes: a list of facts (`analyzer.analyses.kinds.facts`) for every
`forward` method of every class in the file, following calls into `self.method(...)`,
submodules assigned in `__init__`, inherited methods and module-level helpers.

Per function it is a forward dataflow problem on the generic engine, over states that
map names to abstract `Value`s:

    IN[n]  = ⊔ OUT[p] for p in pred(n)            (pointwise `values.join`)
    OUT[n] = transfer(n, IN[n])                   (evaluate the node, bind its targets)

with one twist for *control dependence*: a value bound under an `if` / loop whose
predicate depends on data is itself data (`if x.sum() > 0: n = 3` makes `n` data). The
level of each region's predicate feeds the transfer function, so the solve repeats
until those region levels are stable (they only rise: at most 2 × regions rounds).

Facts are emitted in a final pass over the solved states. A function is summarised
per abstract argument tuple (memoised); recursion and call depth are bounded, and an
unresolvable callee yields an `unknown` value on which no rule fires.

This module is the interprocedural driver (`KindAnalyzer`: entry points, summaries,
dependencies). The rest, one concern a module:

- `project.module_scopes`: module scopes, imports and lazy bindings;
- `project.class_tables`: classes, their methods and their attribute tables;
- `function_flow`: one function body on the dataflow engine, and its facts;
- `expressions`: Python semantics of expressions, predicates and bindings;
- `calls`: what calls return and emit (project code, builtins, PyTorch);
- `summaries`: the records kept between functions, and the analysis' bounds.
"""

from __future__ import annotations

import os
import re

from analyzer.analyses.engine.cfg import Cfg
from analyzer.analyses.kinds.calls import bind_arguments
from analyzer.analyses.kinds.expressions import ExpressionEvaluator
from analyzer.analyses.kinds.facts import Fact
from analyzer.analyses.kinds.function_flow import FunctionAnalysis, used_as_tensor
from analyzer.analyses.kinds.summaries import MAX_CALL_DEPTH, ClassInfo, Frame, Summary
from analyzer.analyses.kinds.values import STATIC_PY, UNKNOWN, Value, join
from analyzer.analyses.project.caller_origins import localized_entry, writes_into_inputs
from analyzer.analyses.project.class_tables import ClassTables
from analyzer.analyses.project.default_flags import entry_default
from analyzer.analyses.project.index import ClassKey, FunctionKey, Project
from analyzer.analyses.project.module_scopes import ModuleScopes
from analyzer.analyses.ranges.caller_bounds import bounded_entry
from analyzer.analyses.reach.entry_classes import is_unexported_class
from analyzer.analyses.reach.unexported import unexported_statements
from analyzer.frontend import expr_text, ir


class KindAnalyzer(ModuleScopes, ClassTables):
    def __init__(self, project: Project):
        self.project = project
        self.constant_flags: dict[tuple, tuple] = {}  # (class, attribute) -> `constructor_flags` (decision, reads)
        self.training_flags: dict[tuple, tuple] = {}  # (class, attribute) -> `training_flags` (decision, reads)
        self.criteria: dict[tuple, bool | None] = {}  # (class, id(function)) -> `criteria.is_criterion`
        self._globals: dict[str, dict[str, Value]] = {}
        self._classes: dict[ClassKey, ClassInfo] = {}
        self._summaries: dict[tuple, Summary] = {}
        self._collect_runs: dict[tuple, Summary] = {}  # keyed by id() of a live attribute table
        self._base_helper_runs: dict[tuple, tuple[Summary, dict[str, Value]] | None] = {}
        self._in_progress: set[tuple] = set()
        self._depth = 0
        self._global_reads: dict[str, frozenset[str]] = {}
        self._stars: dict[str, list[str]] = {}  # module path -> modules it star-imports
        self._star_lookups: dict[tuple, tuple] = {}  # (path, name) -> (value or None, files read)
        self._deferred: dict[tuple, list] = {}  # (path, name) -> [(module-level Assign, its module)]
        self._deferred_values: dict[tuple, tuple[Value, frozenset[str]]] = {}
        # Files read by each computation in progress, innermost last. Every cached result
        # (summary, class, module scope) keeps what it read, and a cache hit adds that to
        # the reader: a file's dependencies are exact, not everything this process read.
        self._reads: list[set[str]] = [set()]
        # id(FunctionDef) -> (the function, its Cfg, its unexported statements): a function
        # is run once per distinct arguments and per class whose __init__ reaches it.
        self._graphs: dict[int, tuple[ir.FunctionDef, Cfg, set[int]]] = {}
        self.caller_bounds: dict[ClassKey, tuple] = {}  # `caller_bounds`: (bounds, files read)
        self.attribute_writes: dict[int, tuple] = {}  # `submodule_sizes`: id(ClassDef) -> (it, writes)
        self.caller_origins: dict[ClassKey, tuple] = {}  # `caller_origins`: (passed-local inputs, files read)
        self.init_targets: dict[int, tuple] = {}  # `init_writes`: id(FunctionDef) -> (it, target ids)
        self.recording: dict[int, list] | None = None  # id(call) -> arguments bound there (`record_calls`)
        self.recorded_callee: ir.FunctionDef | None = None
        # Which file is which module depends on the files named (analyzer.module_index):
        # every question asked of the index is a dependency too, recorded as a read.
        project.on_lookup = lambda key: self._reads[-1].add(key)

    def forget(self, path: str) -> None:
        """Drop what was computed from `path` before it was (re)registered as the file
        being checked: its module scope and classes may differ from the on-disk copy."""
        for key in [k for k in self._globals if os.path.abspath(k) == os.path.abspath(path)]:
            del self._globals[key]
        self._stars.pop(path, None)
        self._star_lookups.clear()
        for key in [k for k in self._deferred if os.path.abspath(k[0]) == os.path.abspath(path)]:
            del self._deferred[key]
            self._deferred_values.pop(key, None)
        for key in [k for k in self._classes if os.path.abspath(k.path) == os.path.abspath(path)]:
            del self._classes[key]
        self._summaries = {k: v for k, v in self._summaries.items() if not _mentions(k, path)}
        self._collect_runs.clear()  # the tables they wrote into may be gone with the classes
        self._base_helper_runs.clear()
        self._graphs.clear()  # graphs of the replaced text's functions
        self.caller_bounds.clear()  # the callers' runs may have read the replaced text
        self.constant_flags.clear()
        self.training_flags.clear()
        self.criteria.clear()
        self.caller_origins.clear()

    # ================================================================ dependencies

    def begin_file(self) -> None:
        """Start recording the files the next file's analysis reads."""
        self._reads = [set()]

    def files_read(self) -> set[str]:
        """The files (absolute paths) read for the file begun last, including those behind
        every cached result it reused."""
        return self._reads[0]

    def _begin_reads(self) -> None:
        self._reads.append(set())

    def _end_reads(self) -> frozenset[str]:
        reads = self._reads.pop()
        self._reads[-1] |= reads
        return frozenset(reads)

    # ================================================================ entry points

    def analyze_module(self, module: ir.Module) -> list[Fact]:
        facts: list[Fact] = []
        for cls in module.body:
            if isinstance(cls, ir.ClassDef) and "forward" in cls.methods() \
                    and not is_unexported_class(self, ClassKey(module.path, cls.name)):
                facts.extend(self._forward_facts(module, cls))
        return _dedupe(facts)

    def analyze_class(self, key: ClassKey) -> list[Fact] | None:
        """The facts of one project class's own `forward` (what `analyze_module` reports
        for it), wherever the class is defined; None when it is not a class with a
        `forward` of its own in the scanned tree."""
        module = self.module_ir(key.path)
        cls = module.classes().get(key.name) if module is not None else None
        if cls is None or "forward" not in cls.methods():
            return None
        if _calls_super_forward(cls.methods()["forward"]) and self.find_method(key, "forward", after=key)[1] is None:
            return None  # `super().forward(x)` into a base outside the scanned tree: its hazards are unknown
        return _dedupe(self._forward_facts(module, cls))

    def _forward_facts(self, module: ir.Module, cls: ir.ClassDef) -> list[Fact]:
        forward = cls.methods()["forward"]
        key = ClassKey(module.path, cls.name)
        self_value = Value("module", ref=key)
        frame = Frame(module.path, forward.qualname, forward, module, self_value, key)
        args = bounded_entry(self, key, forward, self._entry_arguments(frame))
        facts = self._run(frame, args, memo_key=None).facts
        if writes_into_inputs(facts):
            local = localized_entry(self, key, forward, args)
            facts = self._run(frame, local, memo_key=None).facts if local != args else facts
        return facts

    def record_calls(self, key: ClassKey, calls: list, entry=None, callee=None) -> list[tuple[int, dict]] | None:
        """(id of the call, the arguments bound to the callee's parameters) for every time
        a run of the `forward` the class's instances run (own or inherited), with such a
        `self`, reached one of ``calls``; the run's arguments are ``entry(key, forward,
        arguments)`` when given (`caller_bounds.caller_arguments`). With ``callee`` (a
        `forward`), a call of either of several modules is bound to it, untranslated."""
        owner, forward = self.find_method(key, "forward")
        module = self.module_ir(owner.key.path) if forward is not None else None
        if module is None:
            return None
        frame = Frame(module.path, forward.qualname, forward, module, Value("module", ref=key), owner.key)
        args = self._entry_arguments(frame)
        args = entry(key, forward, args) if entry is not None else args
        outer, self.recording = (self.recording, self.recorded_callee), {id(c): [] for c in calls}
        self.recorded_callee = callee
        try:
            self._run(frame, args, memo_key=None)
        finally:
            recorded = self.recording
            self.recording, self.recorded_callee = outer
        return [(i, bound) for i, bounds in recorded.items() for bound in bounds]

    def _entry_arguments(self, frame: Frame) -> dict[str, Value]:
        """Forward's parameters: tensors unless annotated or defaulted otherwise."""
        args: dict[str, Value] = {}
        for i, p in enumerate(frame.fn.params):
            if i == 0 and p.kind in ("positional", "posonly") and p.name in ("self", "cls"):
                args[p.name] = frame.self_value
            elif p.kind == "vararg":
                args[p.name] = Value.container(Value.tensor(certain=False, origin="input"))
            elif p.kind == "kwarg":
                args[p.name] = Value("container", elem=UNKNOWN)
            else:
                args[p.name] = self._parameter_value(p, frame)
        return args

    def _parameter_value(self, p: ir.Param, frame: Frame) -> Value:
        ann = expr_text(p.annotation) if p.annotation is not None else ""
        if isinstance(p.default, ir.Const) and isinstance(p.default.value, (bool, int, float, str)):
            # `output_attentions: torch.Tensor | None = False`: the default says it is a flag.
            return entry_default(self, frame, p) or STATIC_PY
        if ann:
            subclass = self._tensor_class(ann, frame)
            if subclass is not None:
                # `edge_index: EdgeIndex`, a `torch.Tensor` subclass of the checked code: a
                # tensor input whose own methods are followed (`edge_index.get_csc()`).
                return Value.tensor(certain=True, origin="input", ref=subclass)
            if "Tensor" in ann and not any(w in ann for w in ("List", "list", "Tuple", "tuple", "Dict", "dict", "Sequence")):
                # `int | torch.Tensor`: maybe a Python number (`logits_to_keep: int | Tensor = 0`)
                scalar = any(m.strip() in ("int", "float", "bool", "str", "Number")
                             for m in re.split(r"[|,()\[\]]", ann))
                return Value.tensor(certain=not scalar, origin="input")
            if _tensors_only(ann):
                # `Optional[Tuple[torch.Tensor, torch.Tensor]]`: its items are tensors (unpacked,
                # each is a forward input, as an item of `*args` is).
                return Value.container(Value.tensor(certain=False, origin="input"))
            if used_as_tensor(p.name, frame.fn.body):
                # The annotation says otherwise (`batch: dict[str, Any]`), but the code uses it
                # as only a tensor is used (`batch.sum()`, `batch[:, 0]`): what the code does wins.
                return Value.tensor(certain=False, origin="input")
            if ann in ("int", "float", "bool", "str") or ann.startswith(("Optional[int", "Optional[bool", "Optional[float", "Optional[str")):
                return STATIC_PY
            if _sequence_of(ann, ("int", "float", "bool", "str")):
                # `label_set: Sequence[int] | None`: Python numbers the caller fixes, which a
                # tensor built from them (`torch.tensor(label_set)`) holds as constants.
                return Value.container(STATIC_PY)
            return Value("unknown")
        if p.default is not None:
            if isinstance(p.default, ir.Const) and p.default.value is None:
                return Value.tensor(certain=False, origin="input")
            return STATIC_PY
        return Value.tensor(certain=False, origin="input")

    def _tensor_class(self, ann: str, frame: Frame) -> ClassKey | None:
        """The project `torch.Tensor` subclass an annotation names as written (a plain name
        bound in the function's module), or None."""
        if not ann.isidentifier():
            return None
        value = self.global_value(frame.module, ann)
        value = self.resolve(value) if value is not None else None
        if value is None or value.type != "class" or not isinstance(value.ref, ClassKey):
            return None
        return value.ref if self.is_tensor_class(value.ref) else None

    # ================================================================ function runs

    def call_function(self, key, fn: ir.FunctionDef, module: ir.Module, args: dict[str, Value],
                      self_value: Value | None, class_key: ClassKey | None,
                      collect: dict | None = None, closure: dict | None = None) -> Summary:
        memo_key = None
        memo = self._summaries
        if closure is None:
            memo_key = (key, self_value, tuple(sorted(args.items(), key=lambda kv: kv[0])))
            if collect is not None:
                # A helper of __init__ writes `self.x = ...` into `collect`. Running it again
                # with the same arguments for the same table would write the same values, so
                # one run each is enough: without this, every pass of every caller's
                # fixpoint re-ran the whole chain (post_init -> init_weights -> ...).
                memo_key = (id(collect), *memo_key)
                memo = self._collect_runs
            if memo_key in memo:
                summary = memo[memo_key]
                self._reads[-1] |= summary.reads
                return summary
            if memo_key in self._in_progress or self._depth >= MAX_CALL_DEPTH:
                return Summary(UNKNOWN)
        frame = Frame(module.path, fn.qualname, fn, module, self_value, class_key, closure or {}, collect)
        return self._run(frame, args, memo_key, memo)

    def base_helper(self, key: FunctionKey, fn: ir.FunctionDef, owner: ClassKey, args: list[Value],
                    kwargs: dict, into: dict[str, Value]) -> Summary:
        """A method of a base class without `forward` (a framework base such as a
        `PreTrainedModel`), called on `self` while a subclass's attributes are collected
        (`super().__init__(config)`, `self.post_init()`): run once per arguments with
        `self` as the base class itself, and its `self.x = ...` writes joined into `into`.

        Run per subclass instead, the same chain (post_init -> init_weights ->
        tie_weights -> ...) cost more than the subclasses' own analysis. What is lost:
        inside the base's methods, `self.x` reads the base's attributes and `self.m()`
        calls the base's `m`, not a subclass's override; a base with `forward` (a model
        whose subclasses fill in hooks) is still run per subclass."""
        self_value = Value("module", ref=owner)
        bound = bind_arguments(fn, args, kwargs, self_value)
        memo_key = (key, tuple(sorted(bound.items(), key=lambda kv: kv[0])))
        if memo_key in self._base_helper_runs:
            done = self._base_helper_runs[memo_key]
            if done is None:
                return Summary(UNKNOWN)  # recursion through the base's own helpers
            summary, writes = done
            self._reads[-1] |= summary.reads
        else:
            self._base_helper_runs[memo_key] = None
            writes = {}
            module = self.module_ir(key.path)
            summary = self.call_function(key, fn, module, bound, self_value, owner, collect=writes)
            self._base_helper_runs[memo_key] = (summary, writes)
        for name, value in writes.items():
            into[name] = join(into.get(name), value)
        return summary

    def evaluate(self, expr, module: ir.Module, env: dict[str, Value]) -> Value:
        """See `ModuleScopes.evaluate`: an evaluator of no function, emitting no fact."""
        return ExpressionEvaluator(self, None, module).ev(expr, env)

    def is_framework_base(self, key: ClassKey) -> bool:
        return self.find_method(key, "forward")[1] is None

    def _run(self, frame: Frame, args: dict[str, Value], memo_key, memo: dict | None = None) -> Summary:
        if memo_key is not None:
            self._in_progress.add(memo_key)
        self._depth += 1
        self._begin_reads()
        try:
            summary = FunctionAnalysis(self, frame, args).run()
        except RecursionError:
            summary = Summary(UNKNOWN)
        finally:
            summary_reads = self._end_reads()
            self._depth -= 1
            if memo_key is not None:
                self._in_progress.discard(memo_key)
        summary.reads = summary_reads
        if memo_key is not None:
            (self._summaries if memo is None else memo)[memo_key] = summary
        return summary

    def function_graph(self, fn: ir.FunctionDef) -> tuple[Cfg, set[int]]:
        """The control-flow graph of `fn` and the ids of its statements an export does
        not run, built once per function (neither changes once built)."""
        known = self._graphs.get(id(fn))
        if known is None or known[0] is not fn:
            known = self._graphs[id(fn)] = (fn, Cfg(fn.body, fn.params), unexported_statements(fn.body))
        return known[1], known[2]


_CONTAINERS = ("Tuple", "tuple", "List", "list", "Sequence")


def _tensors_only(annotation: str) -> bool:
    """An annotation of a tuple, list or sequence whose items are all tensors
    (`Optional[Tuple[torch.Tensor, torch.Tensor]]`, `list[Tensor] | None`)."""
    return _sequence_of(annotation, ("Tensor",))


def _sequence_of(annotation: str, items_named) -> bool:
    """An annotation of one tuple, list or sequence whose items are all named one of
    ``items_named``."""
    names = [n for n in re.split(r"[\s,|()\[\]]+", annotation) if n and n not in ("Optional", "None", "...", "typing.Optional")]
    containers = [n for n in names if n.rsplit(".", 1)[-1] in _CONTAINERS]
    items = [n for n in names if n.rsplit(".", 1)[-1] not in _CONTAINERS]
    return len(containers) == 1 and names[0] is containers[0] and bool(items) \
        and all(n.rsplit(".", 1)[-1] in items_named for n in items)


def _calls_super_forward(fn: ir.FunctionDef) -> bool:
    for stmt in ir.walk_statements(fn.body):
        for e in ir.child_expressions(stmt):
            for sub in ir.walk_expression(e):
                if (isinstance(sub, ir.Attribute) and sub.attr == "forward" and isinstance(sub.value, ir.Call)
                        and isinstance(sub.value.func, ir.Name) and sub.value.func.id == "super"):
                    return True
    return False


def _mentions(memo_key, path: str) -> bool:
    key = memo_key[0]
    where = getattr(key, "path", None)
    return where is not None and os.path.abspath(where) == os.path.abspath(path)


def _dedupe(facts: list[Fact]) -> list[Fact]:
    """One fact per (IR node, kind): the highest level wins, then the shortest call path.
    Facts of one node (one helper reached by several call paths) share its span object;
    keying on it leaves ranges unresolved (see `Site`). Order: as first found."""
    best: dict[tuple, Fact] = {}
    for f in facts:
        key = (type(f).__name__, f.site.path, id(f.site.span), getattr(f, "construct", getattr(f, "how", "")))
        cur = best.get(key)
        if cur is None or _rank(f) > _rank(cur):
            best[key] = f
    return list(best.values())


def _rank(f: Fact) -> tuple:
    level = getattr(f, "level", None)
    if level is None:
        level = max(getattr(f, "bound_level", 0), getattr(f, "exit_level", 0))
    return (int(level), -len(f.site.call_path))


