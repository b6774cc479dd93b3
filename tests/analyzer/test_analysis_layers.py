"""The layers of `analyzer`: no module imports another in a circle, the generic dataflow
engine (`analyzer.analyses.engine`) imports nothing from the analyses built on it, and the
value-kind driver answers every question its function analyses ask of it (`Driver`)."""

import ast
from pathlib import Path

import networkx as nx
import pytest

from analyzer.analyses.kinds.analysis import KindAnalyzer
from analyzer.analyses.kinds.driver import Driver
from analyzer.analyses.project.index import Project

ROOT = Path(__file__).resolve().parents[2]
ANALYSES = "analyzer.analyses"
ENGINE = "analyzer.analyses.engine"


def import_graph(package: str = "analyzer") -> nx.DiGraph:
    """Module -> the project modules it imports (at any depth of the file, under
    `TYPE_CHECKING` too). `from package import name` depends on the submodule `name` when
    there is one, else on the package."""
    files = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = nx.DiGraph()
    for module, path in files.items():
        graph.add_node(module)
        own_package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = own_package.split(".")[: len(own_package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            else:
                continue
            graph.add_edges_from((module, t) for t in targets if t in files and t != module)
    return graph


def test_the_graph_sees_imports():
    graph = import_graph()
    assert graph.has_edge("analyzer.analyses.kinds.function_flow", "analyzer.analyses.engine.dataflow")
    assert graph.has_edge("analyzer.analyses.kinds.function_flow", "analyzer.analyses.kinds.torch_api")
    assert graph.has_edge("analyzer.analyses.engine.liveness", "analyzer.analyses.engine.cfg")


def test_no_import_cycles_among_analyzer_modules():
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


def test_the_engine_imports_no_analysis_built_on_it():
    graph = import_graph()
    wrong = [(m, t) for m, t in graph.edges
             if m.startswith(ENGINE) and t.startswith(ANALYSES + ".") and not t.startswith(ENGINE)]
    assert wrong == []


def test_every_analysis_module_lives_in_a_subpackage():
    flat = sorted(p.name for p in (ROOT / "analyzer" / "analyses").glob("*.py") if p.name != "__init__.py")
    assert flat == []


@pytest.mark.parametrize("member", sorted(set(Driver.__annotations__) | {
    name for name, value in vars(Driver).items() if callable(value) and not name.startswith("_")}))
def test_the_kind_analyzer_is_a_driver(member):
    assert hasattr(KindAnalyzer(Project()), member)
