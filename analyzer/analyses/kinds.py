"""The value-kind analysis: what every value depends on, and the facts that follow.

Requires: the IR of the file being checked, and a `Project` to resolve classes and
helpers in other files. Computes: a list of facts (`analyzer.analyses.facts`) for every
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
"""

from __future__ import annotations

import builtins
import os
from dataclasses import dataclass, field, replace

from analyzer.analyses import torch_api as api
from analyzer.analyses.cfg import Cfg, Node
from analyzer.analyses.dataflow import Analysis, solve
from analyzer.analyses.facts import BranchFact, EscapeFact, Fact, InplaceFact, IterationFact, LoopFact, OpFact, Site
from analyzer.analyses.levels import Level
from analyzer.analyses.project import ClassKey, FunctionKey, Project
from analyzer.analyses.values import DATA, NONE, SHAPE, STATIC, STATIC_PY, UNKNOWN, Value, join, join_all, type_tag
from analyzer.frontend import expr_text, ir
from analyzer.frontend.verify import assigned_names, target_names

MAX_CALL_DEPTH = 8
# Modules one star-import lookup may read. A name missing from a package that
# star-imports every submodule (`transformers.models`) would otherwise parse the package.
STAR_SEARCH_LIMIT = 32
_BUILTIN_NAMES = frozenset(dir(builtins))
RETURN = "$return"

_BOOL_METHODS = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor",
    "isnan", "isinf", "isfinite", "bool", "any", "all", "isclose", "isin", "signbit", "isneginf", "isposinf",
})
_ARITH_OPS = frozenset({"+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^"})


@dataclass
class Summary:
    returns: Value
    facts: list[Fact] = field(default_factory=list)
    reads: frozenset[str] = frozenset()  # the files this result was computed from


@dataclass
class ClassInfo:
    key: ClassKey
    node: ir.ClassDef
    bases: list[Value]
    attributes: dict[str, Value] | None = None  # filled lazily from __init__
    reads: frozenset[str] = frozenset()  # files read to resolve the bases
    attribute_reads: frozenset[str] = frozenset()  # files read to fill `attributes`


@dataclass
class Frame:
    """One function being analysed: where it lives and what `self` / closures are."""

    path: str
    qualname: str
    fn: ir.FunctionDef
    module: ir.Module
    self_value: Value | None = None
    class_key: ClassKey | None = None
    closure: dict[str, Value] = field(default_factory=dict)
    collect_attributes: dict[str, Value] | None = None  # __init__: where `self.x = v` goes


