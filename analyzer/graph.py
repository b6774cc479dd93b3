"""`untrace graph`: the IR of one function, every branch and loop marked by the kind of
its predicate (static / shape / data), as text, Mermaid, DOT or JSON (networkx
node-link data of the control-flow graph).
"""

from __future__ import annotations

import json
import os

from analyzer.analyses.engine.cfg import Cfg
from analyzer.analyses.engine.regions import annotate_regions
from analyzer.analyses.kinds.facts import BranchFact, IterationFact, LoopFact
from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.project.index import Project
from analyzer.engine import analyze_file
from analyzer.frontend import expr_text, ir, parse_module, print_function
from analyzer.frontend.nesting import stack_room


class GraphError(Exception):
    """A target that names no function, or a file that cannot be read."""


def parse_target(target: str) -> tuple[str, str | None]:
    """`file.py::Class.method`, `file.py::function`, or `file.py` (the first forward)."""
    path, sep, name = target.partition("::")
    return path, (name or None) if sep else None


def find_function(module: ir.Module, name: str | None) -> ir.FunctionDef:
    candidates = []
    for stmt in module.body:
        if isinstance(stmt, ir.FunctionDef):
            candidates.append(stmt)
        elif isinstance(stmt, ir.ClassDef):
            candidates.extend(stmt.methods().values())
    if name is None:
        forwards = [f for f in candidates if f.name == "forward"]
        if not forwards:
            raise GraphError(f"{module.path}: no forward method; name one as FILE::Class.method")
        return forwards[0]
    wanted = name if "." in name else None
    for fn in candidates:
        if fn.qualname == name or (wanted is None and fn.name == name):
            return fn
    if "." not in name:
        # `FILE::Class` means the class's forward.
        for fn in candidates:
            if fn.qualname == f"{name}.forward":
                return fn
    known = ", ".join(sorted(f.qualname for f in candidates)) or "none"
    raise GraphError(f"{module.path}: no function {name!r} (functions: {known})")


def site_kinds(path: str, source: bytes, fn: ir.FunctionDef) -> dict[int, str]:
    """line -> "data" / "shape" / "static" for the branch and loop heads of `fn`."""
    project = Project([path], [os.path.dirname(path) or "."])
    facts, _ = analyze_file(path, source, project)
    kinds: dict[int, str] = {}
    for f in facts:
        if f.site.function != fn.qualname:
            continue
        if isinstance(f, BranchFact):
            kinds[f.site.line] = Level(f.level).label
        elif isinstance(f, LoopFact):
            kinds[f.site.line] = Level(max(f.bound_level, f.exit_level)).label
        elif isinstance(f, IterationFact):
            kinds.setdefault(f.site.line, "tensor-iteration")
    return kinds


def _kind_of(stmt, kinds: dict[int, str]) -> str | None:
    if isinstance(stmt, (ir.If, ir.Loop, ir.Assert)):
        return kinds.get(stmt.span.line, "static")
    return None


def render(path: str, name: str | None, fmt: str) -> str:
    from analyzer.files import not_regular, not_regular_message

    kind = not_regular(path)
    if kind is not None:
        raise GraphError(f"{path}: {not_regular_message(kind)}")
    if path.endswith(".ipynb"):
        raise GraphError(f"{path}: a notebook; `untrace graph` reads Python files (`untrace check` reads notebooks)")
    try:
        with open(path, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        raise GraphError(f"{path}: cannot read: {exc.strerror}") from None
    with stack_room():  # the recursive passes at the front end's deepest (see nesting)
        return _render(path, source, name, fmt)


def _render(path: str, source: bytes, name: str | None, fmt: str) -> str:
    module = parse_module(source, path)
    fn = find_function(module, name)
    annotate_regions(fn)
    kinds = site_kinds(path, source, fn)
    if fmt == "text":
        return print_function(fn, annotate=lambda s: _kind_of(s, kinds))
    cfg = Cfg(fn.body, fn.params)
    if fmt == "json":
        return json.dumps(_node_link(cfg, kinds), indent=2) + "\n"
    if fmt == "mermaid":
        return _mermaid(cfg, kinds)
    if fmt == "dot":
        return _dot(cfg, kinds, fn.qualname)
    raise GraphError(f"unknown format {fmt!r}")


def _label(node, kinds) -> tuple[str, str | None]:
    s = node.stmt
    if node.kind in ("entry", "exit"):
        return node.kind, None
    if node.kind == "join":
        return "end " + ("if" if isinstance(s, ir.If) else "loop" if isinstance(s, ir.Loop) else "match"), None
    if node.kind == "if":
        return f"L{s.span.line} if {expr_text(s.test)}", _kind_of(s, kinds)
    if node.kind == "loop":
        head = f"for {expr_text(s.target)} in {expr_text(s.iter)}" if s.kind == "for" else f"while {expr_text(s.test)}"
        return f"L{s.span.line} {head}", _kind_of(s, kinds)
    if node.kind == "loop-init":
        return f"L{s.span.line} loop entry", None
    line = getattr(getattr(s, "span", None), "line", "?")
    return f"L{line} {type(s).__name__.lower()}", _kind_of(s, kinds)


def _node_link(cfg: Cfg, kinds) -> dict:
    import networkx as nx

    g = cfg.to_networkx()
    for node in cfg.nodes:
        label, kind = _label(node, kinds)
        g.nodes[node.id]["label"] = label
        g.nodes[node.id]["hazard"] = kind
    return nx.node_link_data(g, edges="edges")


_COLOURS = {"data": "#f8d7da", "shape": "#fff3cd", "static": "#d1e7dd", "tensor-iteration": "#f8d7da"}


def _mermaid(cfg: Cfg, kinds) -> str:
    lines = ["flowchart TD"]
    for node in cfg.nodes:
        label, kind = _label(node, kinds)
        text = _mermaid_text(label) + (f" [{kind}]" if kind else "")
        shape = ('{"%s"}' if node.kind in ("if", "loop") else '["%s"]') % text
        lines.append(f"    n{node.id}{shape}")
        if kind:
            lines.append(f"    style n{node.id} fill:{_COLOURS[kind]}")
    for node in cfg.nodes:
        for succ in node.succ:
            lines.append(f"    n{node.id} --> n{succ.id}")
    return "\n".join(lines) + "\n"


def _mermaid_text(label: str) -> str:
    """A label inside Mermaid's `"..."`, with its entity codes: `"` cannot appear there
    at all, `#` would start an entity, and `<`/`>` would be read as HTML."""
    return label.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def _dot(cfg: Cfg, kinds, title: str) -> str:
    lines = [f'digraph "{title}" {{', "    node [shape=box, fontname=monospace];"]
    for node in cfg.nodes:
        label, kind = _label(node, kinds)
        text = (label + (f" [{kind}]" if kind else "")).replace("\\", "\\\\").replace('"', '\\"')
        attrs = [f'label="{text}"']
        if node.kind in ("if", "loop"):
            attrs.append("shape=diamond")
        if kind:
            attrs += ["style=filled", f'fillcolor="{_COLOURS[kind]}"']
        lines.append(f"    n{node.id} [{', '.join(attrs)}];")
    for node in cfg.nodes:
        for succ in node.succ:
            lines.append(f"    n{node.id} -> n{succ.id};")
    lines.append("}")
    return "\n".join(lines) + "\n"
