"""The abstract interpreter that lowers `forward` source to ONNX, never calling it.

Every variable holds either a *known* Python value (constants, submodules,
parameters' owners, config, `None`, dtypes, tuples of those) or a *graph* value
(`lowering.graph.Value`). Statements are interpreted over the IR of the source
(`analyzer.frontend`, made structured by `structure_control_flow`, regions annotated
by `annotate_regions`):

- an `if` whose predicate is known picks its branch; a graph predicate emits an ONNX
  `If` whose outputs are the region's results (assigned in either branch ∩ live after);
- a loop over a known iterable unrolls; `range(graph_int)` emits a `Loop` with a trip
  count, a `while` on a graph predicate a `Loop` with a condition; carried values are
  the region's carried set; `list.append` in a graph loop becomes a scan output;
- Python state a graph region changes (list lengths, counters, dict values, `nonlocal`
  names) is carried through the graph or refused (`lowering.interp.python_state`);
- calls go to the op table (`lowering.ops`), to user code (interpreted from its own
  source, recursively), or are evaluated for real when they are pure Python on known
  values (`math.sqrt(4)`, `isinstance`, `range(3)`).

What it cannot lower faithfully raises `LoweringError` with file:line and a way out.
The methods live in `lowering.interp`, one module per concern.
"""

from __future__ import annotations

from typing import Any

import torch

from analyzer.frontend import ir
from analyzer.frontend.function_source import SourceFile
from lowering.aliasing import Aliases
from lowering.errors import LoweringError
from lowering.graph import GraphBuilder, Value
from lowering.interp.builtin_calls import _BUILTIN_HANDLERS
from lowering.interp.context_managers import context_decorated
from lowering.interp.branch_merging import BranchMerging
from lowering.interp.comparisons import Comparisons
from lowering.interp.containers import _SEQUENCE_OPS, Containers
from lowering.interp.context_managers import ContextManagers
from lowering.interp.contexts_imports import ContextsAndImports
from lowering.interp.control_flow import MAX_UNROLL, ControlFlow
from lowering.interp.coverage_probes import CoverageProbes
from lowering.interp.data_ifs import DataIfs
from lowering.interp.data_loops import DataLoops
from lowering.interp.exceptions import Exceptions
from lowering.interp.fork_points import ForkPoints
from lowering.interp.local_modules import LocalModules
from lowering.interp.module_hooks import ModuleHooks
from lowering.interp.object_state import ObjectState
from lowering.interp.functions import ReadSources, UserCode, _is_user_function, annotate_and_structure
from lowering.interp.inplace_updates import InPlaceUpdates
from lowering.interp.memo_caches import MemoCaches
from lowering.interp.module_attributes import ModuleAttributes
from lowering.interp.module_methods import ModuleMethods
from lowering.interp.python_semantics import PythonSemantics
from lowering.interp.python_state import PythonState
from lowering.interp.torch_calls import _PURE_TORCH, _RUNTIME_CHECKS, TorchCalls
from lowering.interp.values import (MISSING, BoundUserMethod, Closure, Frame, GraphChoice, GraphRange, Maybe,
                                    ReturnSignal, Stacked, TensorMethod, _flatten, _unflatten)
from lowering.seeded_random import SeededGenerators

__all__ = ["Interpreter", "MAX_UNROLL", "Frame", "Stacked", "Maybe", "GraphRange", "GraphChoice", "Closure",
           "BoundUserMethod", "TensorMethod", "ReturnSignal", "MISSING", "annotate_and_structure",
           "_flatten", "_unflatten", "_is_user_function", "_BUILTIN_HANDLERS", "_SEQUENCE_OPS", "_PURE_TORCH",
           "_RUNTIME_CHECKS"]


