"""Jupyter notebooks (``.ipynb``): their code cells as one Python source, and back.

    notebook = read_notebook(data)        # raises NotebookError
    notebook.source                       # the code cells, one after another
    notebook.locate(line)                 # -> (cell, line in that cell)

As ruff does, the code cells (``cell_type == "code"``) of an nbformat 4 notebook are
concatenated in order and checked as one module, and a finding is reported at its cell
and the line within that cell. Cells are numbered from 1 among all the cells of the
notebook, markdown included, so ``cell 3`` is the third cell on screen. IPython syntax is
not Python: a line magic or shell escape (``%time f()``, ``!pip install x``,
``files = !ls``, ``obj?``) is blanked (an indented one becomes ``pass``, so that its block
still parses), and so is a whole cell under a cell magic (``%%bash``), except the magics
that run the cell as Python (``%%time``, ``%%capture``, ...), where only the magic line is.
Line numbers never move: a finding's line in the source is its line in the cell.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

SUFFIX = ".ipynb"

# cell magics whose body is Python that runs
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy", "writefile_python"})
_MAGIC = re.compile(r"^\s*(?:[%!]|\?)|^\s*[\w.\[\]]+\?{1,2}\s*$|^\s*[\w.,\s\[\]()*]+=\s*[%!]")


class NotebookError(Exception):
    """The file is not a notebook that can be checked; the message says why."""


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based, among all cells
    first_line: int  # its first line in `Notebook.source`
    lines: tuple[str, ...]  # its source lines, as written (magics included), without newlines


@dataclass(frozen=True)
class Notebook:
    source: str
    cells: tuple[Cell, ...]  # the code cells with at least one line
    language: str | None = None  # the kernel's language when it declares one

    @property
    def is_python(self) -> bool:
        return self.language is None or self.language.lower() in ("python", "python3", "ipython", "ipython3")

    def locate(self, line: int) -> tuple[int, int] | None:
        """(cell number, line in the cell) of a line of ``source``."""
        if not self.cells:
            return None
        index = bisect.bisect_right([c.first_line for c in self.cells], line) - 1
        cell = self.cells[max(index, 0)]
        return cell.number, max(1, line - cell.first_line + 1)

    def cell_line(self, number: int, line: int) -> str | None:
        for cell in self.cells:
            if cell.number == number:
                return cell.lines[line - 1] if 1 <= line <= len(cell.lines) else None
        return None


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


def read_notebook(data: bytes | str) -> Notebook:
    import json

    try:
        document = json.loads(data)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not a valid notebook: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise NotebookError(f"not a valid notebook: cannot decode it as JSON: {error}") from None
    except RecursionError:
        raise NotebookError("not a valid notebook: JSON nested too deep") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        if isinstance(document, dict) and "worksheets" in document:
            raise NotebookError("not a notebook untrace can read: nbformat 3 (convert it with `jupyter nbconvert --to notebook`)")
        raise NotebookError("not a valid notebook: no `cells` list at the top level")
    language = _language(document.get("metadata"))
    lines: list[str] = []
    cells: list[Cell] = []
    for number, raw in enumerate(document["cells"], start=1):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code":
            continue
        source = raw.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"not a valid notebook: cell {number} has a `source` that is not text")
        cell_lines = tuple(source.splitlines())
        if not cell_lines:
            continue
        cells.append(Cell(number, len(lines) + 1, cell_lines))
        lines.extend(_python_lines(cell_lines))
    return Notebook("".join(line + "\n" for line in lines), tuple(cells), language)


def _language(metadata) -> str | None:
    if not isinstance(metadata, dict):
        return None
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        table = metadata.get(key)
        if isinstance(table, dict) and isinstance(table.get(field), str) and table[field]:
            return table[field]
    return None


def _parses(lines: tuple[str, ...]) -> bool:
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile("".join(line + "\n" for line in lines), "<cell>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        return True
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError...
        return False


def _python_lines(lines: tuple[str, ...]) -> list[str]:
    """The cell's lines with IPython syntax blanked, one for one. A cell that is Python
    already is left alone (a continuation line may well start with `%`)."""
    if _parses(lines):
        return list(lines)
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith("%%"):
        name = first.lstrip()[2:].split(maxsplit=1)[0] if first.lstrip()[2:].strip() else ""
        if name not in _PYTHON_CELL_MAGICS:
            return [""] * len(lines)
    out = []
    continued = False
    for line in lines:
        if continued or line.lstrip().startswith("%%") or _MAGIC.match(line):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + "pass" if indent and not continued else "")
            continued = line.rstrip().endswith("\\")
        else:
            out.append(line)
    return out


def in_cells(diagnostics, path: str, notebook: Notebook) -> list:
    """``diagnostics`` with the positions of those in ``path`` moved from the
    concatenated source to their cell (``cell``, and lines within the cell)."""
    from dataclasses import replace

    out = []
    for diag in diagnostics:
        where = notebook.locate(diag.line) if diag.path == path and diag.cell is None else None
        if where is None:
            out.append(diag)
            continue
        cell, line = where
        end = notebook.locate(diag.end_line)
        if end is not None and end[0] == cell:
            end_line, end_column = end[1], diag.end_column
        else:  # a span running into the next cell ends with the line it starts on
            end_line, end_column = line, max(diag.column, len(notebook.cell_line(cell, line) or "") + 1)
        out.append(replace(diag, cell=cell, line=line, end_line=end_line, end_column=end_column))
    return out
