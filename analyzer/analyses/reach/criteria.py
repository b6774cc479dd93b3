"""Training criteria read from dataflow: a function whose every result is a loss. In

    def forward(self, text, feats, durations):
        outs = self.decoder(self.encoder(text), durations)
        l1, dur = self.criterion(outs, feats, durations)      # a loss module
        loss = l1 + dur
        stats = dict(l1=l1.item(), dur=dur.item())             # reported to Python
        return loss, stats, text.size(0)

every `return` hands back a loss first, and the losses are reported to Python: the
function is the training step of the model, which an export never runs (inference goes
through another method). The hazards of such a step (`loss.item()` for its statistics,
asserts and loops on ground-truth lengths) are no export's.

A *loss* is, by dataflow:
- the result of a loss function of `torch.nn.functional` (`cross_entropy`, `*_loss`, ...);
- the result of calling a submodule that is a loss: a `torch.nn` `*Loss` module, a
  project class that `loss_targets.is_loss_class` says is one, a class outside the
  checked tree constructed as `SomeLoss(...)`, or one whose `forward` returns a loss first
  (`return ce, dur, accuracy`);
- the result of calling a method of the same class that returns a loss first;
- anything computed from a loss (`l1 + dur`, `loss.mean()`, `sum(losses)`, a list that
  losses are appended to, a literal dict of losses).

A name is a loss only when every assignment to it is (a number it is accumulated from,
`loss = 0.0; loss += ...`, or an empty list the losses are appended to, count too): the
model `forward` that computes `loss = None` and then a loss only `if labels is not None`,
and returns `loss, logits`, returns predictions on the export's path and stays an export
entry, its prediction code checked.

A function is a criterion when it returns something, and every `return` returns a loss,
or a tuple, list or dict whose first item is a loss and (the statistics of a training
step) whose function converts a loss to Python (`loss.item()`, `float(loss)`) or calls
`loss.backward()`."""

from __future__ import annotations

from analyzer.analyses.project.index import ClassKey
from analyzer.frontend import expr_text, ir

# `torch.nn.functional`'s loss functions whose names do not end in `_loss`.
_FUNCTIONAL_LOSSES = frozenset({
    "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "nll_loss", "ctc_loss", "linear_cross_entropy",
})
_TO_PYTHON_METHODS = frozenset({"item", "tolist"})
_TO_PYTHON_BUILTINS = frozenset({"float", "int"})


def is_criterion_class(analyzer, key: ClassKey) -> bool:
    """Whether the `forward` the project class ``key`` runs (own or inherited) is a criterion."""
    owner, forward = analyzer.find_method(key, "forward")
    return forward is not None and is_criterion(analyzer, owner.key, key, forward)


def is_criterion(analyzer, owner: ClassKey | None, key: ClassKey | None, fn: ir.FunctionDef) -> bool:
    """Whether ``fn`` (a method of ``owner``, run by an instance of ``key``, or a plain
    function when both are None) is a training criterion, as the module docstring says."""
    return _decision(analyzer, owner, key, fn)[1]


def returns_a_loss_first(analyzer, owner: ClassKey | None, key: ClassKey | None, fn: ir.FunctionDef) -> bool:
    """Whether every `return` of ``fn`` hands back a loss, or a tuple, list or dict whose
    first item is one (`return ce, dur, accuracy`): what a call of it gives is a loss, the
    loss function of a criterion, whether or not ``fn`` is one itself."""
    return _decision(analyzer, owner, key, fn)[0]


def _decision(analyzer, owner, key, fn) -> tuple[bool, bool]:
    memo = analyzer.criteria
    memo_key = (key, id(fn))
    if memo_key in memo:
        return memo[memo_key] or (False, False)
    memo[memo_key] = None  # in progress: a recursive call is no evidence
    module = analyzer.module_ir(owner.path) if owner is not None else None
    try:
        result = _Criterion(analyzer, key, module).decide(fn)
    except RecursionError:
        result = (False, False)  # too deep to read: unsure, so an entry as any other
    memo[memo_key] = result
    return result


