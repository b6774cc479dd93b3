"""``[tool.untrace]`` in ``pyproject.toml``: which rules run, on which files.

The configuration comes from the nearest ``pyproject.toml`` that has a
``[tool.untrace]`` table, at or above the first checked path (or the current
directory), as ruff finds ``[tool.ruff]``. ``--config PATH`` names the file instead.
Every mistake in it (an unknown key, a wrong type, a code that names no rule, an empty
``select``) is a :class:`ConfigError` naming the file, which the command line turns into
exit code 2. So is a ``pyproject.toml`` met on the way up that cannot be read as TOML
(not UTF-8, invalid, nested too deep), with or without our table: it may hold it.

Rule selection is layered the way ruff does it: the defaults, then the configuration
file, then the command line. A layer with ``select`` starts again from that selection;
``extend-select`` adds to what the layers before chose; ``ignore`` removes. UT000
(the file could not be read or parsed) is always reported unless ignored by name. A
selection that leaves no rule on is a usage error (:func:`check_selection`).
"""

from __future__ import annotations

import os
import re
import reprlib
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


# What the user can do instead of fixing a broken pyproject.toml met on the way up
# (``untrace check``'s way; export and verify, which have no --config, give their own).
USE_CONFIG_OPTION = "name the configuration with --config PATH"


def find_config(start: Path | str | None = None, *, instead: str = USE_CONFIG_OPTION) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.untrace]`` table at or above ``start``.

    Every ``pyproject.toml`` on the way up is read, to learn whether it holds our table.
    One that cannot be read (unreadable, not UTF-8, invalid TOML, nested too deep) is a
    :class:`ConfigError`, not a file to step over: it may hold ``[tool.untrace]``, and
    going on with the defaults or a configuration further up would change what is
    reported without a word. ruff refuses a broken ``pyproject.toml`` on its way up the
    same way. A broken file above the one that holds our table is never read.
    ``instead`` ends the message: the other way out the command offers.
    """
    for directory in _searched_folders(start):
        candidate = directory / "pyproject.toml"
        # os.path.isfile: a directory that cannot be searched holds no configuration we
        # can read (pathlib's is_file raises PermissionError there)
        if os.path.isfile(candidate):
            data = read_toml(candidate, instead=instead)
            if isinstance(data.get("tool"), dict) and SECTION in data["tool"]:
                return candidate
    return None


def _searched_folders(start: Path | str | None) -> tuple[Path, ...]:
    """The folders whose ``pyproject.toml`` `find_config` reads, nearest first."""
    here = Path(start if start is not None else Path.cwd()).absolute()
    if not os.path.isdir(here):
        here = here.parent
    return (here, *here.parents)


def config_candidates(paths: Sequence[str], explicit: str | Path | None = None) -> list[str]:
    """Every configuration file `resolve_config` reads for ``paths``: ``explicit``, or
    each ``pyproject.toml`` at or above the first path, up to the one that holds our
    table. They are inputs of the run, which an output may not overwrite."""
    if explicit is not None:
        return [str(explicit)]
    first = next((p for p in paths if p != "-"), None)
    try:
        found = find_config(first)
    except ConfigError:
        found = None  # a broken one on the way: every pyproject.toml up there counts
    candidates = []
    for directory in _searched_folders(first):
        candidate = directory / "pyproject.toml"
        if os.path.lexists(candidate):
            candidates.append(str(candidate))
        if found is not None and candidate == found:
            break
    return candidates


def read_toml(path: Path, *, instead: str | None = None) -> dict:
    """The TOML document in ``path``, or a :class:`ConfigError` that names the file (and
    the line and column where there is one) and says what to do. ``instead``: the file
    was met looking for the configuration (not named with ``--config``), and this is
    what the user can do other than fixing it."""
    from analyzer.files import not_regular

    kind = not_regular(str(path))
    if kind is not None:
        raise ConfigError(f"{path}: cannot read configuration: not a regular file ({kind})")
    # What to do about a file the user may not think of as untrace's (found on the way
    # up from the checked paths).
    way_out = (
        "; untrace reads every pyproject.toml from the checked paths up to the first with "
        f"[tool.{SECTION}], and cannot tell whether this one holds it: fix it, or {instead}"
        if instead is not None
        else ""
    )
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        # TOML files are UTF-8 by definition (toml.io, "Spec"): a file in another
        # encoding is not a TOML file, whatever it holds.
        line, column = _byte_position(data, error.start)
        raise ConfigError(
            f"{path}:{line}:{column}: invalid configuration: not UTF-8 (byte 0x{data[error.start]:02x}), "
            f"and TOML files must be{way_out or '; save it as UTF-8'}"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        where, message = _toml_error_position(str(error))
        raise ConfigError(f"{path}{where}: invalid TOML: {message}{way_out}") from None
    except RecursionError:
        # tomllib reads arrays and inline tables by recursion; thousands of them inside
        # each other exhaust Python's stack (no real configuration comes near)
        raise ConfigError(
            f"{path}: invalid configuration: arrays or inline tables nested too deep to read{way_out}"
        ) from None


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of the byte at ``offset``."""
    before = data[:offset]
    line_start = before.rfind(b"\n") + 1
    column = len(before[line_start:].decode("utf-8", errors="replace")) + 1
    return before.count(b"\n") + 1, column


_TOML_POSITION = re.compile(r"^(?P<message>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)$", re.DOTALL)


def _toml_error_position(message: str) -> tuple[str, str]:
    """tomllib's "msg (at line L, column C)" as (":L:C", "msg"), the way untrace names
    positions elsewhere."""
    match = _TOML_POSITION.match(message)
    if match is None:
        return "", message
    return f":{match['line']}:{match['column']}", match["message"]


