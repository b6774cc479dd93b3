"""Generated data the analyzer reads instead of importing torch (see each module)."""
