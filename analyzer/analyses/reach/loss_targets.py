"""Training targets known by their use: a parameter defaulting to None that only a loss
reads is a training target whatever its name, as `labels` is by its name
(`torch_api.TRAINING_TARGET_PARAMETERS`). In

    def forward(self, past_values, target_values=None, return_loss=True):
        y_hat = self.head(self.model(past_values))
        if target_values is not None and return_loss is True:
            if self.distribution_output == "negative_binomial" and torch.any(target_values < 0):
                raise Exception("target_values cannot be negative")
            loss_val = loss(y_hat, target_values)

`target_values` is read only by its None tests, by a validation whose only effect is a
`raise`, and by the loss (a call of a `loss`/`criterion` callable, or an assignment to a
`loss` name): what `target_values is not None` guards is training-only code. A prompt
such as SAM's `input_labels` (read by the prompt encoder) is not one."""

from __future__ import annotations

from analyzer.analyses.kinds import torch_api as api
from analyzer.frontend import expr_text, ir

_LOSS_WORDS = ("loss", "criterion")


def reads_only_for_loss(fn: ir.FunctionDef, name: str) -> bool:
    """Whether every read of the parameter ``name`` in ``fn`` is a None test, a validation
    that only raises, or the computation of a loss, and at least one is a loss. What is
    computed from it counts as it does (`_Taint`): in Wav2Vec2's pre-training head the
    sampled negatives index features into logits, an `if` on those masks some of them, and
    only the contrastive loss reads the logits."""
    taint = _Taint({name})
    while True:
        before = set(taint.names)
        if not taint.block(fn.body, controlled=False):
            return False
        if taint.names == before:
            return taint.fed_a_loss


class _Taint:
    """One pass over a function: the names computed from the parameter (``names``, grown
    until a pass adds none), False from `block` as soon as one of them reaches anything
    but a None test, a raising validation, a loss or another such name."""

    def __init__(self, names: set[str]):
        self.names = names
        self.fed_a_loss = False

    def block(self, body: list, controlled: bool) -> bool:
        return all(self.statement(s, controlled) for s in body)

    def statement(self, s, controlled: bool) -> bool:
        exprs = ir.child_expressions(s)
        reads = any(self._reads(e) for e in exprs)
        if isinstance(s, (ir.FunctionDef, ir.ClassDef)):
            return not any(self._reads(e) for st in ir.walk_statements(s.body, into_defs=True)
                           for e in ir.child_expressions(st))
        if isinstance(s, ir.If) and len(s.body) == 1 and isinstance(s.body[0], ir.Raise) and not s.orelse:
            return True  # input validation: its only effect is the error
        if isinstance(s, (ir.Assign, ir.AugAssign)):
            return self._assignment(s, reads or controlled)
        if isinstance(s, (ir.If, ir.Loop, ir.With, ir.Try, ir.Match)):
            inner = controlled or reads
            if inner and isinstance(s, ir.Loop) and s.target is not None:
                self._taint_target(s.target)
            return all(self.block(b, inner) for b in ir.child_blocks(s))
        if isinstance(s, (ir.Pass, ir.Raise)) or not (reads or controlled):
            return True
        if controlled and not reads:
            return False  # a return, a call for its effect ... decided by the parameter
        for e in exprs:
            other, loss = _other_reads_of(e, self.names)
            if other:
                return False
            self.fed_a_loss |= loss
        return True

    def _assignment(self, s, depends: bool) -> bool:
        targets = _targets(s)
        if any(_is_loss(t) for t in targets):
            self.fed_a_loss |= depends
            return True
        if not depends:
            return True
        other, loss = _other_reads_of(s.value, self.names)
        if loss and not other:
            self.fed_a_loss = True  # `x = loss_fct(logits, labels)`: the loss's own value
            return True
        return all(self._taint_target(t) for t in targets)

    def _taint_target(self, t) -> bool:
        if isinstance(t, ir.Name):
            self.names.add(t.id)
            return True
        if isinstance(t, (ir.Tuple, ir.List)):
            return all(self._taint_target(x) for x in t.elts)
        if isinstance(t, ir.Starred):
            return self._taint_target(t.value)
        base = t
        while isinstance(base, (ir.Subscript, ir.Attribute)):
            base = base.value
        return isinstance(base, ir.Name) and base.id in self.names  # a write into one of them

    def _reads(self, e) -> bool:
        """Whether ``e`` reads one of the names other than in a None test."""
        return any(_other_reads_of(e, self.names))


