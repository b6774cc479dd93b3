"""Passes over the scripts around the model (``callsites``: export call sites), and the
source rewrites of hazards into exportable PyTorch that ``untrace check --fix`` applies:

- ``branches``: which UT101 site gets which rewrite, or why none (attached to the facts);
- ``where``: ``if``/``else`` assigning one name -> ``torch.where``;
- ``cond``: any other ``if`` on a tensor -> ``torch.cond`` with nested branch functions;
- ``loops``: data-dependent loops -> ``torch._higher_order_ops.while_loop``, or, for a loop
  of fixed length that breaks or returns, every iteration with ``torch.where`` masks;
- ``escapes``: ``int(t)`` / ``float(t)`` -> ``torch.sym_int(t.item())``, a ``bool(t)`` only
  tested for truth kept a tensor;
- ``branch_body``: whether a block can be a torch.cond branch (side effects, in place...);
- ``source``: libcst positions and exact text edits.

Nothing here imports torch or onnx: ``untrace check`` runs in pre-commit.
"""