class Interpreter(PythonSemantics, Comparisons, ControlFlow, DataIfs, BranchMerging, DataLoops, CoverageProbes,
                  Containers, PythonState, TorchCalls, InPlaceUpdates, ModuleMethods, ModuleAttributes, MemoCaches,
                  UserCode, Exceptions, ObjectState, ModuleHooks, ContextsAndImports, ContextManagers,
                  ForkPoints, LocalModules):
    """One instance per export: the module, the graph being built, and what the
    interpreter knows about the values it has handed out (sources read, names of
    parameters, aliases, Python numbers). The methods live in `lowering.interp`."""

    def __init__(self, root: torch.nn.Module, graph: GraphBuilder, decisions: dict[int, bool] | None = None,
                 sources: ReadSources | None = None):
        self.root = root
        self.g = graph
        self.module_paths = {id(m): name for name, m in root.named_modules()}
        self.tensor_names: dict[int, str] = {}
        for name, p in root.named_parameters(remove_duplicate=False):
            self.tensor_names.setdefault(id(p), name)
        for name, b in root.named_buffers(remove_duplicate=False):
            self.tensor_names.setdefault(id(b), name)
        sources = sources or ReadSources()
        self._sources: dict[str, SourceFile] = sources.files
        self._functions: dict[Any, ir.FunctionDef] = sources.functions
        self.depth = 0
        self.location: tuple[str, int] = ("<unknown>", 0)
        self.frames: list[Frame] = []  # active frames, for in-place updates of aliases
        self.probes_enabled = False
        self._probes: dict[int, list[tuple[str, Value]]] = {}  # id(builder) -> (key, 1-d int64)
        self.generators = SeededGenerators()  # torch.Generator()s made by forward: draws are constants
        self.aliases = Aliases()  # which values share memory; which an in-place update left stale
        # Graph values that are Python numbers in eager (sizes, len(), int(t)): `n += 1` rebinds them.
        self.python_numbers: set[Value] = set()
        # Loop-carried values that are Python numbers in the first iteration only (`python_numbers`).
        self.first_iteration_numbers: set[Value] = set()
        self._state_values: set[Value] = set()  # parameters and buffers (initializers)
        self.values_needing_grad: set[Value] = set()  # the parameters that require grad
        # id -> (container, description) for lists, dicts and sets that outlive the call
        # (module attributes, globals, closure cells, defaults): forward may not change them.
        self.foreign: dict[int, tuple[Any, str]] = {}
        # The line of a comprehension whose filter on tensor values is being evaluated
        # unconditionally (`Containers.unconditionally`): in-place updates are refused there.
        self.conditional_element: int | None = None
        # Module attributes forward assigns, for this export only (`module_attributes`):
        # (id(module), name) -> (module, value), and the ones read before any assignment.
        self.attribute_writes: dict[tuple[int, str], tuple[torch.nn.Module, Any]] = {}
        self.attribute_reads: set[tuple[int, str]] = set()
        # The ones forward replaced by an idempotent conversion of themselves, with the dtypes cast to.
        self.converted_attributes: dict[tuple[int, str], set] = {}
        self.modules_built = 0  # modules forward built so far (`local_modules`)
        self._library_depth = 0  # library calls being read from source (`TorchCalls.reading_library`)
        # Caches rebuilt when a key changes (`module_attributes.cache_rebuild`): the module
        # attribute an operand of `==` / `is` read last, what each comparison operand read,
        # the (attribute, graph value) pairs compared, and the rebuilds being run.
        self.attribute_source = None
        self._operand_sources: dict[int, Any] = {}
        self.key_comparisons: list = []
        self.cache_rebuilds: list = []
        # Caches that outlive the call, filled by forward with values computed from
        # parameters only (`memo_caches`): id -> (dict, {key: value}), for this export.
        self.memo_writes: dict[int, tuple[dict, dict]] = {}
        self.root_graph = graph
        # Objects forward made (their attributes are the call's own) and the changes to any
        # other object's state, undone when forward returns (`lowering.interp.object_state`).
        self.local_objects: dict[int, int] = {}  # id(object) -> id of the builder it was made in
        # id -> (value, the objects it stands for, the region that chose) for what a
        # data-dependent merge made (`lowering.interp.chosen_identity`).
        self.chosen_identities: dict[int, tuple] = {}
        self._local_refs: list = []  # keeps them alive, so that their ids stay theirs
        self._journal: list = []
        self._handling: list = []
        self.first_argument: str | None = None  # the source of a call's first argument (`call` takes it)
        # Tail duplication (`lowering.interp.fork_points`): the side taken at each decided fork
        # site (by ordinal), the data-dependent `if`s of the top-level graph met so far, and
        # where the graph stood at the decided ones.
        self.decisions = dict(decisions or {})
        self.fork_ordinal = 0
        self.fork_points: dict = {}
        self._catching = 0  # how many `try` statements with handlers enclose the code being run  # the exceptions the `except` blocks being run handle (for a bare `raise`)

    def call_forward(self, module: torch.nn.Module, args: list, kwargs: dict):
        fn = getattr(type(module), "forward")
        decorated = context_decorated(fn)
        if decorated is not None:  # `@torch.inference_mode() def forward`: under its manager
            managers, inner = decorated
            return self.call_in_contexts(managers, f"@{type(managers[0]).__name__}(...) of forward",
                                         lambda: self.call_python_function(inner, [module, *args], kwargs))
        return self.call_python_function(fn, [module, *args], kwargs)

    def error(self, message: str, hint: str | None = None, construct: str | None = None) -> LoweringError:
        path, line = self.location
        return LoweringError(message, path=path, line=line, construct=construct, hint=hint)
