"""Export call sites: what each ``torch.onnx.export`` / ``torch.export.export`` call in a
file asks for, and whether the module it exports is in eval mode there.

``callsite_facts(module) -> list[CallSiteFact]`` is a pure function of one file's IR.
It requires nothing from the value-kind analysis; the UT4xx rules combine its facts
with the kind facts of the same file (which class's ``forward`` has which hazard).

Eval mode is a forward "must" analysis over each body (the module's top level, and
every function body separately), on straight-line code with structured ``if``:

    mode_out(s) = transfer(s, mode_in(s))
    mode_in(if) flows into both branches; mode_out(if) = join(then_out, else_out)
    join(EVAL, EVAL) = EVAL, join(TRAIN, EVAL|TRAIN) = TRAIN, join(_, UNKNOWN) = UNKNOWN

where a branch ending in ``return``/``raise``/``continue``/``break`` does not reach the
join. Loops, ``try`` and ``match`` keep a name's mode only if their bodies leave it
unchanged, otherwise it becomes UNKNOWN. A name is TRAIN only from a constructor call
(``Net(...)``, a class defined in the file or a capitalised callee) or ``m.train()``;
it is EVAL after ``m.eval()`` / ``m.train(False)`` (also chained:
``m = Net().eval()``); anything else (a parameter, a loader's result, a module passed
to an unknown function) is UNKNOWN, and UNKNOWN is never reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.analyses.kinds.facts import Site
from analyzer.fixes.callsite_fact import CallSiteFact
from analyzer.frontend import ir

__all__ = ["CallSiteFact", "callsite_facts"]


ONNX_EXPORT = "torch.onnx.export"
EXPORT_EXPORT = "torch.export.export"
EXPORTERS = {ONNX_EXPORT: "model", EXPORT_EXPORT: "mod"}  # exporter -> keyword name of the module argument

EVAL, TRAIN, UNKNOWN = "eval", "train", "unknown"

# nn.Module methods that return the module itself and keep its mode.
_SELF_RETURNING = frozenset({"to", "cpu", "cuda", "float", "double", "half", "bfloat16", "requires_grad_", "share_memory"})
# nn.Module methods that leave the mode alone (anything else on the module: UNKNOWN).
_MODE_PRESERVING = _SELF_RETURNING | {"load_state_dict", "zero_grad", "parameters", "named_parameters",
                                      "state_dict", "modules", "named_modules", "children", "buffers"}


@dataclass(frozen=True, slots=True)
class _Value:
    mode: str
    cls: str | None = None
    # TRAIN only by the module's own flag: built here, and handed no module in training
    # mode (`.train()` switches every child; `Cls(...)` only the new module and what its
    # `__init__` builds).
    own_flag: bool = False


_UNKNOWN = _Value(UNKNOWN)


def dotted(expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(expr, ir.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ir.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _aliases(module: ir.Module) -> dict[str, str]:
    """Top-level import aliases: local name -> canonical dotted name."""
    out = {}
    for stmt in ir.walk_statements(module.body, into_defs=True, mentioning=("import",)):
        if not isinstance(stmt, ir.Import) or stmt.level:
            continue
        for name, asname in stmt.names:
            if name == "*":
                continue
            if stmt.module is None:
                if asname:
                    out[asname] = name
                # `import torch.onnx` binds `torch`: the dotted use resolves as written
            else:
                out[asname or name] = f"{stmt.module}.{name}"
    return out


class _Pass:
    def __init__(self, module: ir.Module):
        self.module = module
        self.aliases = _aliases(module)
        # What an exporter call's text holds: `export`, or a name imported as one
        self.exporter_words = ("export", *(alias for alias, name in self.aliases.items() if name in EXPORTERS))
        self.local_classes = set(module.classes())
        self.facts: list[CallSiteFact] = []

    # ----------------------------------------------------------------- names

    def canonical(self, expr) -> str | None:
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.aliases:
            name = self.aliases[head] + ("." + rest if rest else "")
        return name

    def exporter(self, call) -> str | None:
        if not isinstance(call, ir.Call):
            return None
        name = self.canonical(call.func)
        return name if name in EXPORTERS else None

    def constructed_class(self, call: ir.Call) -> str | None:
        """The class a constructor call builds (dotted, as written: `models.Net`), if
        the callee looks like a class."""
        name = dotted(call.func)
        if name is None or self.exporter(call):
            return None
        last = name.rsplit(".", 1)[-1]
        if last in self.local_classes or last[:1].isupper():
            return name
        return None

    # ----------------------------------------------------------------- values

    def value(self, expr, env: dict[str, _Value]) -> _Value:
        """Mode of the module an expression evaluates to."""
        if isinstance(expr, ir.Name):
            return env.get(expr.id, _UNKNOWN)
        if isinstance(expr, ir.Call) and not self.exporter(expr):
            func = expr.func
            if isinstance(func, ir.Attribute):
                mode = _mode_call(func.attr, expr)
                if mode is not None:
                    return _Value(mode, self.value(func.value, env).cls) if mode != UNKNOWN else _UNKNOWN
                if func.attr in _SELF_RETURNING:
                    inner = self.value(func.value, env)
                    if inner.mode != UNKNOWN:
                        return inner
            cls = self.constructed_class(expr)
            if cls is not None:
                handed = [a.value for a in expr.args]
                return _Value(TRAIN, cls, own_flag=all(self.value(a, env).mode != TRAIN for a in handed))
        return _UNKNOWN

    # ----------------------------------------------------------------- bodies

    def run_scope(self, body: list, function: str | None) -> None:
        saved = getattr(self, "function", None)
        self.function = function
        self.block(body, {}, report=True)
        for stmt in body:
            self.nested(stmt)
        self.function = saved

    def nested(self, stmt) -> None:
        """Function bodies inside `stmt` are scopes of their own. One that names neither
        `export` nor an alias of an exporter calls none: a deferred one is not read."""
        if isinstance(stmt, ir.FunctionDef):
            if ir.may_mention(stmt, self.exporter_words):
                self.run_scope(stmt.body, stmt.qualname or stmt.name)
            return
        if isinstance(stmt, ir.ClassDef):
            for s in stmt.body:
                self.nested(s)
            return
        for block in ir.child_blocks(stmt):
            for s in block:
                self.nested(s)

    def block(self, body: list, env: dict[str, _Value], report: bool) -> tuple[dict[str, _Value], bool]:
        """(env after the block, whether control reaches its end)."""
        env = dict(env)
        for stmt in body:
            if isinstance(stmt, (ir.Return, ir.Raise, ir.Continue, ir.Break)):
                self.expressions(stmt, env, report)
                return env, False
            env = self.statement(stmt, env, report)
        return env, True

    def statement(self, stmt, env: dict[str, _Value], report: bool) -> dict[str, _Value]:
        if isinstance(stmt, ir.If):
            self.expressions(stmt, env, report)
            then_env, then_falls = self.block(stmt.body, env, report)
            else_env, else_falls = self.block(stmt.orelse, env, report)
            reaching = [e for e, falls in ((then_env, then_falls), (else_env, else_falls)) if falls]
            if not reaching:
                return env
            return _join_paths(reaching)
        if isinstance(stmt, ir.With):
            self.expressions(stmt, env, report)
            for _, target in stmt.items:
                if target is not None:
                    _forget_targets(target, env)
            after, _ = self.block(stmt.body, env, report)
            return after
        if isinstance(stmt, (ir.Loop, ir.Try, ir.Match)):
            self.expressions(stmt, env, report=report)
            outs = [env]
            for block in ir.child_blocks(stmt):
                outs.append(self.block(block, env, report)[0])
            joined = _join_unsure(outs)
            if isinstance(stmt, ir.Loop) and stmt.target is not None:
                _forget_targets(stmt.target, joined)
            return joined
        if isinstance(stmt, (ir.FunctionDef, ir.ClassDef)):
            env = dict(env)
            env.pop(stmt.name, None)
            return env
        if isinstance(stmt, (ir.Global, ir.Nonlocal)):
            return {k: v for k, v in env.items() if k not in stmt.names}
        if isinstance(stmt, ir.Import):
            env = dict(env)
            for name, asname in stmt.names:
                env.pop((asname or name).split(".")[0], None)
            return env
        env = dict(env)
        # The assigned value's mode is read before the statement's calls mark what they
        # are handed as unknown (`w = Wrapper(model)` is handed `model` in training mode).
        val = self.value(stmt.value, env) if isinstance(stmt, ir.Assign) else None
        self.expressions(stmt, env, report)
        if isinstance(stmt, ir.Assign):
            for target in stmt.targets:
                if isinstance(target, ir.Name):
                    env[target.id] = val
                else:
                    _forget_targets(target, env)
        elif isinstance(stmt, (ir.AugAssign, ir.Delete)):
            for target in [stmt.target] if isinstance(stmt, ir.AugAssign) else stmt.targets:
                _forget_targets(target, env)
        elif isinstance(stmt, ir.Opaque):
            for expr in stmt.reads:
                for node in ir.walk_expression(expr):
                    if isinstance(node, ir.Name):
                        env.pop(node.id, None)
        return env

    def expressions(self, stmt, env: dict[str, _Value], report: bool) -> None:
        """Report exporter calls evaluated by `stmt` (its head only), then apply the mode
        effects of its calls to `env` in place."""
        roots = ir.child_expressions(stmt)
        calls = [n for root in roots for n in ir.walk_expression(root) if isinstance(n, ir.Call)]
        if report:
            for call in calls:
                name = self.exporter(call)
                if name is not None:
                    self.export_site(call, name, env)
        for call in calls:
            func = call.func
            if isinstance(func, ir.Attribute) and isinstance(func.value, ir.Name) and func.value.id in env:
                mode = _mode_call(func.attr, call)
                current = env[func.value.id]
                if mode is not None:
                    env[func.value.id] = _Value(mode, current.cls)
                elif func.attr not in _MODE_PRESERVING:
                    env[func.value.id] = _UNKNOWN
            if self.exporter(call):
                continue
            for arg in call.args:
                for node in ir.walk_expression(arg.value):
                    if isinstance(node, ir.Name) and node.id in env:
                        env[node.id] = _UNKNOWN  # handed to code we do not see
        for root in roots:
            for node in ir.walk_expression(root):
                if isinstance(node, ir.NamedExpr):
                    env.pop(node.target.id, None)

    # ----------------------------------------------------------------- one call

    def export_site(self, call: ir.Call, exporter: str, env: dict[str, _Value]) -> None:
        positional = call.positional
        model = positional[0] if positional else call.keyword(EXPORTERS[exporter])
        val = self.value(model, env) if model is not None else _UNKNOWN
        callee = val.cls
        cls = callee.rsplit(".", 1)[-1] if callee else None
        local = callee in self.local_classes

        def fact(kind, detail, span):
            site = Site(self.module.path, span.line, span.column, span.end_line, span.end_column, self.function)
            self.facts.append(CallSiteFact(site, kind, detail, cls, local, callee, own_flag=val.own_flag))

        if val.mode == TRAIN:
            fact("export-without-eval", self.module.text(model.span) or "the module", call.span)
        if exporter == ONNX_EXPORT:
            dynamo = call.keyword("dynamo")
            if isinstance(dynamo, ir.Const) and dynamo.value is False:
                fact("legacy-export", exporter, dynamo.span)
            opset = call.keyword("opset_version")
            if isinstance(opset, ir.Const) and type(opset.value) is int:
                fact("old-opset", str(opset.value), opset.span)
        for keyword in ("dynamic_axes", "dynamic_shapes"):
            declared = call.keyword(keyword)
            if declared is not None and not (isinstance(declared, ir.Const) and declared.value is None):
                fact("dynamic-export", keyword, declared.span)


def _mode_call(method: str, call: ir.Call) -> str | None:
    """EVAL/TRAIN when `call` is `.eval()` / `.train(...)` with a known mode, else None."""
    if method == "eval" and not call.args:
        return EVAL
    if method == "train":
        arg = call.positional[0] if call.positional else call.keyword("mode")
        if arg is None:
            return TRAIN if not call.args else None
        if isinstance(arg, ir.Const) and isinstance(arg.value, bool):
            return TRAIN if arg.value else EVAL
        return UNKNOWN
    return None


def _forget_targets(target, env: dict[str, _Value]) -> None:
    for node in ir.walk_expression(target):
        if isinstance(node, ir.Name):
            env.pop(node.id, None)


def _join_paths(envs: list[dict[str, _Value]]) -> dict[str, _Value]:
    """Both paths reach here: TRAIN on one path is TRAIN; any UNKNOWN is UNKNOWN."""
    out = {}
    for name in set(envs[0]).intersection(*envs[1:]):
        vals = [e[name] for e in envs]
        modes = {v.mode for v in vals}
        classes = {v.cls for v in vals}
        cls = classes.pop() if len(classes) == 1 else None
        if UNKNOWN in modes:
            continue
        out[name] = _Value(TRAIN if TRAIN in modes else EVAL, cls, all(v.own_flag for v in vals if v.mode == TRAIN))
    return out


def _join_unsure(envs: list[dict[str, _Value]]) -> dict[str, _Value]:
    """Paths we do not model precisely (loops, try, match): keep only what all agree on."""
    out = {}
    for name in set(envs[0]).intersection(*envs[1:]):
        vals = {envs[i][name] for i in range(len(envs))}
        if len(vals) == 1:
            out[name] = vals.pop()
    return out


def callsite_facts(module: ir.Module) -> list[CallSiteFact]:
    """Every exporter call site's facts, in source order."""
    if "export" not in module.source:
        return []  # every exporter call names `export` (or imports it by that name): none here
    p = _Pass(module)
    p.run_scope(module.body, None)
    return sorted(p.facts, key=lambda f: (f.site.line, f.site.column, f.kind))