class KindAnalyzer:
    def __init__(self, project: Project):
        self.project = project
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
            if isinstance(cls, ir.ClassDef) and "forward" in cls.methods():
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
        return _dedupe(self._forward_facts(module, cls))

    def _forward_facts(self, module: ir.Module, cls: ir.ClassDef) -> list[Fact]:
        forward = cls.methods()["forward"]
        key = ClassKey(module.path, cls.name)
        self_value = Value("module", ref=key)
        frame = Frame(module.path, forward.qualname, forward, module, self_value, key)
        args = self._entry_arguments(frame)
        return self._run(frame, args, memo_key=None).facts

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
        if ann:
            if "Tensor" in ann and not any(w in ann for w in ("List", "list", "Tuple", "tuple", "Dict", "dict", "Sequence")):
                return Value.tensor(certain=True, origin="input")
            if ann in ("int", "float", "bool", "str") or ann.startswith(("Optional[int", "Optional[bool", "Optional[float", "Optional[str")):
                return STATIC_PY
            return Value("unknown")
        if p.default is not None:
            if isinstance(p.default, ir.Const) and p.default.value is None:
                return Value.tensor(certain=False, origin="input")
            return STATIC_PY
        return Value.tensor(certain=False, origin="input")

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
        bound = _bind_arguments(fn, args, kwargs, self_value)
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

    # ================================================================ module scope

    def module_ir(self, path: str) -> ir.Module | None:
        self._reads[-1].add(os.path.abspath(path))
        return self.project.module(path)

    def globals_of(self, module: ir.Module) -> dict[str, Value]:
        cached = self._globals.get(module.path)
        if cached is not None:
            self._reads[-1] |= self._global_reads.get(module.path, frozenset())
            return cached
        env: dict[str, Value] = {}
        self._globals[module.path] = env  # visible while being built: cyclic imports
        self._begin_reads()
        self._reads[-1].add(os.path.abspath(module.path))
        try:
            for stmt in module.body:
                self._bind_global(stmt, module, env)
        finally:
            self._global_reads[module.path] = self._end_reads()
        return env

    def _bind_global(self, stmt, module: ir.Module, env: dict[str, Value]) -> None:
        if isinstance(stmt, ir.Import):
            for name, value in self.import_bindings(stmt, module.path):
                env[name] = value
        elif isinstance(stmt, ir.ClassDef):
            env[stmt.name] = Value("class", ref=ClassKey(module.path, stmt.name))
        elif isinstance(stmt, ir.FunctionDef):
            env[stmt.name] = Value("function", ref=FunctionKey(module.path, stmt.name))
        elif isinstance(stmt, ir.Assign):
            if all(isinstance(t, ir.Name) for t in stmt.targets):
                # Evaluated on first use, like imports: module scopes of large packages
                # are full of registries and tables (`X = build_table(...)`) that no
                # forward reads, and evaluating them pulls in half the package. A name
                # assigned more than once (`try: X = a` / `except: X = b`) is the join.
                for t in stmt.targets:
                    key = (module.path, t.id)
                    self._deferred.setdefault(key, []).append((stmt, module))
                    env[t.id] = Value("deferred", ref=key)
                return
            value = ExpressionEvaluator(self, None, module).ev(stmt.value, env)
            for t in stmt.targets:
                if isinstance(t, ir.Name):
                    env[t.id] = value
        elif isinstance(stmt, ir.If):
            # `if TYPE_CHECKING:` / try-import blocks: bind both sides.
            for s in stmt.body + stmt.orelse:
                self._bind_global(s, module, env)
        elif isinstance(stmt, ir.Try):
            for s in stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse:
                self._bind_global(s, module, env)

    def import_bindings(self, stmt: ir.Import, path: str):
        if stmt.module is None:
            for name, asname in stmt.names:
                target = self.project.find_module(name)
                if asname:
                    yield asname, Value("pymodule", ref=target) if target else Value.ext(name)
                else:
                    top = name.split(".")[0]
                    target = self.project.find_module(top)
                    yield top, Value("pymodule", ref=target) if target and top not in ("torch", "numpy") else Value.ext(top)
            return
        dotted = self.project.resolve_relative(path, stmt.module, stmt.level)
        target = self.project.find_module(dotted) if (stmt.level or not dotted.startswith(("torch", "numpy"))) else None
        for name, asname in stmt.names:
            if name == "*":
                if target:
                    # Looked up name by name (`global_value`): expanding it here would
                    # read every module a package's `__init__` star-imports.
                    self._stars.setdefault(path, []).append(target)
                continue
            bound = asname or name
            if target:
                # Resolved on first use: most imported names are never evaluated.
                yield bound, Value("import", ref=(target, name, dotted))
                continue
            yield bound, Value.ext(f"{dotted}.{name}" if dotted else name)

    def global_value(self, module: ir.Module, name: str, _seen: set | None = None) -> Value | None:
        """What `name` is bound to at module level: the module's own bindings, then the
        public names of the modules it star-imports."""
        value = self.globals_of(module).get(name)
        if value is not None or name.startswith("_") or name in _BUILTIN_NAMES or module.path not in self._stars:
            return value
        if _seen is None:  # the outermost lookup: remembered, with the files it read
            cached = self._star_lookups.get((module.path, name))
            if cached is not None:
                self._reads[-1] |= cached[1]
                return cached[0]
            self._begin_reads()
            try:
                found = self.global_value(module, name, {module.path})
            finally:
                self._star_lookups[(module.path, name)] = (found, self._end_reads())
            return found
        for target in self._stars[module.path]:
            if target in _seen:
                continue
            if len(_seen) >= STAR_SEARCH_LIMIT:
                return None  # a package re-exporting a whole tree: not worth parsing it all
            _seen.add(target)
            other = self.module_ir(target)
            found = self.global_value(other, name, _seen) if other is not None else None
            if found is not None:
                return found
        return None

    def resolve(self, value: Value, _depth: int = 0) -> Value:
        """The value behind a lazy binding: `from project.module import name`, or a
        module-level assignment not evaluated yet."""
        if value.type == "deferred":
            return self._deferred_value(value.ref)
        if value.type != "import":
            return value
        target, name, dotted = value.ref
        module = self.module_ir(target)
        found = self.global_value(module, name) if module is not None else None
        if found is None:
            sub = self.project.find_module(f"{dotted}.{name}")
            return Value("pymodule", ref=sub) if sub else UNKNOWN
        return self.resolve(found, _depth + 1) if _depth < 16 else UNKNOWN

    def _deferred_value(self, key: tuple) -> Value:
        cached = self._deferred_values.get(key)
        if cached is not None:
            self._reads[-1] |= cached[1]
            return cached[0]
        if key in self._in_progress or key not in self._deferred:
            return UNKNOWN  # `X = f(X)`-like cycles through other modules
        self._in_progress.add(key)
        self._begin_reads()
        try:
            value = join_all(self.resolve(ExpressionEvaluator(self, None, module).ev(stmt.value, self.globals_of(module)))
                             for stmt, module in self._deferred[key]) or UNKNOWN
        finally:
            reads = self._end_reads()
            self._in_progress.discard(key)
        self._deferred_values[key] = (value, reads)
        return value

    # ================================================================ classes

    def class_info(self, key: ClassKey) -> ClassInfo | None:
        if key in self._classes:
            info = self._classes[key]
            self._reads[-1] |= info.reads
            return info
        self._begin_reads()
        try:
            module = self.module_ir(key.path)
            node = module.classes().get(key.name) if module is not None else None
            if node is None:
                return None
            env = self.globals_of(module)
            bases = [ExpressionEvaluator(self, None, module).ev(b, env) for b in node.bases]
        finally:
            reads = self._end_reads()
        info = ClassInfo(key, node, bases, reads=reads)
        self._classes[key] = info
        return info

    def mro(self, key: ClassKey, _seen=None):
        """Project classes in method-resolution order (depth first, good enough here)."""
        seen = _seen if _seen is not None else set()
        if key in seen:
            return
        seen.add(key)
        info = self.class_info(key)
        if info is None:
            return
        yield info
        for base in info.bases:
            if base.type == "class" and isinstance(base.ref, ClassKey):
                yield from self.mro(base.ref, seen)

    def find_method(self, key: ClassKey, name: str, after: ClassKey | None = None):
        skipping = after is not None
        for info in self.mro(key):
            if skipping:
                skipping = info.key != after
                continue
            method = info.node.methods().get(name)
            if method is not None:
                return info, method
        return None, None

    def external_bases(self, key: ClassKey) -> list[str]:
        return [b.ref for info in self.mro(key) for b in info.bases if b.type == "ext" and isinstance(b.ref, str)]

    def is_module_class(self, key: ClassKey) -> bool:
        if any(b.startswith("torch.nn") or b.endswith(("Module", "Model", "PreTrainedModel")) for b in self.external_bases(key)):
            return True
        return self.find_method(key, "forward")[1] is not None

    def attributes(self, key: ClassKey) -> dict[str, Value]:
        info = self.class_info(key)
        if info is None:
            return {}
        if info.attributes is not None:
            self._reads[-1] |= info.attribute_reads
            return info.attributes
        attrs: dict[str, Value] = {}
        info.attributes = attrs  # partial table visible to __init__ itself
        self._begin_reads()
        try:
            self._fill_attributes(key, attrs)
        finally:
            info.attribute_reads = self._end_reads()
        return attrs

    def _fill_attributes(self, key: ClassKey, attrs: dict[str, Value]) -> None:
        # Class-level assignments first (defaults, `__constants__`, annotations).
        for owner in reversed(list(self.mro(key))):
            module = self.module_ir(owner.key.path)
            for stmt in owner.node.body:
                if isinstance(stmt, ir.Assign) and module is not None:
                    env = self.globals_of(module)
                    if isinstance(stmt.value, ir.Name) and stmt.value.id in env:
                        # `config_class = BertConfig`: left as the lazy import it is bound to
                        # (resolved where it is read, `resolve`), since resolving it would
                        # parse the configuration file of every model for a name that
                        # forward hardly ever reads.
                        value = env[stmt.value.id]
                    else:
                        value = ExpressionEvaluator(self, None, module).ev(stmt.value, env)
                    for t in stmt.targets:
                        if isinstance(t, ir.Name):
                            attrs[t.id] = value
        owner, init = self.find_method(key, "__init__")
        if init is not None:
            module = self.module_ir(owner.key.path)
            args = {}
            for i, p in enumerate(init.params):
                if i == 0:
                    args[p.name] = Value("module", ref=key)
                elif p.default is not None:
                    args[p.name] = ExpressionEvaluator(self, None, module).ev(p.default, self.globals_of(module))
                    if args[p.name].type == "none":
                        args[p.name] = UNKNOWN
                elif p.kind in ("vararg", "kwarg"):
                    args[p.name] = Value("container", elem=UNKNOWN)
                else:
                    args[p.name] = STATIC_PY
            self.call_function(FunctionKey(owner.key.path, init.qualname), init, module, args,
                               Value("module", ref=key), owner.key, collect=attrs)


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


# ====================================================================== one function


