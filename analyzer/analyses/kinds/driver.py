"""What one function's analysis asks of the interprocedural driver.

`analysis.KindAnalyzer` runs every function body as a `function_flow.FunctionAnalysis`,
whose `expressions.ExpressionEvaluator` gives each expression its value; both hand the
driver on to the semantics they are built from and to the analyses of `ranges`, `reach`
and `project`. They hold it as a `Driver`, the questions below, and never import the class
that creates them: the dependency runs from the driver to the semantics only.
"""

from __future__ import annotations

from typing import Protocol

from analyzer.analyses.engine.cfg import Cfg
from analyzer.analyses.kinds.summaries import ClassInfo, Summary
from analyzer.analyses.kinds.values import Value
from analyzer.analyses.project.index import ClassKey, FunctionKey, Project
from analyzer.frontend import ir


class Driver(Protocol):
    project: Project
    recording: dict[int, list] | None  # id(call) -> arguments bound there, while calls are recorded
    recorded_callee: ir.FunctionDef | None
    # Per-process tables the analyses built on the driver keep in it (see each module).
    caller_bounds: dict  # `ranges.caller_bounds`
    caller_origins: dict  # `project.caller_origins`
    attribute_writes: dict  # `ranges.submodule_sizes`
    init_targets: dict  # `project.init_writes`
    constant_flags: dict  # `project.constructor_flags`
    training_flags: dict  # `reach.training_flags`

    # ---------------------------------------------------------------- module scopes

    def module_ir(self, path: str) -> ir.Module | None: ...

    def globals_of(self, module: ir.Module) -> dict[str, Value]: ...

    def import_bindings(self, stmt: ir.Import, path: str): ...

    def global_value(self, module: ir.Module, name: str) -> Value | None: ...

    def resolve(self, value: Value) -> Value: ...

    # ---------------------------------------------------------------- classes

    def class_info(self, key: ClassKey) -> ClassInfo | None: ...

    def mro(self, key: ClassKey): ...

    def find_method(self, key: ClassKey, name: str, after: ClassKey | None = None): ...

    def is_module_class(self, key: ClassKey) -> bool: ...

    def is_tensor_class(self, key: ClassKey) -> bool: ...

    def is_framework_base(self, key: ClassKey) -> bool: ...

    def attributes(self, key: ClassKey) -> dict[str, Value]: ...

    # ---------------------------------------------------------------- function runs

    def call_function(self, key, fn: ir.FunctionDef, module: ir.Module, args: dict[str, Value],
                      self_value: Value | None, class_key: ClassKey | None,
                      collect: dict | None = None, closure: dict | None = None) -> Summary: ...

    def base_helper(self, key: FunctionKey, fn: ir.FunctionDef, owner: ClassKey, args: list[Value],
                    kwargs: dict, into: dict[str, Value]) -> Summary: ...

    def record_calls(self, key: ClassKey, calls: list, entry=None, callee=None) -> list[tuple[int, dict]] | None: ...

    def function_graph(self, fn: ir.FunctionDef) -> tuple[Cfg, set[int]]: ...
