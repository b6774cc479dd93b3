"""Which classes with a `forward` an export never runs as its own entry point, read from
the code's structure: what the class derives from and what its `forward` takes.

- a loss (`loss_targets.is_loss_class`), or a training step: a `forward` that is a
  criterion (`criteria.is_criterion_class`: it returns losses, with their statistics),
  whose model runs inference through other methods;
- a data-parallel wrapper (`torch.nn.DataParallel` and its kin): it splits a batch over
  devices and runs the module it wraps, which is checked as itself;
- a module whose `forward` requires another module (`def forward(self, model:
  nn.Module, x)`): an exported graph takes tensors, so such a class is an algorithm run
  on a model (an explainer, an attack), not a model.

What a model's `forward` reaches of such a class is still checked along that path.

A class of a hierarchy that is no `nn.Module` (a data transform whose base calls its
`forward`) is no export entry either, but neither is a runtime backend of the same shape
that a model's `forward` does call (`self.backend.forward(im)`): telling them apart needs
the classes the tree's modules mention, which is not asked here yet."""

from __future__ import annotations

from analyzer.analyses.reach.criteria import is_criterion_class
from analyzer.analyses.reach.loss_targets import is_loss_class
from analyzer.frontend import expr_text, ir

_DATA_PARALLEL = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
})
_MODULE_ANNOTATIONS = ("Module", "nn.Module", "torch.nn.Module")


def is_unexported_class(analyzer, key) -> bool:
    """Whether an export never enters the project class ``key`` by its own `forward`."""
    infos = list(analyzer.mro(key))
    if not infos:
        return False
    if is_loss_class(analyzer, key):
        return True
    if any(b in _DATA_PARALLEL for b in analyzer.external_bases(key)):
        return True
    forward = next((info.node.methods()["forward"] for info in infos if "forward" in info.node.methods()), None)
    if forward is not None and _takes_a_module(forward):
        return True
    return is_criterion_class(analyzer, key)


def _takes_a_module(forward: ir.FunctionDef) -> bool:
    """A required parameter of ``forward`` annotated as an `nn.Module`."""
    for p in forward.params[1:]:
        if p.kind in ("vararg", "kwarg") or p.default is not None or p.annotation is None:
            continue
        if expr_text(p.annotation).strip("'\"") in _MODULE_ANNOTATIONS:
            return True
    return False