class FunctionAnalysis:
    def __init__(self, analyzer: KindAnalyzer, frame: Frame, args: dict[str, Value]):
        self.analyzer = analyzer
        self.frame = frame
        self.args = args
        self.cfg, self.unexported = analyzer.function_graph(frame.fn)
        self.region_level: dict[int, Level] = {}
        self.loop_bound: dict[int, Level] = {}
        self.loop_exit: dict[int, Level] = {}
        self.loop_exit_lines: dict[int, list[int]] = {}
        self.folded_ifs: set[int] = set()
        self._written: dict[int, set[str]] = {}
        self._solved: dict | None = None  # the solved IN states, once solved (for `_record_types`)
        self.evaluator = ExpressionEvaluator(analyzer, frame, frame.module, self)

    # ------------------------------------------------------------------ solving

    def run(self) -> Summary:
        analysis = Analysis(
            forward=True,
            bottom=dict,
            join=_join_states,
            transfer=self.transfer,
            boundary=lambda: dict(self.args),
            accumulate=True,
        )
        for _ in range(8):
            before, after = solve(self.cfg, analysis)
            if not self._update_exit_levels():
                break
        facts: list[Fact] = []
        self.evaluator.sink = facts
        self._solved = before
        for node in self.cfg.reverse_postorder():
            state = before[node.id]
            if node.kind != "entry" and not node.pred:
                state = dict(self.args)  # unreachable code: still reported, from the inputs
            self.transfer(node, state)
        self.evaluator.sink = None
        facts.extend(self._loop_facts())
        returns = before[self.cfg.exit.id].get(RETURN, NONE if not _has_return_value(self.frame.fn) else UNKNOWN)
        return Summary(returns or NONE, facts)

    def _update_exit_levels(self) -> bool:
        """Loop exit levels from the regions around each break / return; True if any rose."""
        changed = False
        for node in self.cfg.nodes:
            if node.kind != "stmt" or not isinstance(node.stmt, (ir.Break, ir.Return)):
                continue
            loops = [i for i, r in enumerate(node.regions) if isinstance(r, ir.Loop)]
            if not loops:
                continue
            targets = loops[-1:] if isinstance(node.stmt, ir.Break) else loops
            for li in targets:
                loop = node.regions[li]
                inner = [r for r in node.regions[li + 1:] if isinstance(r, (ir.If, ir.Match))]
                level = max((self.region_level.get(id(r), STATIC) for r in inner), default=STATIC)
                if level >= SHAPE:
                    for r in inner:
                        if self.region_level.get(id(r), STATIC) >= SHAPE:
                            self.folded_ifs.add(id(r))
                    lines = self.loop_exit_lines.setdefault(id(loop), [])
                    if node.stmt.span.line not in lines:
                        lines.append(node.stmt.span.line)
                if level > self.loop_exit.get(id(loop), STATIC):
                    self.loop_exit[id(loop)] = level
                    new = max(level, self.loop_bound.get(id(loop), STATIC))
                    if new > self.region_level.get(id(loop), STATIC):
                        self.region_level[id(loop)] = new
                        changed = True
        return changed

    def _loop_facts(self) -> list[Fact]:
        facts = []
        for stmt in ir.walk_statements(self.frame.fn.body):
            if not isinstance(stmt, ir.Loop):
                continue
            bound = self.loop_bound.get(id(stmt), STATIC)
            exit_ = self.loop_exit.get(id(stmt), STATIC)
            if bound >= SHAPE or exit_ >= SHAPE:
                facts.append(LoopFact(self.site(stmt.span), stmt.kind, bound, exit_,
                                      tuple(self.loop_exit_lines.get(id(stmt), ())), self.frame.module.text(stmt.span)))
        return facts

    def site(self, span: ir.Span) -> Site:
        return Site(self.frame.path, function=self.frame.qualname, call_path=(self.frame.qualname,), span=span)

    def _taint_written(self, stmt, state: dict, level: Level) -> None:
        if level == STATIC:
            return
        names = self._written.get(id(stmt))
        if names is None:
            names = self._written[id(stmt)] = written_names(stmt)
        for name in names:
            if name in state:
                state[name] = state[name].tainted(level)

    def _record_types(self, stmt, state: dict, sink: list) -> None:
        """Attach to the branch fact just emitted for ``stmt`` the types the fixes need:
        every name and ``self.attr`` read in its branches and in the statements after
        it (a tail ``return`` makes them the other branch), the names it assigns as they
        are after it, and the function's result."""
        fact = sink[-1] if sink else None
        if not isinstance(fact, BranchFact) or fact.site.line != stmt.span.line:
            return
        ev = self.evaluator
        outer, ev.sink = ev.sink, None
        try:
            types: dict[str, str] = dict(fact.types)
            blocks = [stmt.body, stmt.orelse]
            body = self.frame.fn.body
            if any(s is stmt for s in body):
                blocks.append(body[[i for i, s in enumerate(body) if s is stmt][0] + 1:])
            for block in blocks:
                for s in ir.walk_statements(block):
                    for e in ir.child_expressions(s):
                        for sub in ir.walk_expression(e):
                            if isinstance(sub, ir.Name) and sub.id not in types:
                                types[sub.id] = type_tag(ev.ev(sub, dict(state)))
                            elif (isinstance(sub, ir.Attribute) and isinstance(sub.value, ir.Name)
                                  and sub.value.id == "self"):
                                types.setdefault(f"self.{sub.attr}", type_tag(ev.ev(sub, dict(state))))
            after = self._solved[self.cfg.join_of[id(stmt)].id] if self._solved else {}
            for name in assigned_names(stmt.body) | assigned_names(stmt.orelse):
                types[f"={name}"] = type_tag(after.get(name))
            if self._solved:
                types["$return"] = type_tag(self._solved[self.cfg.exit.id].get(RETURN))
        finally:
            ev.sink = outer
        sink[-1] = replace(fact, types=tuple(sorted(types.items())))

    def ctl_level(self, node: Node) -> Level:
        return max((self.region_level.get(id(r), STATIC) for r in node.regions), default=STATIC)

    def raise_region(self, stmt, level: Level) -> None:
        if level > self.region_level.get(id(stmt), STATIC):
            self.region_level[id(stmt)] = level

    # ------------------------------------------------------------------ transfer

    def transfer(self, node: Node, state: dict) -> dict:
        kind = node.kind
        if kind in ("entry", "exit"):
            return state
        state = dict(state)
        if kind == "join":
            # Control dependence: after a region, what it wrote depends on its predicate.
            self._taint_written(node.stmt, state, self.region_level.get(id(node.stmt), STATIC))
            return state
        ev = self.evaluator
        ev.ctl = self.ctl_level(node)
        s = node.stmt
        ev.unexported = id(s) in self.unexported
        if kind == "if":
            level = ev.predicate(s.test, state, "elif" if s.is_elif else "if", s.span,
                                 report=True, exits_loop=id(s) in self.folded_ifs)
            self.raise_region(s, level)
            if ev.sink and level >= DATA:
                self._record_types(s, state, ev.sink)
            return state
        if kind == "loop-init":
            if s.kind == "for":
                # Escapes in a data-dependent loop head (`range(int(t))`) are the loop's finding.
                outer, ev.sink = ev.sink, ([] if ev.sink is not None else None)
                try:
                    iterable = ev.ev(s.iter, state)
                finally:
                    inner, ev.sink = ev.sink, outer
                if inner:
                    folded = _as_index_level(iterable) >= DATA
                    outer.extend(f for f in inner if not (folded and isinstance(f, EscapeFact) and f.target == "python"))
                state[f"$iter{id(s)}"] = iterable
            return state
        if kind == "loop":
            # Values carried around the loop depend on how often it ran.
            self._taint_written(s, state, self.region_level.get(id(s), STATIC))
            if s.kind == "for":
                iterable = state.get(f"$iter{id(s)}", UNKNOWN)
                elem, level = ev.iterate(iterable, s.iter, "for", s.span)
                ev.bind(s.target, elem.tainted(level), state)
            else:
                level = ev.predicate(s.test, state, "while", s.span, report=False)
            if level > self.loop_bound.get(id(s), STATIC):
                self.loop_bound[id(s)] = level
            self.raise_region(s, max(level, self.loop_exit.get(id(s), STATIC)))
            return state
        if kind == "match":
            subject = ev.ev(s.subject, state)
            self.raise_region(s, max(subject.truth_level(), subject.level if subject.type != "tensor" else STATIC))
            return state
        if kind == "case":
            if node.case.guard is not None:
                self.raise_region(s, ev.predicate(node.case.guard, state, "if", node.case.guard.span, report=True))
            for name in node.case.bindings:
                state[name] = UNKNOWN
            return state
        if kind == "handler":
            if node.case.name:
                state[node.case.name] = UNKNOWN
            return state
        if kind == "with":
            for ctx, target in s.items:
                value = ev.ev(ctx, state)
                if target is not None:
                    ev.bind(target, UNKNOWN if value.type != "tensor" else value, state)
            return state
        self.statement(s, state)
        return state

    def statement(self, s, state: dict) -> None:
        ev = self.evaluator
        if isinstance(s, ir.Assign):
            value = ev.ev(s.value, state)
            for t in s.targets:
                ev.bind(t, value, state)
        elif isinstance(s, ir.AugAssign):
            current = ev.ev(s.target, state)
            value = ev.binop(s.op, current, ev.ev(s.value, state))
            ev.bind(s.target, value, state, augmented=True)
        elif isinstance(s, ir.ExprStmt):
            ev.ev(s.value, state)
        elif isinstance(s, ir.Return):
            value = ev.ev(s.value, state) if s.value is not None else NONE
            state[RETURN] = join(state.get(RETURN), value.tainted(ev.ctl))
        elif isinstance(s, ir.Assert):
            ev.predicate(s.test, state, "assert", s.span, report=True)
            if s.msg is not None:
                ev.ev(s.msg, state)
        elif isinstance(s, ir.Raise):
            if s.exc is not None:
                ev.ev(s.exc, state)
        elif isinstance(s, ir.Import):
            for name, value in self.analyzer.import_bindings(s, self.frame.path):
                state[name] = value
        elif isinstance(s, ir.FunctionDef):
            state[s.name] = Value("function", ref=("nested", id(s)), elems=None)
            self.evaluator.nested[id(s)] = s
        elif isinstance(s, ir.ClassDef):
            state[s.name] = UNKNOWN
        elif isinstance(s, ir.Delete):
            for t in s.targets:
                if isinstance(t, ir.Name):
                    state.pop(t.id, None)
                else:
                    ev.ev(t, state)
        elif isinstance(s, ir.Opaque):
            for e in s.reads:
                ev.ev(e, state)


