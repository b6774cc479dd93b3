"""Which classes with a `forward` an export never runs as its own entry point, read from
the code's structure: what the class derives from and what its `forward` takes.

- a loss (`loss_targets.is_loss_class`);
- a class of a hierarchy that is no `nn.Module`: every base is a class of the scanned
  tree or a plain Python base (`object`, `ABC`, `Generic`), and none of them a module. A data
  transform or a sampler may call its method `forward` (`class ToGraph(BaseTransform)`,
  with `class BaseTransform(ABC)`), yet only a module is exported;
- a data-parallel wrapper (`torch.nn.DataParallel` and its kin): it splits a batch over
  devices and runs the module it wraps, which is checked as itself;
- a module whose `forward` requires another module (`def forward(self, model:
  nn.Module, x)`): an exported graph takes tensors, so such a class is an algorithm run
  on a model (an explainer, an attack), not a model.

What a model's `forward` reaches of such a class is still checked along that path."""

from __future__ import annotations

from analyzer.analyses.reach.loss_targets import is_loss_class
from analyzer.frontend import expr_text, ir

# Bases that make a class no module: Python's own.
_PLAIN_BASES = frozenset({
    "object", "abc.ABC", "ABC", "typing.Generic", "Generic", "typing.Protocol", "Protocol",
    "enum.Enum", "Enum", "dict", "list", "tuple",
})
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
    if _no_module(infos):
        return True
    forward = next((info.node.methods()["forward"] for info in infos if "forward" in info.node.methods()), None)
    return forward is not None and _takes_a_module(forward)


def _no_module(infos) -> bool:
    """Every base of every class in the MRO known, and Python's own or the tree's, and at
    least one named: a class of a hierarchy that is not `nn.Module`'s. A class with no
    base at all stays an entry point: duck-typed backends call theirs `forward` and run
    it as a model's."""
    if not any(info.bases for info in infos):
        return False
    for info in infos:
        for base in info.bases:
            if base.type == "class":
                continue
            if base.type == "ext" and isinstance(base.ref, str) and base.ref in _PLAIN_BASES:
                continue
            return False
    return True


def _takes_a_module(forward: ir.FunctionDef) -> bool:
    """A required parameter of ``forward`` annotated as an `nn.Module`."""
    for p in forward.params[1:]:
        if p.kind in ("vararg", "kwarg") or p.default is not None or p.annotation is None:
            continue
        if expr_text(p.annotation).strip("'\"") in _MODULE_ANNOTATIONS:
            return True
    return False
