"""The project model: the index of the scanned files and their modules (`index`), module
scopes and imports, classes with their method resolution and attribute tables, and what
the constructions and calls in the tree set (constructor and forward flags, the inputs
callers pass)."""