class _Criterion:
    def __init__(self, analyzer, key, module):
        self.analyzer = analyzer
        self.key = key
        self.module = module
        self._globals = None
        self.losses: set[str] = set()  # names (and `self.x` texts) holding a loss
        self.assigned: dict[str, list] = {}
        self._known: dict[int, tuple[int, bool]] = {}  # id(expression) -> (len(losses), is a loss)
        self._mentioned: dict[int, tuple[int, bool]] = {}  # ... (len(losses), a part of it is one)

    def decide(self, fn: ir.FunctionDef) -> tuple[bool, bool]:
        """(every return hands back a loss first, ``fn`` is a criterion)."""
        returns = [s for s in ir.walk_statements(fn.body) if isinstance(s, ir.Return)]
        if not returns or any(r.value is None for r in returns):
            return False, False
        assigned = self.assigned = _assignments(fn.body)
        while True:  # grow the names holding a loss until a pass adds none
            grown = {name for name, values in assigned.items()
                     if name not in self.losses and self._all_losses(name, values)}
            if not grown:
                break
            self.losses |= grown
        if not self.losses and not any(self.is_loss(r.value) for r in returns):
            return False, False
        with_more = False  # a return hands back more than losses (statistics, accuracies)
        for r in returns:
            if self.is_loss(r.value):
                continue
            first = _first_item(r.value)
            if first is None or not self.is_loss(first):
                return False, False
            with_more |= not all(self.is_loss(item) for item in _items(r.value))
        return True, not with_more or self._reports_a_loss(fn)

    def _all_losses(self, name: str, values: list) -> bool:
        """Every value assigned to ``name`` is a loss, an accumulator's start, or an empty
        container that losses fill; and at least one is a loss."""
        some = False
        for v in values:
            if isinstance(v, _Accumulated):
                some |= self.is_loss(v.value)  # another term added: a sum with a loss is one
            elif _mentions(v, name):
                continue  # `loss = loss * w`, `loss, stats = gather((loss, stats))`: an update of itself
            elif self.is_loss(v):
                some = True
            elif not _is_start(v):
                return False
        return some

    def is_loss(self, e) -> bool:
        """Whether ``e`` is a loss, given the names known to hold one (memoised until a
        name is added: a deeply nested expression is read once)."""
        known = self._known.get(id(e))
        if known is not None and known[0] == len(self.losses):
            return known[1]
        result = self._is_loss(e)
        self._known[id(e)] = (len(self.losses), result)
        return result

    def _is_loss(self, e) -> bool:
        if isinstance(e, (ir.Name, ir.Attribute)) and expr_text(e) in self.losses:
            return True
        if isinstance(e, ir.BinOp):
            return self.is_loss(e.left) or self.is_loss(e.right)
        if isinstance(e, ir.UnaryOp):
            return self.is_loss(e.operand)
        if isinstance(e, ir.Subscript):
            return self.is_loss(e.value)
        if isinstance(e, ir.IfExp):
            return self.is_loss(e.body) and self.is_loss(e.orelse)
        if isinstance(e, ir.Call):
            return self._call_is_loss(e)
        items = _items(e)  # a literal tuple, list or dict of losses (`{"adv": adv, "mel": mel}`)
        return bool(items) and all(self.is_loss(x) for x in items)

    def _call_is_loss(self, call: ir.Call) -> bool:
        func = call.func
        if isinstance(func, ir.Attribute):
            if self.is_loss(func.value):
                return True  # `loss.mean()`, `loss.float()`
            if isinstance(func.value, ir.Name) and func.value.id == "self" and self.key is not None:
                if self._self_call_is_loss(func.attr):
                    return True
        if self._functional_loss(func):
            return True
        if isinstance(func, ir.Name) and func.id in self.assigned and self.key is not None:
            # `ctc = self.asr_ctc if asr else self.st_ctc; ctc(hs, ys)`: a local alias of submodules
            aliases = self.assigned[func.id]
            if all(_self_attribute(v) for v in aliases) and all(self._self_call_is_loss(v.attr) for v in aliases):
                return True
        # anything else computed from a loss (`sum(losses)`, `torch.stack([a, b])`)
        return any(self._mentions_loss(a.value) for a in call.args)

    def _mentions_loss(self, e) -> bool:
        """Whether ``e`` or a part of it is a loss."""
        known = self._mentioned.get(id(e))
        if known is not None and known[0] == len(self.losses):
            return known[1]
        result = self.is_loss(e) or any(self._mentions_loss(x) for x in ir.child_expressions(e))
        self._mentioned[id(e)] = (len(self.losses), result)
        return result

    def _self_call_is_loss(self, attr: str) -> bool:
        """`self.criterion(...)` of a loss submodule, or `self._step(...)` of a criterion method."""
        owner, method = self.analyzer.find_method(self.key, attr)
        if method is not None:
            return returns_a_loss_first(self.analyzer, owner.key, self.key, method)
        value = self.analyzer.attributes(self.key).get(attr)
        if value is None or value.type == "unknown":
            return self._constructed_as_loss(attr)
        if value.type != "module":
            return False
        ref = value.ref
        if isinstance(ref, str):
            return ref.startswith("torch.nn.") and ref.endswith("Loss")
        if isinstance(ref, ClassKey):
            from analyzer.analyses.reach.loss_targets import is_loss_class
            if is_loss_class(self.analyzer, ref):
                return True
            owner, forward = self.analyzer.find_method(ref, "forward")
            return forward is not None and returns_a_loss_first(self.analyzer, owner.key, ref, forward)
        return False

    def _constructed_as_loss(self, attr: str) -> bool:
        """`self.criterion = SomeLoss(...)` in `__init__`, of a class outside the checked
        tree: a loss by PyTorch's naming convention (`nn.L1Loss`), as `is_loss_class` reads
        a class's own name."""
        owner, init = self.analyzer.find_method(self.key, "__init__")
        if init is None:
            return False
        built = [s.value for s in ir.walk_statements(init.body) if isinstance(s, ir.Assign)
                 and any(_self_attribute(t) and t.attr == attr for t in s.targets)]
        return bool(built) and all(isinstance(v, ir.Call) and expr_text(v.func).endswith("Loss") for v in built)

    def _functional_loss(self, func) -> bool:
        """A loss function of `torch.nn.functional`, however it was imported."""
        if self.module is None or not isinstance(func, (ir.Name, ir.Attribute)):
            return False
        if isinstance(func, ir.Attribute) and isinstance(func.value, ir.Name) and func.value.id == "self":
            return False
        if self._globals is None:
            self._globals = self.analyzer.globals_of(self.module)
        value = self.analyzer.evaluate(func, self.module, self._globals)
        ref = value.ref if isinstance(value.ref, str) else ""
        prefix, _, name = ref.rpartition(".")
        return prefix == "torch.nn.functional" and (name.endswith("_loss") or name in _FUNCTIONAL_LOSSES)

    def _reports_a_loss(self, fn: ir.FunctionDef) -> bool:
        """A loss converted to Python (`loss.item()`, `float(loss)`) or back-propagated."""
        for s in ir.walk_statements(fn.body):
            for top in ir.child_expressions(s):
                for e in ir.walk_expression(top):
                    if not isinstance(e, ir.Call):
                        continue
                    if isinstance(e.func, ir.Attribute) and e.func.attr in (*_TO_PYTHON_METHODS, "backward") \
                            and self.is_loss(e.func.value):
                        return True
                    if isinstance(e.func, ir.Name) and e.func.id in _TO_PYTHON_BUILTINS and len(e.args) == 1 \
                            and self.is_loss(e.args[0].value):
                        return True
        return False