def load_config(path: Path | str) -> Config:
    """Read ``[tool.untrace]`` from ``path`` (a pyproject.toml, or any TOML file whose
    top level holds the same keys)."""
    path = Path(path)
    data = read_toml(path)
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
        if key == "select" and not value:
            # as `--select ''`: no rule would run, and every file would be reported clean
            raise ConfigError(
                f"{label}: `select` is empty, which turns every rule off; list the codes to report "
                "(ALL for every rule), or remove `select` for the default rules"
            )
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
            raise ConfigError(f"{label} must be a positive integer, not {_shown(value)}")
        return value
    if kind in ("codes", "globs"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{label} must be a list of strings, not {_shown(value)}")
        return tuple(v.strip().upper() if kind == "codes" else v for v in value)
    if kind == "mapping":
        if not isinstance(value, dict):
            raise ConfigError(f"{label} must be a table of glob = [codes], not {_shown(value)}")
        out = {}
        for glob, codes in value.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{label}: `{_start(glob)}` must be a list of rule codes, not {_shown(codes)}")
            _check_glob(glob, label)
            out[glob] = tuple(c.strip().upper() for c in codes)
        return out
    raise AssertionError(kind)


def _check_glob(glob: str, label: str) -> None:
    """A per-file-ignores glob is compiled when findings are filtered; one pathspec
    refuses (``!`` alone, a trailing ``\\``) is this file's mistake, said before any work."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([glob])
    except Exception as error:  # pathspec raises several kinds for bad patterns
        raise ConfigError(f"{label}: invalid glob `{_start(glob)}`: {error}") from None


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 3, 4, 4, 60, 60


def _shown(value) -> str:
    """A value from the file as a message shows it: its start, however long or deep."""
    return _SHORT.repr(value)


def _start(text: str) -> str:
    """A string from the file (a key, a glob) as a message shows it."""
    return text if len(text) <= 60 else text[:57] + "..."


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
    on = set(_selected(layers, all_codes))
    ignored_by_name = any(
        _normalise(p) != "ALL" and ALWAYS_ON.startswith(_normalise(p)) for layer in layers for p in layer.ignore
    )
    if not ignored_by_name:
        on.add(ALWAYS_ON)
    return frozenset(on)


def _selected(layers: Sequence[Selection], all_codes: dict[str, bool]) -> set[str]:
    """The codes the layers turn on, without the UT000 that is on unless ignored by name."""
    on = {code for code, default in all_codes.items() if default}
    for layer in layers:
        if layer.select is not None:
            select = [_normalise(p) for p in layer.select]
            on = {code for code in all_codes if _matches(code, select)}
        extend = [_normalise(p) for p in layer.extend_select]
        on |= {code for code in all_codes if _matches(code, extend)}
        ignore = [_normalise(p) for p in layer.ignore]
        on -= {code for code in all_codes if _matches(code, ignore)}
    return on


def check_selection(config: Config, cli: Selection | None = None) -> None:
    """Refuse a rule selection that names no rule, or that leaves no rule on.

    A selection after which no rule is on (``--select UT101 --ignore UT1``, ``--ignore
    ALL``, the configuration's ``ignore`` covering its ``select``) would check every file
    and report it clean: the same trap as an empty ``select``, so the same usage error.
    ruff accepts such a selection and prints "All checks passed!"; a pre-commit hook or
    CI job then passes whatever the code holds. UT000, on unless ignored by name, does
    not count: only a run that selects it itself (``--select UT000``, parse errors only)
    means to report nothing else.
    """
    for label, patterns in (
        ("--select", cli.select if cli else None),
        ("--extend-select", cli.extend_select if cli else ()),
        ("--ignore", cli.ignore if cli else ()),
    ):
        bad = check_codes(patterns or ())
        if bad:
            raise ConfigError(f"{label}: unknown rule code(s): {', '.join(bad)} (see `untrace rule`)")
    layers = [config.selection] + ([cli] if cli else [])
    if _selected(layers, known_codes()):
        return
    given = []
    if config.selection != Selection():
        given.append(f"{_layer_text(config.selection, '{key} = {codes}')} in {config.path or 'the configuration'}")
    if cli is not None and cli != Selection():
        given.append(_layer_text(cli, "--{key} {joined}"))
    raise ConfigError(
        f"no rule is left to report ({'; then '.join(given)}): every file would be reported clean; "
        "select at least one rule (`untrace rule` lists them), or ignore fewer"
    )


def _layer_text(layer: Selection, form: str) -> str:
    parts = []
    for key, codes in (("select", layer.select), ("extend-select", layer.extend_select), ("ignore", layer.ignore)):
        if codes is not None and (codes or key == "select"):
            parts.append(form.format(key=key, codes="[" + ", ".join(f'"{c}"' for c in codes) + "]",
                                     joined=",".join(codes) or "''"))
    return ", ".join(parts) if "=" in form else " ".join(parts)


def known_codes() -> dict[str, bool]:
    from analyzer import rules

    codes = {rule.code: rule.default_enabled for rule in rules.all_rules()}
    codes.setdefault(ALWAYS_ON, True)
    return codes


def resolve_config(paths: Sequence[str], explicit: str | Path | None = None, *,
                   instead: str = USE_CONFIG_OPTION) -> Config:
    """The configuration the command line uses for ``paths`` (``instead``: see
    :func:`find_config`)."""
    if explicit is not None:
        return load_config(explicit)
    first = next((p for p in paths if p != "-"), None)
    found = find_config(first, instead=instead)
    if found is not None:
        return load_config(found)
    return Config(root=Path.cwd())