def unexported_statements(body) -> set[int]:
    """ids of the statements an export of an eval-mode module on tensors does not run, or
    may not: `if self.training:` bodies, `if torch.jit.is_scripting():` bodies, bodies
    for non-tensors (`if not isinstance(x, torch.Tensor):`), quantized-only code
    (`if x.is_quantized:`), and the `else` of the negated forms. The ops they call are
    not reported as exported ops (their branch and escape facts still are)."""
    out: set[int] = set()
    for block in [body] + [b for s in ir.walk_statements(body) for b in ir.child_blocks(s)]:
        for i, stmt in enumerate(block):
            # `if not self.training: return x` -- what follows runs in training only.
            if isinstance(stmt, ir.If) and _true_in_export(stmt.test) and stmt.body \
                    and isinstance(stmt.body[-1], (ir.Return, ir.Raise)):
                out.update(id(s) for s in ir.walk_statements(block[i + 1:]))
                break
    for stmt in ir.walk_statements(body):
        if not isinstance(stmt, ir.If):
            continue
        test, negated = stmt.test, False
        if isinstance(test, ir.UnaryOp) and test.op == "not":
            test, negated = test.operand, True
        conjuncts = test.values if isinstance(test, ir.BoolOp) and test.op == "and" and not negated else [test]
        if any(_skipped_when_true(c) for c in conjuncts):
            out.update(id(s) for s in ir.walk_statements(stmt.orelse if negated else stmt.body))
        elif not negated and _is_tensor_check(test):
            out.update(id(s) for s in ir.walk_statements(stmt.orelse))
        elif negated and _is_tensor_check(test):
            out.update(id(s) for s in ir.walk_statements(stmt.body))
    return out


def _skipped_when_true(expr) -> bool:
    """A condition that is false when an eval-mode module is exported on float tensors,
    or whose value then is unknown (quantized inputs)."""
    if isinstance(expr, ir.Attribute):
        return (expr.attr == "training" and isinstance(expr.value, ir.Name) and expr.value.id == "self") \
            or expr.attr == "is_quantized"
    return isinstance(expr, ir.Call) and not expr.args and expr_text(expr.func) in (
        "torch.jit.is_scripting", "jit.is_scripting")


def _true_in_export(expr) -> bool:
    """`not self.training` / `not torch.jit.is_scripting()`, alone or or-ed with anything."""
    if isinstance(expr, ir.BoolOp) and expr.op == "or":
        return any(_true_in_export(v) for v in expr.values)
    return (isinstance(expr, ir.UnaryOp) and expr.op == "not" and _skipped_when_true(expr.operand)
            and not (isinstance(expr.operand, ir.Attribute) and expr.operand.attr == "is_quantized"))


def _is_tensor_check(expr) -> bool:
    """`isinstance(x, torch.Tensor)`."""
    return (isinstance(expr, ir.Call) and expr_text(expr.func) == "isinstance" and len(expr.args) == 2
            and expr_text(expr.args[1].value) in ("torch.Tensor", "Tensor"))


