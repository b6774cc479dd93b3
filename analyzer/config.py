"""``[tool.untrace]`` in ``pyproject.toml``: which rules run, on which files.

The configuration comes from the nearest ``pyproject.toml`` that has a
``[tool.untrace]`` table, at or above the first checked path (or the current
directory), as ruff finds ``[tool.ruff]``. ``--config PATH`` names the file instead.
Every mistake in it (an unknown key, a wrong type, a code that names no rule) is a
:class:`ConfigError` naming the file, which the command line turns into exit code 2.

Rule selection is layered the way ruff does it: the defaults, then the configuration
file, then the command line. A layer with ``select`` starts again from that selection;
``extend-select`` adds to what the layers before chose; ``ignore`` removes. UT000
(the file could not be read or parsed) is always reported unless ignored by name.
"""

from __future__ import annotations

import os

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTION = "untrace"

# key in the file -> (attribute, expected type: "codes" | "globs" | "mapping" | "int")
_KEYS = {
    "select": ("select", "codes"),
    "extend-select": ("extend_select", "codes"),
    "ignore": ("ignore", "codes"),
    "per-file-ignores": ("per_file_ignores", "mapping"),
    "extend-per-file-ignores": ("extend_per_file_ignores", "mapping"),
    "exclude": ("exclude", "globs"),
    "extend-exclude": ("extend_exclude", "globs"),
    "opset": ("opset", "int"),
}

ALWAYS_ON = "UT000"


class ConfigError(ValueError):
    """A usage error in the configuration or on the command line (exit code 2)."""


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection (the config file's, or the command line's)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    """The resolved ``[tool.untrace]`` table. ``root`` anchors relative globs and the cache."""

    root: Path = field(default_factory=Path.cwd)
    path: Path | None = None  # the pyproject.toml it came from, if any
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    extend_per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] | None = None  # None: the default excludes
    extend_exclude: tuple[str, ...] = ()
    opset: int | None = None

    @property
    def selection(self) -> Selection:
        return Selection(self.select, self.extend_select, self.ignore)

    @property
    def all_per_file_ignores(self) -> dict[str, tuple[str, ...]]:
        merged = dict(self.per_file_ignores)
        for glob, codes in self.extend_per_file_ignores.items():
            merged[glob] = merged.get(glob, ()) + codes
        return merged

    def with_root(self, root: Path) -> "Config":
        return replace(self, root=root)


