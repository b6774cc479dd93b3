"""Passes from the IR to facts, one concern a subpackage:

- `engine`: the control-flow graph, the one generic dataflow engine and the passes built
  on it alone (liveness, reaching definitions, region results), and per-process memos;
- `project`: the project model: the index of files and modules, module scopes, classes
  and their attribute tables, and what the constructions and calls in the tree set;
- `kinds`: the value-kind analysis (static < shape < data) and its Python and PyTorch
  semantics, and the facts it emits;
- `ranges`: value ranges and static bounds (sizes, rows, lengths, counters) that decide
  tests the kinds alone would call data or shape;
- `reach`: what a trace or an export of an eval-mode module runs: tracing guards,
  training-only code, what an export skips, and what scripting would accept.

`engine` imports none of the others, and no module imports another in a circle
(`tests/analyzer/test_analysis_layers.py`).
"""
