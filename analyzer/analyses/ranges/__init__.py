"""Value ranges and static bounds: intervals of numbers and tensor values, bounds on
index values and sizes (taken across calls, submodules and configuration fields), the
rows a model fixes, and list lengths and loop counters, which decide tests the kinds
alone would call data or shape."""
