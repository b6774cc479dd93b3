"""Passes over the scripts around the model: export call sites (``callsites``) and,
separately, source rewrites of hazards into exportable PyTorch (``where``).

Nothing here imports torch or onnx: ``untrace check`` runs in pre-commit.
"""