def _targets(s) -> list:
    return list(s.targets) if isinstance(s, ir.Assign) else [s.target]


def _is_loss(e) -> bool:
    text = expr_text(e).lower()
    return any(w in text for w in _LOSS_WORDS)


def _reads(e, names: set[str]) -> bool:
    return any(isinstance(x, ir.Name) and x.id in names for x in ir.walk_expression(e))


def _other_reads_of(e, names: set[str]) -> tuple[bool, bool]:
    """(whether ``e`` reads ``name`` other than in a None test or a loss call, whether it
    reads it in a loss call)."""
    if isinstance(e, ir.Compare) and len(e.ops) == 1 and e.ops[0] in ("is", "is not") \
            and isinstance(e.left, ir.Name) and isinstance(e.comparators[0], ir.Const) and e.comparators[0].value is None:
        return False, False
    if isinstance(e, ir.Call) and _is_loss(e.func):
        return False, _reads(e, names)
    if isinstance(e, ir.Name):
        return e.id in names, False
    other = loss = False
    for child in ir.child_expressions(e):
        o, l_ = _other_reads_of(child, names)
        other, loss = other or o, loss or l_
    return other, loss


# The reductions a loss returns (`loss.mean()`, `torch.sum(loss)`, `F.cross_entropy(...)`).
_REDUCTIONS = frozenset({"mean", "sum", "nanmean", "nansum"})


def is_loss_class(analyzer, key) -> bool:
    """Whether the project class ``key`` is a loss, which an export of a model does not
    run as its own entry point: by PyTorch's own base (`torch.nn.modules.loss._Loss`) or
    naming convention (a class whose name, or a base's, ends in `Loss`: `nn.MSELoss`,
    `FocalLoss`), or by its `forward`: one that takes a training target (a required
    parameter `target`, `labels`, ...) and returns a loss (a reduction, a call of a loss
    function, or a name `loss`). What a model's `forward` reaches of it is still checked
    along that call path."""
    infos = list(analyzer.mro(key))
    if not infos:
        return False
    if any(info.key.name.endswith("Loss") for info in infos):
        return True
    if any(b.rsplit(".", 1)[-1] == "_Loss" or b.endswith("Loss") for b in analyzer.external_bases(key)):
        return True
    forward = next((info.node.methods()["forward"] for info in infos if "forward" in info.node.methods()), None)
    if forward is None:
        return False
    required = [p.name for p in forward.params[1:] if p.default is None and p.kind in ("positional", "posonly", "kwonly")]
    if not any(name in api.TRAINING_TARGET_PARAMETERS for name in required):
        return False
    returns = [s.value for s in ir.walk_statements(forward.body) if isinstance(s, ir.Return)]
    return bool(returns) and all(v is not None and _is_loss_value(v) for v in returns)


def _is_loss_value(e) -> bool:
    if isinstance(e, ir.Tuple) and e.elts:
        return _is_loss_value(e.elts[0])  # `return loss, stats`
    if isinstance(e, ir.BinOp):
        return _is_loss_value(e.left) or _is_loss_value(e.right)  # `loss * self.weight`
    if isinstance(e, ir.Call):
        name = expr_text(e.func).rsplit(".", 1)[-1]
        return name in _REDUCTIONS or _is_loss(e.func)
    if isinstance(e, ir.Dict):
        return any(v is not None and _is_loss_value(v) for kv in e.items for v in kv[1:])  # `{"loss": total_loss, ...}`
    return isinstance(e, (ir.Name, ir.Attribute)) and _is_loss(e)