class _Accumulated:
    """A term added to a name (`loss += x`) or an item appended to it (`losses.append(x)`)."""

    def __init__(self, value):
        self.value = value


def _assignments(body) -> dict[str, list]:
    """name (or `self.x` text) -> the values assigned to it, in order; the items of a
    tuple target get the whole value (what is unpacked from a loss flows from it)."""
    out: dict[str, list] = {}
    overwritten = _overwritten_nones(body)
    for s in ir.walk_statements(body):
        if isinstance(s, ir.Assign) and id(s) not in overwritten:
            for t in s.targets:
                for name in _target_names(t):
                    out.setdefault(name, []).append(s.value)
        elif isinstance(s, ir.AugAssign):
            for name in _target_names(s.target):
                out.setdefault(name, []).append(_Accumulated(s.value))
        elif isinstance(s, ir.Loop) and s.target is not None:
            for name in _target_names(s.target):
                out.setdefault(name, []).append(s.iter)
        elif isinstance(s, ir.With):
            for ctx, target in s.items:
                if target is not None:
                    for name in _target_names(target):
                        out.setdefault(name, []).append(ctx)
        elif isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call) and isinstance(s.value.func, ir.Attribute) \
                and s.value.func.attr in ("append", "extend") and len(s.value.args) == 1:
            owner = s.value.func.value
            if isinstance(owner, (ir.Name, ir.Attribute)):
                out.setdefault(expr_text(owner), []).append(_Accumulated(s.value.args[0].value))
    return out