def find_config(start: Path | str | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.untrace]`` table at or above ``start``."""
    here = Path(start if start is not None else Path.cwd()).absolute()
    if not os.path.isdir(here):
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        # os.path.isfile: a directory that cannot be searched holds no configuration we
        # can read (pathlib's is_file raises PermissionError there)
        if os.path.isfile(candidate):
            try:
                text = candidate.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            except OSError:
                # it may hold our table: load_config reports why it cannot be read,
                # rather than the run going on with another configuration
                return candidate
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                if f"tool.{SECTION}" in text:
                    return candidate  # ours, but broken: load_config reports where
                continue  # a broken unrelated pyproject.toml is not ours to report
            if isinstance(data.get("tool"), dict) and SECTION in data["tool"]:
                return candidate
    return None


def config_candidates(paths: Sequence[str], explicit: str | Path | None = None) -> list[str]:
    """Every configuration file `resolve_config` reads for ``paths``: ``explicit``, or
    each ``pyproject.toml`` at or above the first path, up to the one that holds our
    table. They are inputs of the run, which an output may not overwrite."""
    if explicit is not None:
        return [str(explicit)]
    first = next((p for p in paths if p != "-"), None)
    here = Path(first if first is not None else Path.cwd()).absolute()
    if not os.path.isdir(here):
        here = here.parent
    found = find_config(here)
    candidates = []
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if os.path.lexists(candidate):
            candidates.append(str(candidate))
        if found is not None and candidate == found:
            break
    return candidates


def load_config(path: Path | str) -> Config:
    """Read ``[tool.untrace]`` from ``path`` (a pyproject.toml, or any TOML file whose
    top level holds the same keys)."""
    from analyzer.files import not_regular

    path = Path(path)
    kind = not_regular(str(path))
    if kind is not None:
        raise ConfigError(f"{path}: cannot read configuration: not a regular file ({kind})")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: configuration is not UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    if isinstance(data.get("tool"), dict) and SECTION in data["tool"]:
        table = data["tool"][SECTION]
        where = f"[tool.{SECTION}]"
    elif path.name == "pyproject.toml":
        table = {}
        where = f"[tool.{SECTION}]"
    else:
        table = data
        where = "top level"
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    return parse_table(table, root=path.absolute().parent, source=path, where=where)


def parse_table(table: dict, *, root: Path, source: Path | None = None, where: str = "") -> Config:
    """Validate one ``[tool.untrace]`` table into a :class:`Config`."""
    label = f"{source}: {where}".rstrip(": ") if source else "configuration"
    values: dict = {}
    for key, value in table.items():
        if key not in _KEYS:
            near = _closest(key, _KEYS)
            hint = f" (did you mean `{near}`?)" if near else ""
            raise ConfigError(f"{label}: unknown key `{key}`{hint}; known keys: {', '.join(sorted(_KEYS))}")
        attribute, kind = _KEYS[key]
        values[attribute] = _convert(value, kind, f"{label}: `{key}`")
    config = Config(root=root, path=source, **values)
    bad = check_codes(
        [*(config.select or ()), *config.extend_select, *config.ignore]
        + [c for codes in config.all_per_file_ignores.values() for c in codes]
    )
    if bad:
        raise ConfigError(f"{label}: unknown rule code(s): {', '.join(bad)} (see `untrace rule`)")
    return config


def _convert(value, kind: str, label: str):
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{label} must be a positive integer, not {value!r}")
        return value
    if kind in ("codes", "globs"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{label} must be a list of strings, not {value!r}")
        return tuple(v.strip().upper() if kind == "codes" else v for v in value)
    if kind == "mapping":
        if not isinstance(value, dict):
            raise ConfigError(f"{label} must be a table of glob = [codes], not {value!r}")
        out = {}
        for glob, codes in value.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{label}: `{glob}` must be a list of rule codes, not {codes!r}")
            out[glob] = tuple(c.strip().upper() for c in codes)
        return out
    raise AssertionError(kind)


def _closest(word: str, candidates: Iterable[str]) -> str | None:
    import difflib

    match = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return match[0] if match else None


def check_codes(patterns: Iterable[str]) -> list[str]:
    """The patterns (codes, prefixes, ``ALL``) that name no rule."""
    from analyzer import rules

    known = {r.code for r in rules.all_rules()} | {ALWAYS_ON}
    bad = []
    for pattern in patterns:
        p = pattern.strip().upper()
        if p == "ALL":
            continue
        if not p or not any(code.startswith(p) for code in known):
            # rule names are accepted too (`data-dependent-branch`)
            if rules.rule_by_code(pattern) is None:
                bad.append(pattern)
    return bad


def parse_codes(text: str) -> tuple[str, ...]:
    """``"UT101, UT2"`` -> ``("UT101", "UT2")`` for the command line."""
    return tuple(part.strip().upper() for part in text.replace(" ", ",").split(",") if part.strip())


def _normalise(pattern: str) -> str:
    """A rule name stands for its code."""
    from analyzer import rules

    if pattern.upper() == "ALL" or pattern.upper().startswith("UT"):
        return pattern.upper()
    rule = rules.rule_by_code(pattern)
    return rule.code if rule else pattern.upper()


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


def enabled_codes(layers: Sequence[Selection], all_codes: dict[str, bool]) -> frozenset[str]:
    """The codes that are on after applying ``layers`` in order.

    ``all_codes`` maps every known code to whether it is on by default.
    """
    on = {code for code, default in all_codes.items() if default}
    for layer in layers:
        if layer.select is not None:
            select = [_normalise(p) for p in layer.select]
            on = {code for code in all_codes if _matches(code, select)}
        extend = [_normalise(p) for p in layer.extend_select]
        on |= {code for code in all_codes if _matches(code, extend)}
        ignore = [_normalise(p) for p in layer.ignore]
        on -= {code for code in all_codes if _matches(code, ignore)}
    ignored_by_name = any(
        _normalise(p) != "ALL" and ALWAYS_ON.startswith(_normalise(p)) for layer in layers for p in layer.ignore
    )
    if not ignored_by_name:
        on.add(ALWAYS_ON)
    return frozenset(on)


def known_codes() -> dict[str, bool]:
    from analyzer import rules

    codes = {rule.code: rule.default_enabled for rule in rules.all_rules()}
    codes.setdefault(ALWAYS_ON, True)
    return codes


def resolve_config(paths: Sequence[str], explicit: str | Path | None = None) -> Config:
    """The configuration the command line uses for ``paths``."""
    if explicit is not None:
        return load_config(explicit)
    first = next((p for p in paths if p != "-"), None)
    found = find_config(first)
    if found is not None:
        return load_config(found)
    return Config(root=Path.cwd())
