"""What a trace or an export of an eval-mode module runs: tracing guards and the tests
they decide, training flags and training-only code, what an export skips, branches that
only log, and whether `torch.jit.script` would accept a class."""