_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop", "remove", "clear"})


def written_names(stmt) -> set[str]:
    """Names a compound statement's regions bind or mutate (`lst.append`, `d[k] = v`)."""
    blocks = ir.child_blocks(stmt)
    names = set().union(*(assigned_names(b) for b in blocks)) if blocks else set()
    names |= mutated_names(stmt)
    if isinstance(stmt, ir.Loop) and stmt.target is not None:
        names |= target_names(stmt.target)
    return names


def mutated_names(stmt) -> set[str]:
    """Names whose object a compound statement's regions change in place: `lst.append(v)`,
    `t[i] = v`, `t[i] += v`, `x.add_(1)`."""
    names: set[str] = set()
    for b in ir.child_blocks(stmt):
        for s in ir.walk_statements(b):
            for e in ir.child_expressions(s):
                for sub in ir.walk_expression(e):
                    if (isinstance(sub, ir.Call) and isinstance(sub.func, ir.Attribute)
                            and isinstance(sub.func.value, ir.Name)
                            and (sub.func.attr in _MUTATORS or api.is_inplace_method(sub.func.attr))):
                        names.add(sub.func.value.id)
            targets = s.targets if isinstance(s, ir.Assign) else [s.target] if isinstance(s, ir.AugAssign) else []
            for t in targets:
                if isinstance(t, ir.Subscript) and isinstance(t.value, ir.Name):
                    names.add(t.value.id)
    return names


def _join_states(a: dict, b: dict) -> dict:
    if not a:
        return dict(b)
    if not b:
        return a
    out = dict(a)
    for k, v in b.items():
        mine = out.get(k)
        if mine is not v:
            out[k] = join(mine, v)
    return out


def _has_return_value(fn: ir.FunctionDef) -> bool:
    return any(isinstance(s, ir.Return) and s.value is not None for s in ir.walk_statements(fn.body))


# ====================================================================== expressions


