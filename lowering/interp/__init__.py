"""The abstract interpreter's parts, one concern per module; `lowering.interpreter`
assembles them into `Interpreter` and is what the rest of untrace imports.

- `values`: the interpreter's own values (`Stacked`, `Maybe`, `GraphRange`, closures,
  frames) and `_flatten` / `_unflatten` over nested containers;
- `python_semantics`: statements, names, assignment, operators, attributes, subscripts;
- `comparisons`: `<`, `==`, `in`, `is` and their chains, shapes compared item by item;
- `module_methods`: `nn.Module` tree methods (`children()`, `ModuleDict.items()`, ...) and
  `m.forward(x)`;
- `module_attributes`: module attributes forward assigns and reads back in one call;
- `memo_caches`: caches that outlive the call, filled with values computed from parameters;
- `functions`: calls into user code (source, frames, parameters, closures);
- `torch_calls`: calls through the op table, tensor methods, modules;
- `inplace_updates`: in-place updates reaching every name and view of a tensor (`lowering.aliasing`);
- `control_flow`: `if` / `for` / `while` / ternary statements, a known predicate or iterable
  decided at export time;
- `data_ifs`: data-dependent Ifs (ONNX `If`) and the expression-level ones (ternary,
  torch.cond, a ModuleList indexed by data);
- `branch_merging`: the two sides of an If merged into its outputs (structure, dtype, placeholders);
- `data_loops`: data-dependent loops (ONNX `Loop`), carried values and scan outputs;
- `coverage_probes`: the probes `export(probes=True)` records, taken out of branches and bodies;
- `containers`: tuples, lists, dicts, sets, unpacking, comprehensions, scan outputs;
- `python_state`: the Python state a graph region may change and read (list lengths the
  graph decides, write-back of changed containers, snapshots, state that outlives the
  call, `nonlocal`);
- `builtin_calls`: `len`, `range`, `int`, `min`, ... over graph values;
- `builtin_minmax`: Python's `max` / `min` with tensors, as Python picks one argument;
- `graph_rows`: `zip` / `enumerate` / `reversed` over the rows of dynamic axes (a Loop's items).
"""
