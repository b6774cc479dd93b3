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

from analyzer.frontend import expr_text, ir

_LOSS_WORDS = ("loss", "criterion")


def reads_only_for_loss(fn: ir.FunctionDef, name: str) -> bool:
    """Whether every read of the parameter ``name`` in ``fn`` is a None test, a validation
    that only raises, or the computation of a loss, and at least one is a loss."""
    fed_a_loss = False
    for s in ir.walk_statements(fn.body, into_defs=True):
        exprs = ir.child_expressions(s)
        if not any(_reads(e, name) for e in exprs):
            continue
        if isinstance(s, ir.If) and len(s.body) == 1 and isinstance(s.body[0], ir.Raise):
            continue  # input validation: its only effect is the error
        if isinstance(s, (ir.Assign, ir.AugAssign)) and any(_is_loss(t) for t in _targets(s)):
            fed_a_loss = True
            continue
        for e in exprs:
            other, loss = _other_reads(e, name)
            if other:
                return False
            fed_a_loss |= loss
    return fed_a_loss


def _targets(s) -> list:
    return list(s.targets) if isinstance(s, ir.Assign) else [s.target]


def _is_loss(e) -> bool:
    text = expr_text(e).lower()
    return any(w in text for w in _LOSS_WORDS)


def _reads(e, name: str) -> bool:
    return any(isinstance(x, ir.Name) and x.id == name for x in ir.walk_expression(e))


def _other_reads(e, name: str) -> tuple[bool, bool]:
    """(whether ``e`` reads ``name`` other than in a None test or a loss call, whether it
    reads it in a loss call)."""
    if isinstance(e, ir.Compare) and len(e.ops) == 1 and e.ops[0] in ("is", "is not") \
            and isinstance(e.left, ir.Name) and isinstance(e.comparators[0], ir.Const) and e.comparators[0].value is None:
        return False, False
    if isinstance(e, ir.Call) and _is_loss(e.func):
        return False, _reads(e, name)
    if isinstance(e, ir.Name):
        return e.id == name, False
    other = loss = False
    for child in ir.child_expressions(e):
        o, l_ = _other_reads(child, name)
        other, loss = other or o, loss or l_
    return other, loss