class ExpressionEvaluator:
    """Evaluates IR expressions to abstract values; emits facts when `sink` is set."""

    def __init__(self, analyzer: KindAnalyzer, frame: Frame | None, module: ir.Module, function=None):
        self.analyzer = analyzer
        self.frame = frame
        self.module = module
        self.function = function
        self.sink: list[Fact] | None = None
        self.ctl: Level = STATIC
        self.unexported = False  # evaluating a statement that an export does not run
        self.nested: dict[int, ir.FunctionDef] = {}

    # ------------------------------------------------------------------ facts

    def emit(self, fact: Fact) -> None:
        if self.sink is not None:
            self.sink.append(fact)

    def site(self, span: ir.Span) -> Site:
        if self.function is not None:
            return self.function.site(span)
        return Site(self.module.path, span=span)

    def text(self, node) -> str:
        return self.module.text(node.span) or expr_text(node)

    def predicate(self, test, state, construct: str, span: ir.Span, report: bool, exits_loop: bool = False) -> Level:
        """Evaluate a branch / loop predicate. Escapes and `and`/`or` inside a predicate
        that is itself reported are folded into its finding."""
        outer = self.sink
        inner: list[Fact] | None = [] if outer is not None else None
        self.sink = inner
        try:
            value = self.ev(test, state)
        finally:
            self.sink = outer
        level = value.truth_level()
        if isinstance(test, (ir.BoolOp, ir.UnaryOp)) or value.type == "tensor":
            level = max(level, self._bool_level(test, state))
        if outer is not None:
            folded = level >= SHAPE if report else level >= DATA
            for f in inner:
                if folded and isinstance(f, (EscapeFact,)) and f.target == "python":
                    continue
                if folded and isinstance(f, BranchFact) and f.construct in ("and", "or"):
                    continue
                outer.append(f)
            if report and level >= SHAPE:
                site = self.site(span)
                outer.append(BranchFact(site, construct, level, self.text(test), exits_loop,
                                        types=(("$pred", type_tag(value)),)))
        return level

    def _bool_level(self, test, state) -> Level:
        if isinstance(test, ir.BoolOp):
            return max((self._bool_level(v, state) for v in test.values), default=STATIC)
        if isinstance(test, ir.UnaryOp) and test.op == "not":
            return self._bool_level(test.operand, state)
        sink, self.sink = self.sink, None
        try:
            return self.ev(test, dict(state)).truth_level()
        finally:
            self.sink = sink

    # ------------------------------------------------------------------ binding

    def bind(self, target, value: Value, state: dict, augmented: bool = False) -> None:
        if isinstance(target, ir.Name):
            state[target.id] = value
        elif isinstance(target, (ir.Tuple, ir.List)):
            elems = self.unpack(value, target, len(target.elts))
            for t, v in zip(target.elts, elems):
                self.bind(t, v, state)
        elif isinstance(target, ir.Starred):
            self.bind(target.value, Value.container(value), state)
        elif isinstance(target, ir.Subscript):
            base = self.ev(target.value, state)
            self.ev(target.index, state)
            if base.type == "tensor":
                self.emit(InplaceFact(self.site(target.span), "index-assign", self.text(target)))
            elif base.type == "container" and isinstance(target.value, ir.Name):
                state[target.value.id] = replace(base, elem=join(base.elem, value), elems=None)
        elif isinstance(target, ir.Attribute):
            owner = self.ev(target.value, state)
            collect = self.frame.collect_attributes if self.frame is not None else None
            if collect is not None and owner.type == "module" and isinstance(target.value, ir.Name) and target.value.id == "self":
                prior = collect.get(target.attr)
                prior = self.analyzer.resolve(prior) if prior is not None else None
                collect[target.attr] = join(prior, _as_attribute(value))

    def unpack(self, value: Value, target, n: int) -> list[Value]:
        if value.type == "container" and value.elems is not None and len(value.elems) == n and not _has_star(target):
            return list(value.elems)
        if value.type == "tensor":
            if value.certain:
                self.emit(IterationFact(self.site(target.span), "unpack", self.text(target)))
            return [Value.tensor(value.certain, value.shape_level)] * n
        if value.type in ("container", "modules"):
            level = value.level
            return [(value.elem or UNKNOWN).tainted(level)] * n
        if value.type == "python":
            return [value] * n
        return [UNKNOWN.tainted(value.level)] * n

    def iterate(self, iterable: Value, node, how: str, span) -> tuple[Value, Level]:
        """(element value, level of the trip count) for `for x in iterable`."""
        if iterable.type == "tensor":
            if iterable.certain:
                self.emit(IterationFact(self.site(span), how, self.text(node)))
            return Value.tensor(iterable.certain, iterable.shape_level), STATIC
        if iterable.type == "modules":
            return iterable.elem or UNKNOWN, iterable.ctl
        if iterable.type == "container":
            return iterable.elem or UNKNOWN, max(iterable.level, iterable.ctl)
        if iterable.type == "python":
            return Value.python(iterable.level), iterable.level
        if iterable.type == "unknown":
            return UNKNOWN.tainted(iterable.level), STATIC
        return UNKNOWN, STATIC

    # ------------------------------------------------------------------ expressions

    def ev(self, e, state: dict) -> Value:
        method = getattr(self, "_ev_" + type(e).__name__, None)
        if method is None:
            return UNKNOWN
        return method(e, state)

    def _ev_Const(self, e, state):
        return NONE if e.value is None else STATIC_PY

    def _ev_FormattedString(self, e, state):
        for v in e.values:
            self.ev(v, state)
        return STATIC_PY

    def _ev_Name(self, e, state):
        if e.id in state:
            value = state[e.id]
        elif self.frame is not None and e.id in self.frame.closure:
            value = self.frame.closure[e.id]
        else:
            value = self.analyzer.global_value(self.module, e.id)
            if value is None:
                return Value.ext("builtins." + e.id)
        return self.analyzer.resolve(value)

    def _ev_Starred(self, e, state):
        return self.ev(e.value, state)

    def _ev_NamedExpr(self, e, state):
        value = self.ev(e.value, state)
        state[e.target.id] = value
        return value

    def _ev_Tuple(self, e, state):
        return self._sequence(e, state)

    def _ev_List(self, e, state):
        return self._sequence(e, state)

    def _ev_Set(self, e, state):
        return self._sequence(e, state)

    def _sequence(self, e, state):
        values = [self.ev(x, state) for x in e.elts]
        if any(isinstance(x, ir.Starred) for x in e.elts):
            return Value.container(join_all(v.elem if v.type == "container" else v for v in values) or UNKNOWN,
                                   level=max((v.level for v in values if v.type == "container"), default=STATIC))
        return Value.container(elems=tuple(values))

    def _ev_Dict(self, e, state):
        values = [self.ev(v, state) for k, v in e.items] + [self.ev(k, state) for k, v in e.items if k is not None]
        return Value.container(join_all(values[: len(e.items)]) or UNKNOWN, ref="dict")

    def _ev_Slice(self, e, state):
        parts = [self.ev(x, state) for x in (e.lower, e.upper, e.step) if x is not None]
        return Value("python", max((_as_index_level(p) for p in parts), default=STATIC), ref="slice")

    def _ev_Lambda(self, e, state):
        return Value("function", ref=("lambda", id(e)))

    def _ev_OpaqueExpr(self, e, state):
        for c in e.children:
            self.ev(c, state)
        return UNKNOWN

    def _ev_Attribute(self, e, state):
        base = self.ev(e.value, state)
        return self.attribute(base, e.attr, e)

    def attribute(self, base: Value, attr: str, node) -> Value:
        t = base.type
        if t == "ext":
            return Value.ext(f"{base.ref}.{attr}")
        if t == "pymodule":
            module = self.analyzer.module_ir(base.ref) if base.ref else None
            if module is None:
                return UNKNOWN
            return self.analyzer.resolve(self.analyzer.global_value(module, attr) or UNKNOWN)
        if t == "tensor":
            if attr in api.SHAPE_ATTRIBUTES:
                lvl = base.shape_level
                if attr == "ndim":
                    return Value.python(lvl)
                return Value.container(Value.python(lvl), level=lvl, ref="shape")
            if attr in api.STATIC_ATTRIBUTES:
                return STATIC_PY
            if attr in api.TENSOR_ATTRIBUTES:
                return replace(base, origin=None)
            return Value("method", ref=attr, elem=base)
        if t == "module":
            return self.module_attribute(base, attr, node)
        if t == "modules":
            return Value("method", ref=attr, elem=base)
        if t == "class":
            info = self.analyzer.class_info(base.ref) if isinstance(base.ref, ClassKey) else None
            if info is not None:
                owner, method = self.analyzer.find_method(base.ref, attr)
                if method is not None:
                    return Value("function", ref=FunctionKey(owner.key.path, method.qualname))
            return STATIC_PY
        if t in ("container", "python", "none"):
            if t == "container" and attr in ("shape",):
                return Value.container(Value.python(base.level), level=base.level, ref="shape")
            return Value("method", ref=attr, elem=base)
        if t == "unknown":
            if attr in api.SHAPE_ATTRIBUTES:
                return Value.container(Value.python(SHAPE), level=SHAPE, ref="shape")
            return Value("method", ref=attr, elem=base) if base.level >= DATA else UNKNOWN
        return UNKNOWN

    def module_attribute(self, base: Value, attr: str, node) -> Value:
        if attr == "training":
            return STATIC_PY
        key = base.ref
        if isinstance(key, ClassKey):
            attrs = self.analyzer.attributes(key)
            if attr in attrs:
                return self.analyzer.resolve(attrs[attr])
            owner, method = self.analyzer.find_method(key, attr)
            if method is not None:
                decorators = {expr_text(d) for d in method.decorators}
                bound = Value("function", ref=FunctionKey(owner.key.path, method.qualname),
                              elem=None if "staticmethod" in decorators else base)
                if "property" in decorators or any(d.endswith(".getter") for d in decorators):
                    return self.call(bound, [], {}, node, {})
                return bound
            if attr in ("weight", "bias"):
                return Value.tensor(origin="parameter")
            return UNKNOWN
        if isinstance(key, str):
            if attr in ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias",
                        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "pe", "num_batches_tracked"):
                return Value.tensor(origin="parameter")
            if attr in ("forward", "__call__"):
                return base
            return STATIC_PY
        return UNKNOWN

    def _ev_Subscript(self, e, state):
        base = self.ev(e.value, state)
        index = self.ev(e.index, state)
        return self.subscript(base, index, e.index)

    def subscript(self, base: Value, index: Value, index_node) -> Value:
        t = base.type
        if t == "tensor":
            shape_level = max(base.shape_level, _index_shape_level(index))
            return Value.tensor(base.certain, shape_level)
        if t == "container":
            if base.elems is not None and isinstance(index_node, ir.Const) and isinstance(index_node.value, int):
                try:
                    return base.elems[index_node.value]
                except IndexError:
                    return UNKNOWN
            if isinstance(index_node, ir.Slice) or (index.type == "python" and index.ref == "slice"):
                return replace(base, elems=None, level=max(base.level, index.level))
            elem = base.elem or UNKNOWN
            return elem.tainted(max(index.level, base.ctl)) if elem.type != "tensor" else elem
        if t == "modules":
            return base.elem or UNKNOWN
        if t == "python":
            return Value.python(max(base.level, index.level))
        if t == "unknown":
            return UNKNOWN.tainted(base.level)
        if t == "ext":
            return base  # typing subscripts: Optional[Tensor]
        return UNKNOWN

    def _ev_BinOp(self, e, state):
        left, right = self.ev(e.left, state), self.ev(e.right, state)
        if e.op == "//" and (left.is_certain_tensor or right.is_certain_tensor) and not self.unexported:
            self.emit(OpFact(self.site(e.span), "operator.floordiv", "//"))
        return self.binop(e.op, left, right)

    def binop(self, op: str, a: Value, b: Value) -> Value:
        if a.type == "tensor" or b.type == "tensor":
            tensors = [v for v in (a, b) if v.type == "tensor"]
            certain = any(v.certain for v in tensors)
            others = [v for v in (a, b) if v.type != "tensor"]
            if not certain and any(v.type in ("unknown",) for v in others):
                return UNKNOWN.tainted(max(a.ctl, b.ctl))
            ref = "bool" if op in ("&", "|", "^") and all(v.ref == "bool" for v in tensors) else None
            return Value.tensor(certain, max(v.shape_level for v in tensors), ref=ref)
        if a.type == "container" and b.type == "container" and op == "+":
            elems = a.elems + b.elems if a.elems is not None and b.elems is not None else None
            return Value.container(join(a.elem, b.elem), elems=elems, level=max(a.level, b.level), ref=a.ref)
        if a.type == "container" and op == "*":
            return Value.container(a.elem, level=max(a.level, b.level))
        if a.type in ("python", "none") and b.type in ("python", "none"):
            return Value.python(max(a.level, b.level))
        if a.type == "unknown" or b.type == "unknown":
            return Value("unknown", max(a.level, b.level))
        return Value("unknown", max(a.level, b.level))

    def _ev_UnaryOp(self, e, state):
        v = self.ev(e.operand, state)
        if e.op == "not":
            if v.is_certain_tensor:
                self.emit(EscapeFact(self.site(e.span), "bool", "python", self.text(e)))
            return Value.python(v.truth_level())
        if v.type == "tensor" and e.op == "~":
            return v
        return v if v.type in ("tensor", "python", "unknown") else UNKNOWN

    def _ev_Compare(self, e, state):
        values = [self.ev(e.left, state)] + [self.ev(c, state) for c in e.comparators]
        if all(op in ("is", "is not") for op in e.ops):
            return Value.python(max(v.identity_level() for v in values))
        if any(op in ("in", "not in") for op in e.ops):
            if any(v.type == "tensor" for v in values):
                return UNKNOWN
            return Value.python(max((v.level for v in values if v.type in ("python", "container")), default=STATIC))
        tensors = [v for v in values if v.type == "tensor"]
        if tensors:
            certain = any(v.certain for v in tensors)
            if not certain and any(v.type == "unknown" for v in values):
                return UNKNOWN
            return Value.tensor(certain, max(v.shape_level for v in tensors), ref="bool")
        if any(v.type == "unknown" for v in values):
            return Value("unknown", max(v.level for v in values))
        return Value.python(max(max(v.level for v in values), max(v.ctl for v in values)))

    def _ev_BoolOp(self, e, state):
        values = []
        level = STATIC
        for i, sub in enumerate(e.values):
            v = self.ev(sub, state)
            values.append(v)
            if i < len(e.values) - 1:
                truth = v.truth_level()
                level = max(level, truth)
                if truth >= DATA and v.is_certain_tensor:
                    self.emit(BranchFact(self.site(e.span), e.op, DATA, self.text(e)))
        result = join_all(values) or UNKNOWN
        return result.tainted(level) if result.type != "tensor" else result

    def _ev_IfExp(self, e, state):
        level = self.predicate(e.test, state, "ifexp", e.span, report=True)
        emitted = len(self.sink) - 1 if self.sink and level >= SHAPE else None
        body = self.ev(e.body, state)
        orelse = self.ev(e.orelse, state)
        if emitted is not None and isinstance(self.sink[emitted], BranchFact):
            fact = self.sink[emitted]  # the sides' types, for the torch.where fix
            self.sink[emitted] = replace(fact, types=fact.types + (("$else", type_tag(orelse)), ("$then", type_tag(body))))
        return (join(body, orelse) or UNKNOWN).tainted(level)

    def _ev_Comprehension(self, e, state):
        inner = dict(state)
        level = STATIC
        for g in e.generators:
            iterable = self.ev(g.iter, inner)
            elem, lvl = self.iterate(iterable, g.iter, "comprehension", g.iter.span)
            level = max(level, lvl)
            self.bind(g.target, elem, inner)
            for cond in g.ifs:
                level = max(level, self.predicate(cond, inner, "if", cond.span, report=True))
        elt = self.ev(e.elt, inner)
        if e.key is not None:
            self.ev(e.key, inner)
        if e.kind == "generator":
            return Value.container(elt, level=level, ref="generator")
        return Value.container(elt, level=level, ref=e.kind)

    # ------------------------------------------------------------------ calls

    def _ev_Call(self, e, state):
        func = self.ev(e.func, state)
        args = []
        kwargs = {}
        for a in e.args:
            v = self.ev(a.value, state)
            if a.star == "*":
                args.append(Value("starred", elem=v))
            elif a.star == "**":
                kwargs["**"] = v
            elif a.keyword is not None:
                kwargs[a.keyword] = v
            else:
                args.append(v)
        # `lst.append(v)` grows a Python list: the list's length is as dynamic as the branch.
        if isinstance(e.func, ir.Attribute) and isinstance(e.func.value, ir.Name) and e.func.attr in ("append", "extend", "insert", "add", "update", "setdefault"):
            owner = state.get(e.func.value.id)
            if owner is not None and owner.type == "container":
                added = args[-1] if args else UNKNOWN
                if e.func.attr == "extend" and added.type == "container":
                    added = added.elem or UNKNOWN
                state[e.func.value.id] = replace(owner, elems=None, elem=join(owner.elem, added))
                return NONE
        return self.call(func, args, kwargs, e, state)

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
                return Value("module", ref=key)
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
            bound = _bind_arguments(fn, args, kwargs, None)
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
        bound = _bind_arguments(fn, args, kwargs, self_value)
        module = self.analyzer.module_ir(key.path)
        if collecting:
            # A helper called from __init__ (`self._build()`): its `self.x = ...` count too.
            summary = self.analyzer.call_function(key, fn, module, bound, self_value, class_key, collect=collect)
        else:
            summary = self.analyzer.call_function(key, fn, module, bound, self_value, class_key)
        self._forward_facts(summary)
        return summary.returns

    def _forward_facts(self, summary: Summary) -> None:
        if self.sink is None or self.frame is None:
            return
        for f in summary.facts:
            if self.unexported and isinstance(f, OpFact):
                continue  # called from code that an export does not run
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
                return Value.tensor(origin="parameter")
            if cls.startswith(("torch.nn.init.", "torch.nn.utils.")):
                return args[0] if args else UNKNOWN
            return Value("module", ref=cls)
        if api.is_static_function(qualname):
            return STATIC_PY
        self.emit_op(qualname, node)
        if name in api.SHAPE_FUNCTIONS:
            tensor = next((a for a in args if a.type == "tensor"), None)
            return Value.python(tensor.shape_level if tensor else SHAPE)
        if not api.returns_tensor(qualname):
            return _unknown_result(args, kwargs)
        tensors = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor"]
        shape_level = max([a.shape_level for a in tensors] + [_as_index_level(a) for a in args if a.type == "python"] + [SHAPE])
        shape_level = max(shape_level, *[_as_index_level(v) for k, v in kwargs.items() if k in ("size", "end", "start", "steps")] or [STATIC])
        if name in api.TUPLE_FUNCTIONS or (name in api.TUPLE_WITH_DIM_FUNCTIONS and (len(args) > 1 and args[1].type == "python" or "dim" in kwargs)):
            return Value.container(Value.tensor(True, shape_level))
        if (name == "torch.where" and len(args) == 1 and not kwargs) or (name == "torch.nonzero" and kwargs.get("as_tuple")):
            return Value.container(Value.tensor(True, DATA))  # one index tensor per dimension
        if name in api.DATA_SHAPE_FUNCTIONS:
            return Value.tensor(True, DATA)
        if name in ("torch.cond",):
            return Value.tensor(True, shape_level)
        ref = "bool" if name.rsplit(".", 1)[-1] in _BOOL_METHODS else None
        return Value.tensor(True, shape_level, ref=ref)

    def call_builtin(self, name: str, args, kwargs, node) -> Value:
        first = args[0] if args else UNKNOWN
        if name in api.TENSOR_TO_PYTHON_BUILTINS:
            if first.is_certain_tensor:
                self.emit(EscapeFact(self.site(node.span), name, "python", self.text(node)))
                return Value.python(DATA)
            if first.type == "tensor":
                return Value.python(first.ctl)
            return Value.python(first.level if first.type in ("python", "unknown", "container") else STATIC)
        if name == "len":
            if first.type == "tensor":
                return Value.python(first.shape_level)
            if first.type in ("container", "python"):
                return Value.python(max(first.level, first.ctl))
            return STATIC_PY
        if name == "range":
            level = max((_as_index_level(a) for a in args), default=STATIC)
            return Value.container(Value.python(level), level=level, ref="range")
        if name in ("enumerate", "reversed", "iter", "sorted", "list", "tuple", "set", "frozenset"):
            if first.type == "tensor":
                if first.certain:
                    self.emit(IterationFact(self.site(node.span), name if name in ("list", "tuple", "enumerate") else "for", self.text(node)))
                return Value.container(Value.tensor(first.certain, first.shape_level))
            if first.type in ("container", "modules"):
                elem = first.elem
                if name == "enumerate":
                    elem = Value.container(elems=(STATIC_PY, first.elem or UNKNOWN))
                if name in ("list", "tuple") and first.elems is not None:
                    return replace(first, type="container", ref=name)
                return Value.container(elem or UNKNOWN, level=max(first.level, first.ctl))
            if first.type == "python":
                return Value.container(Value.python(first.level), level=first.level)
            return Value.container(UNKNOWN)
        if name == "zip":
            level = STATIC
            elems = []
            for a in args:
                if a.type == "tensor":
                    if a.certain:
                        self.emit(IterationFact(self.site(node.span), "zip", self.text(node)))
                    elems.append(Value.tensor(a.certain, a.shape_level))
                elif a.type in ("container", "modules"):
                    level = max(level, a.level)
                    elems.append(a.elem or UNKNOWN)
                else:
                    elems.append(UNKNOWN)
            return Value.container(Value.container(elems=tuple(elems)), level=level)
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
                return Value.tensor(any(a.certain for a in tensors), max(a.shape_level for a in tensors))
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
                    collect[node.args[0].value.value] = Value.tensor(origin="parameter")
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
            return Value.python(shape_level)
        if name in api.STATIC_METHODS:
            return STATIC_PY
        if name == "type" and not args and not kwargs:
            return STATIC_PY
        if name in api.PYTHON_ESCAPE_METHODS:
            self.emit(EscapeFact(self.site(node.span), name, "python", self.text(node)))
            if name == "tolist":
                # Its values are data; its length is the tensor's size.
                return Value.container(Value.python(DATA), level=shape_level)
            return Value.python(DATA)
        if name in api.NUMPY_ESCAPE_METHODS:
            self.emit(EscapeFact(self.site(node.span), name, "numpy", self.text(node)))
            return Value.python(DATA)
        if name in api.INDEX_PUT_METHODS:
            self.emit(InplaceFact(self.site(node.span), "index_put_", self.text(node)))
            return recv
        if api.is_inplace_method(name):
            if recv.origin == "input":
                self.emit(InplaceFact(self.site(node.span), "inplace-input", self.text(node)))
            return recv
        tensors = [a for a in list(args) + list(kwargs.values()) if a.type == "tensor"]
        level = max([shape_level] + [a.shape_level for a in tensors] + [_as_index_level(a) for a in args if a.type in ("python", "container")])
        if name in api.TUPLE_METHODS or (name in api.TUPLE_WITH_DIM_METHODS and (args and args[0].type == "python" or "dim" in kwargs)):
            return Value.container(Value.tensor(True, level))
        if name in api.DATA_SHAPE_METHODS:
            return Value.tensor(True, DATA)
        return Value.tensor(True, level, ref="bool" if name in _BOOL_METHODS else None)


