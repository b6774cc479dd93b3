"""The generic dataflow engine and the CFG-level passes on it: the control-flow graph
(`cfg`), the worklist solver and def/use facts (`dataflow`), liveness, reaching
definitions, region results (`regions`), and the per-process memos every analysis keeps
(`memo`). It knows nothing of value kinds or of any analysis built on it, and imports
nothing from the other analysis packages."""
