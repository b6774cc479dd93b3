"""Random sites of real model code to label for recall: the branches, loops, escapes and
writes of `forward` methods of `nn.Module` subclasses and of every helper they reach.

    python benchmarks/recall_sites.py PACKAGE_DIR... --draw N --seed S [--out FILE]

A PACKAGE_DIR is an unpacked wheel, as for `realworld_precision.py`. The sampling frame
is decided from the source alone, with CPython's `ast` and none of untrace's analyses, so
that what untrace reports does not choose what is labelled:

- a class is a module when a base is `nn.Module` / `torch.nn.Module` / `nn.<anything>`
  (the torch.nn layers), or a class of the same package that is a module;
- the entry points are the `forward` methods of module classes; a function is reached
  when a reached body calls it as `self.NAME(...)` (the class or its package bases),
  `super().NAME(...)`, or `NAME(...)` bound at the top of its file or imported from the
  package (`from .x import NAME`);
- a site is an `if` statement, a ternary, an `assert`, a `while`, a `for`, an escape
  (`.item()`, `.tolist()`, `.numpy()`, `int(...)` / `float(...)` / `bool(...)` of one
  argument), a subscript write (`t[i] = v`, `t[i] += v`) or an in-place method call
  (`x.add_(...)`: a method name ending in one underscore), in a reached body (its
  nested functions and lambdas included).

`--draw N --seed S` samples N sites with `random.Random(S).sample` over the sites sorted by
(package, path, line, column, kind), and writes them to a labels file to fill in: each
entry gets `label` (null until labelled: "hazard" or "no"), `code` (the rule a hazard
falls under: UT101, UT102, UT105, UT201, UT202 or UT301, the default rules) and
`evidence`. `realworld_precision.py --labels FILE` then gives the recall of a run.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.realworld_precision import package_tree  # noqa: E402

_ESCAPE_METHODS = {"item", "tolist", "numpy"}
_ESCAPE_BUILTINS = {"int", "float", "bool"}
_IN_PLACE = re.compile(r"^[a-z][a-z0-9_]*[a-z0-9]_$")


@dataclass
class Module:
    """One file of the package: its top-level functions, classes and imported names."""

    name: str
    path: str
    functions: dict = field(default_factory=dict)  # name -> FunctionDef
    classes: dict = field(default_factory=dict)  # name -> ClassDef
    imports: dict = field(default_factory=dict)  # local name -> (module name, name)


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _resolve_relative(module: str, level: int, target: str | None, is_package: bool) -> str:
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


def load_package(package_dir: Path) -> dict[str, Module]:
    tree_dir = package_tree(package_dir)
    modules: dict[str, Module] = {}
    for path in sorted(tree_dir.rglob("*.py")):
        rel = path.relative_to(tree_dir.parent)
        name = ".".join(rel.with_suffix("").parts)
        is_package = path.name == "__init__.py"
        if is_package:
            name = name[: -len(".__init__")]
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError):
            continue
        module = Module(name, str(path.relative_to(package_dir)))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                module.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                module.classes[node.name] = node
            elif isinstance(node, ast.ImportFrom):
                source = _resolve_relative(name, node.level, node.module, is_package) if node.level else (node.module or "")
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = (source, alias.name)
        modules[name] = module
    return modules


class Frame:
    """The package's classes and functions, and which of them a `forward` reaches."""

    def __init__(self, modules: dict[str, Module]):
        self.modules = modules
        self._is_module: dict[tuple, bool] = {}

    def lookup(self, module: Module, name: str, depth: int = 0):
        """(module, node) that `name` is bound to at the top of `module`, through imports."""
        if name in module.functions:
            return module, module.functions[name]
        if name in module.classes:
            return module, module.classes[name]
        if name in module.imports and depth < 8:
            source, target = module.imports[name]
            if source in self.modules:
                return self.lookup(self.modules[source], target, depth + 1)
            if f"{source}.{target}" in self.modules:
                return None
        return None

    def bases(self, module: Module, cls: ast.ClassDef):
        for base in cls.bases:
            text = _dotted(base)
            if "." not in text:
                found = self.lookup(module, text)
                if found and isinstance(found[1], ast.ClassDef):
                    yield found
            else:
                head, _, last = text.rpartition(".")
                found = self.lookup(module, last) if head in module.imports or head in self.modules else None
                if found and isinstance(found[1], ast.ClassDef):
                    yield found

    def is_module(self, module: Module, cls: ast.ClassDef, depth: int = 0) -> bool:
        key = (module.name, cls.name)
        if key not in self._is_module:
            self._is_module[key] = False  # a cycle of bases is not a module
            texts = [_dotted(b) for b in cls.bases]
            direct = any(t in ("Module", "nn.Module", "torch.nn.Module") or t.startswith(("nn.", "torch.nn."))
                         for t in texts)
            self._is_module[key] = direct or (depth < 20 and any(
                self.is_module(m, c, depth + 1) for m, c in self.bases(module, cls)))
        return self._is_module[key]

    def method(self, module: Module, cls: ast.ClassDef, name: str, depth: int = 0):
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return module, cls, node
        if depth < 20:
            for m, base in self.bases(module, cls):
                found = self.method(m, base, name, depth + 1)
                if found:
                    return found
        return None

    def reached(self) -> list[tuple[Module, ast.ClassDef | None, ast.AST]]:
        work = []
        for module in self.modules.values():
            for cls in module.classes.values():
                if self.is_module(module, cls):
                    found = self.method(module, cls, "forward")
                    if found and found[1] is cls:  # an inherited forward is its own class's entry
                        work.append(found)
        seen, out = set(), []
        while work:
            module, cls, fn = work.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            out.append((module, cls, fn))
            for call in ast.walk(fn):
                if not isinstance(call, ast.Call):
                    continue
                callee = call.func
                if isinstance(callee, ast.Attribute) and cls is not None:
                    receiver = callee.value
                    is_self = isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")
                    is_super = isinstance(receiver, ast.Call) and _dotted(receiver.func) == "super"
                    if is_self or is_super:
                        start = [(m, c) for m, c in self.bases(module, cls)] if is_super else [(module, cls)]
                        for m, c in start:
                            found = self.method(m, c, callee.attr)
                            if found:
                                work.append(found)
                                break
                elif isinstance(callee, ast.Name):
                    found = self.lookup(module, callee.id)
                    if found and isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
                        owner = next((m for m in self.modules.values() if m.functions.get(found[1].name) is found[1]),
                                     module)
                        work.append((owner, None, found[1]))
        return out


