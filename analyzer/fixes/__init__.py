"""Passes over the scripts around the model (``callsites``: export call sites), and the
source rewrites of hazards into exportable PyTorch that ``untrace check --fix`` applies:

- ``branches``: which UT101 site gets which rewrite, or why none (attached to the facts);
- ``where``: ``if``/``else`` assigning one name -> ``torch.where``;
- ``cond``: any other ``if`` on a tensor -> ``torch.cond`` with nested branch functions;
- ``loops``: data-dependent loops -> ``torch._higher_order_ops.while_loop``, or, for a loop
  of fixed length that breaks or returns, every iteration with ``torch.where`` masks;
- ``escapes``: ``int(t)`` / ``float(t)`` -> ``torch.sym_int(t.item())``, a ``bool(t)`` only
  tested for truth kept a tensor, ``a, b = t.tolist()`` unpacked row by row, the builtin
  ``max``/``min`` of an ``.item()`` number -> ``torch.sym_max``/``sym_min``;
- ``numbers``: Python numbers chosen by a tensor test -> ``torch.sym_ite``;
- ``guards``: an ``if m.any():`` that only guards writes through ``m`` -> the writes alone;
- ``filtered``: a list filtered by a tensor test and stacked -> a masked stack;
- ``bounded``: a ``range(n)`` loop indexing a ``ModuleList`` -> masked up to its length; a
  ``while`` stopped by a counter's static bound -> a ``for`` over that range;
- ``inputs``: a write into a ``forward`` input -> into its copy;
- ``branch_body``: whether a block can be a torch.cond branch (side effects, in place...);
- ``source``: libcst positions and exact text edits.

Nothing here imports torch or onnx: ``untrace check`` runs in pre-commit.
"""
