"""Value ranges and static bounds: intervals of numbers and tensor values, bounds on
index values and sizes (taken across calls, submodules and configuration fields, each
size named by where it came from at construction: `symbolic_sizes`), the rows a model
fixes, list lengths, loop counters and the slices a loop makes never empty
(`nonempty_slices`), which decide tests the kinds alone would call data or shape."""
