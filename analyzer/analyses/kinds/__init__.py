"""The value-kind analysis: the interprocedural driver (`analysis.KindAnalyzer`), one
function body on the dataflow engine (`function_flow`), the abstract values and levels,
the Python and PyTorch semantics of expressions and calls, and the facts it emits."""