# ====================================================================== helpers


def _as_attribute(value: Value) -> Value:
    """What `self.x = value` makes `self.x` in forward: parameters and tensors stay
    tensors; Python values computed in __init__ are configuration (static)."""
    if value.type == "tensor":
        return Value.tensor(True, SHAPE, origin="parameter")
    if value.type in ("python", "none", "container"):
        return replace(value, level=STATIC, ctl=STATIC) if value.type != "container" else replace(
            value, level=STATIC, ctl=STATIC, elems=None, elem=_as_attribute(value.elem) if value.elem else None)
    return replace(value, ctl=STATIC)


def _as_index_level(v: Value) -> Level:
    """Level of a Python value used as a size, bound or index."""
    if v.type in ("python", "container"):
        return max(v.level, v.ctl)
    if v.type == "unknown":
        return v.level if v.level < DATA else STATIC
    return STATIC


def _index_shape_level(index: Value) -> Level:
    if index.type == "tensor":
        return DATA if index.ref == "bool" else index.shape_level
    if index.type == "container" and index.elems is not None:
        return max((_index_shape_level(e) for e in index.elems), default=STATIC)
    return _as_index_level(index)


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


def _has_star(target) -> bool:
    return isinstance(target, (ir.Tuple, ir.List)) and any(isinstance(e, ir.Starred) for e in target.elts)


def _bind_arguments(fn: ir.FunctionDef, args: list[Value], kwargs: dict, self_value: Value | None) -> dict[str, Value]:
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
