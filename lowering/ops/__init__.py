"""The op table of untrace: one small lowering function per torch op.

See ``lowering.ops.registry`` for the naming scheme and the API; the families
(``elementwise``, ``compare``, ``reduce``, ``creation``, ``cast``, ``activation``,
``linalg``, ...) register themselves when first looked up.
"""

from lowering.ops.registry import (
    ModuleCall,
    Registration,
    canonical_name,
    first_opset,
    load_builtins,
    lookup,
    register,
    register_lowering,
    registered_names,
    registrations,
)

__all__ = [
    "ModuleCall",
    "Registration",
    "canonical_name",
    "first_opset",
    "load_builtins",
    "lookup",
    "register",
    "register_lowering",
    "registered_names",
    "registrations",
]