def _overwritten_nones(body) -> set[int]:
    """ids of the assignments `x = None` that a later statement of the same block assigns
    `x` again, unconditionally and before any `return` (`self.loss = None; ...;
    self.loss = F.cross_entropy(...)`): no `return` sees their None. The guards the front
    end adds for an early `return` (`synthetic` ifs) continue the block."""
    out: set[int] = set()
    blocks = [body] + [b for s in ir.walk_statements(body) for b in ir.child_blocks(s)]
    for block in blocks:
        for i, s in enumerate(block):
            if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Const) and s.value.value is None):
                continue
            names = {n for t in s.targets for n in _target_names(t)}
            if names and _assigned_before_return(block[i + 1:], names):
                out.add(id(s))
    return out


def _assigned_before_return(block, names: set[str]) -> bool:
    names = set(names)
    for st in block:
        if isinstance(st, ir.If) and st.synthetic and not st.orelse:
            if _assigned_before_return(st.body, names):
                return True
            continue
        if any(isinstance(x, ir.Return) for x in ir.walk_statements([st])):
            return False
        if isinstance(st, ir.Assign):
            names -= {n for t in st.targets for n in _target_names(t)}
            if not names:
                return True
    return False


def _target_names(t) -> list[str]:
    if isinstance(t, ir.Name):
        return [t.id]
    if isinstance(t, ir.Attribute) and isinstance(t.value, ir.Name) and t.value.id == "self":
        return [expr_text(t)]
    if isinstance(t, (ir.Tuple, ir.List)):
        return [n for x in t.elts for n in _target_names(x)]
    if isinstance(t, ir.Starred):
        return _target_names(t.value)
    return []


def _mentions(e, name: str) -> bool:
    return any(isinstance(x, (ir.Name, ir.Attribute)) and expr_text(x) == name for x in ir.walk_expression(e))


def _self_attribute(v) -> bool:
    return isinstance(v, ir.Attribute) and isinstance(v.value, ir.Name) and v.value.id == "self"


def _is_start(v) -> bool:
    """A number an accumulation starts from, or an empty list or dict to be filled."""
    if isinstance(v, ir.Const):
        return isinstance(v.value, (int, float)) and not isinstance(v.value, bool)
    if isinstance(v, (ir.List, ir.Tuple)):
        return not v.elts
    return isinstance(v, ir.Dict) and not v.items


def _items(e) -> list:
    if isinstance(e, (ir.Tuple, ir.List)):
        return list(e.elts)
    return [v for _, v in e.items] if isinstance(e, ir.Dict) else []


def _first_item(e):
    if isinstance(e, (ir.Tuple, ir.List)) and e.elts:
        return e.elts[0]
    if isinstance(e, ir.Dict) and e.items and e.items[0][0] is not None:
        return e.items[0][1]
    return None
