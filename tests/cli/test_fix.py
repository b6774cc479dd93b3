"""--fix / --diff / --unsafe-fixes, and the edit machinery under them."""

from __future__ import annotations

import io
import os
import stat
import sys

from analyzer.diagnostics import Diagnostic, Edit, Fix
from analyzer.runner import apply_fixes


def diag(*edits: Edit, line=1, applicability="safe", code="UT201") -> Diagnostic:
    return Diagnostic(
        code=code,
        name="n",
        message="m",
        severity="error",
        path="f.py",
        line=line,
        column=1,
        end_line=line,
        end_column=2,
        fix=Fix("fix it", tuple(edits), applicability),
    )


def test_edits_are_applied_bottom_up():
    text = "a = x.item()\nb = y.item()\n"
    fixed, applied = apply_fixes(text, [diag(Edit(1, 6, 1, 13, "")), diag(Edit(2, 6, 2, 13, ""), line=2)])
    assert fixed == "a = x\nb = y\n" and len(applied) == 2


def test_multi_edit_fix_and_multiline_edit():
    text = "if a:\n    b\nc\n"
    fix = diag(Edit(1, 1, 2, 6, "b if a else None"), Edit(3, 1, 3, 2, "d"))
    assert apply_fixes(text, [fix])[0] == "b if a else None\nd\n"


def test_overlapping_fixes_apply_the_first_only():
    text = "abcdef\n"
    first = diag(Edit(1, 2, 1, 5, "X"))
    second = diag(Edit(1, 4, 1, 6, "Y"), line=1, code="UT202")
    fixed, applied = apply_fixes(text, [second, first])
    assert fixed == "aXef\n" and applied == [first]
    # touching is not overlapping
    fixed, _ = apply_fixes(text, [diag(Edit(1, 1, 1, 3, "1")), diag(Edit(1, 3, 1, 5, "2"), code="UT202")])
    assert fixed == "12ef\n"


def test_insertions_at_the_same_point_are_not_both_applied():
    fixed, applied = apply_fixes("ab\n", [diag(Edit(1, 2, 1, 2, "X")), diag(Edit(1, 2, 1, 2, "Y"), code="UT202")])
    assert fixed == "aXb\n" and len(applied) == 1


def test_crlf_and_out_of_range_edits():
    assert apply_fixes("a\r\nbc\r\n", [diag(Edit(2, 2, 2, 3, "Z"), line=2)])[0] == "a\r\nbZ\r\n"
    # an edit outside the text is skipped, never a crash
    assert apply_fixes("a\n", [diag(Edit(5, 1, 5, 2, "Z"))]) == ("a\n", [])
    assert apply_fixes("a\n", [diag(Edit(1, 9, 1, 12, "Z"))]) == ("a\n", [])


def test_unsafe_fixes_need_the_flag():
    unsafe = diag(Edit(1, 1, 1, 2, "Z"), applicability="unsafe")
    assert apply_fixes("a\n", [unsafe]) == ("a\n", [])
    assert apply_fixes("a\n", [unsafe], unsafe=True)[0] == "Z\n"


def test_fix_rewrites_the_file_and_reports_what_is_left(fake, tree, cli):
    model = tree / "pkg" / "model.py"
    model.chmod(0o640)
    code, out, _ = cli("check", "pkg", "--no-cache", "--fix")
    assert code == 1  # the UT101 has no fix
    assert "n = x.max()\n" in model.read_text()
    assert ".item()" not in model.read_text()
    assert "UT201" not in out and "UT101" in out
    assert "Fixed 1 hazard." in out
    assert stat.S_IMODE(os.stat(model).st_mode) == 0o640
    assert [p.name for p in (tree / "pkg").iterdir() if p.name.startswith(".")] == []


def test_fix_everything_exits_0(fake, tree, cli):
    (tree / "pkg" / "model.py").write_text("def f(x):\n    return x.sum().item() + x.max().item()\n")
    code, out, _ = cli("check", "pkg", "--no-cache", "--fix")
    assert code == 0
    assert (tree / "pkg" / "model.py").read_text() == "def f(x):\n    return x.sum() + x.max()\n"
    assert out.splitlines() == ["Fixed 2 hazards.", "No hazards found (2 files checked)."]


def test_diff_shows_and_does_not_write(fake, tree, cli):
    before = (tree / "pkg" / "model.py").read_text()
    code, out, err = cli("check", "pkg", "--no-cache", "--diff")
    assert code == 1
    assert (tree / "pkg" / "model.py").read_text() == before
    assert out.splitlines() == [
        "--- a/pkg/model.py",
        "+++ b/pkg/model.py",
        "@@ -7,5 +7,5 @@",
        "             x = -x",
        "         if x.shape[0] > 1:",
        "             x = x[:1]",
        "-        n = x.max().item()",
        "+        n = x.max()",
        "         return x * n",
    ]
    assert "Would fix 1 hazard." in err
    assert cli("check", "pkg/clean.py", "--no-cache", "--diff")[0] == 0


def test_unsafe_fixes_flag_end_to_end(fake, tree, cli):
    model = tree / "pkg" / "model.py"
    model.write_text("def f(x):\n    return x.tolist()\n")
    assert cli("check", "pkg", "--no-cache", "--fix")[0] == 1
    assert ".tolist()" in model.read_text()
    assert cli("check", "pkg", "--no-cache", "--fix", "--unsafe-fixes")[0] == 0
    assert model.read_text() == "def f(x):\n    return x\n"


def test_fix_keeps_the_declared_encoding_and_bom(fake, tree, cli):
    latin = tree / "pkg" / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\ns = 'café'\nn = x.sum().item()\n".encode("latin-1"))
    bom = tree / "pkg" / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfs = 'caf\xc3\xa9'\nn = x.sum().item()\n")
    cli("check", "pkg", "--no-cache", "--fix")
    assert latin.read_bytes() == "# -*- coding: latin-1 -*-\ns = 'café'\nn = x.sum()\n".encode("latin-1")
    assert bom.read_bytes() == b"\xef\xbb\xbfs = 'caf\xc3\xa9'\nn = x.sum()\n"


def test_fix_on_stdin_prints_the_fixed_source(fake, tree, cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"def f(x):\n    return x.sum().item()\n")))
    code, out, err = cli("check", "-", "--fix")
    assert code == 0
    assert out == "def f(x):\n    return x.sum()\n"
    assert "Fixed 1 hazard." in err