def _site_kind(node) -> str | None:
    if isinstance(node, ast.If):
        return "if"
    if isinstance(node, ast.IfExp):
        return "ternary"
    if isinstance(node, ast.Assert):
        return "assert"
    if isinstance(node, ast.While):
        return "while"
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return "for"
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _ESCAPE_METHODS:
            return "escape"
        if isinstance(f, ast.Name) and f.id in _ESCAPE_BUILTINS and len(node.args) == 1 and not node.keywords:
            return "escape"
        if isinstance(f, ast.Attribute) and _IN_PLACE.match(f.attr):
            return "in-place"
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Subscript) for t in targets):
            return "write"
    return None


def sites(package_dir: Path) -> list[dict]:
    modules = load_package(package_dir)
    out = {}
    for module, cls, fn in Frame(modules).reached():
        qualname = f"{cls.name}.{fn.name}" if cls is not None else fn.name
        for node in ast.walk(fn):
            kind = _site_kind(node)
            if kind is None:
                continue
            key = (package_dir.name, module.path, node.lineno, node.col_offset + 1, kind)
            out.setdefault(key, {"package": key[0], "path": key[1], "line": key[2], "column": key[3], "kind": kind,
                                 "function": qualname})
    return [out[k] for k in sorted(out)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="+", help="unpacked wheels")
    parser.add_argument("--draw", type=int, required=True, metavar="N", help="draw N sites to label")
    parser.add_argument("--seed", type=int, required=True, help="seed of the draw")
    parser.add_argument("--out", help="labels file to write (default benchmarks/data/recall_labels_seedS.json)")
    parser.add_argument("--kinds", help="draw only sites of these kinds (comma-separated: a stratum where hazards are "
                        "denser than among all sites, most of which are `if x is not None`)")
    args = parser.parse_args(argv)
    population = []
    for d in args.packages:
        population.extend(sites(Path(d)))
    if args.kinds:
        kinds = set(args.kinds.split(","))
        population = [s for s in population if s["kind"] in kinds]
    sample = random.Random(args.seed).sample(population, min(args.draw, len(population)))
    sample.sort(key=lambda s: (s["package"], s["path"], s["line"], s["column"], s["kind"]))
    for s in sample:
        text = (Path(args.packages[[Path(p).name for p in args.packages].index(s["package"])]) / s["path"]).read_text(
            errors="replace").splitlines()[s["line"] - 1]
        s.update(text=text.strip(), label=None, code=None, evidence="")
    out = Path(args.out or ROOT / "benchmarks" / "data" / f"recall_labels_seed{args.seed}.json")
    per_kind: dict[str, int] = {}
    for s in population:
        per_kind[s["kind"]] = per_kind.get(s["kind"], 0) + 1
    data = {"seed": args.seed, "packages": [Path(p).name for p in args.packages], "kinds": args.kinds or "all",
            "population": len(population),
            "population_per_kind": dict(sorted(per_kind.items())), "labels": sample}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"drew {len(sample)} of {len(population)} sites into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
