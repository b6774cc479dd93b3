"""``untrace verify --html``: one self-contained HTML file (inline CSS, no scripts, no
external resources), written atomically.

Sections: verdict; systems summary; per-input table (the traced export's mismatches
highlighted); branch coverage; where the traced export diverges; the model's source with
every probed line annotated (then/else counts, trip counts), the divergence lines
highlighted and ``untrace check``'s hazards marked; the conversion record.
"""

from __future__ import annotations

import html
import json
import re

from lowering.verification.compare import Comparison
from lowering.verification.report import VerifyReport
from lowering.verification.report_text import verdict

FULL_FILE_LINES = 400  # longer files show only the context of annotated lines
CONTEXT = 6

CSS = """
:root { --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --muted: #57606a; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       margin: 0 auto; max-width: 1200px; padding: 0 24px 48px; background: #fff; }
header { margin: 16px 0 24px; padding: 16px 20px; border-radius: 8px; border: 1px solid var(--line); }
header.ok { background: #dafbe1; border-color: #4ac26b; }
header.bad { background: #ffebe9; border-color: #ff8182; }
header h1 { margin: 0 0 6px; font-size: 22px; }
.verdict-text { font-size: 16px; font-weight: 600; margin: 0 0 6px; }
.meta { color: var(--muted); margin: 0; }
h2 { font-size: 18px; border-bottom: 1px solid var(--line); padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 15px; margin: 20px 0 8px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.match { background: #dafbe1; }
td.mismatch { background: #ffebe9; }
td.mismatch.trace { background: #ffcecb; font-weight: 600; }
td.na { color: var(--muted); background: #f6f8fa; }
.yes { color: var(--ok); font-weight: 600; }
.no { color: var(--bad); font-weight: 600; }
.err { color: var(--muted); font-size: 12px; font-family: ui-monospace, Menlo, monospace; white-space: pre-wrap; }
ul.divergence li { margin: 4px 0; }
table.source { width: 100%; font: 12.5px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
               border: 1px solid var(--line); }
table.source td { border: none; padding: 0 8px; }
table.source td.ln { color: var(--muted); text-align: right; width: 1%; user-select: none;
                     border-right: 1px solid var(--line); }
table.source td.code { white-space: pre; }
table.source td.note { width: 34%; font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
                       font-size: 12px; }
table.source tr.site td.code { background: #ddf4ff; }
table.source tr.site.uncovered td.code { background: #fff8c5; }
table.source tr.diverge td { background: #ffebe9 !important; }
table.source tr.diverge td.ln { border-left: 4px solid var(--bad); }
table.source tr.gap td { color: var(--muted); background: #f6f8fa; }
.badge { display: inline-block; border-radius: 10px; padding: 0 7px; margin: 1px 4px 1px 0; font-size: 11.5px;
         border: 1px solid var(--line); background: #fff; white-space: nowrap; }
.badge.covered { border-color: #4ac26b; color: var(--ok); }
.badge.uncovered { border-color: #d4a72c; color: var(--warn); }
.badge.diverge { border-color: #ff8182; color: var(--bad); background: #fff; }
.badge.hazard { border-color: #8250df; color: #8250df; }
details pre { background: #f6f8fa; padding: 12px; overflow-x: auto; font-size: 12px; }
"""


def _e(x) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def _num(x, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")


def render(report: VerifyReport) -> str:
    record = report.record
    title = f"untrace verify: {record.get('model', '')}"
    versions = record.get("versions", {})
    meta = " · ".join([_e(record.get("model", "")), f"{report.n_inputs} inputs", f"opset {_e(record.get('opset'))}",
                       " ".join(f"{_e(k)} {_e(v)}" for k, v in versions.items() if k in ("torch", "onnx", "onnxruntime")),
                       _e(record.get("date", ""))])
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f'<header class="{"ok" if report.ok else "bad"}" id="verdict"><h1>untrace verify</h1>',
        f'<p class="verdict-text">{_e(verdict(report))}</p><p class="meta">{meta}</p></header>',
        _systems(report),
        _per_input(report),
        _coverage(report),
        _divergence(report),
        _sources(report),
        _record(report),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write(report: VerifyReport, path: str) -> None:
    """Where a shell redirection would write, a regular file atomically."""
    from analyzer.outputs import write_output

    write_output(path, render(report).encode("utf-8"))


# ----------------------------------------------------------------------------- sections


def _systems(report: VerifyReport) -> str:
    rows = []
    for name, s in report.systems.items():
        m = report.record.get("metrics", {}).get(name, {})
        status = '<span class="yes">yes</span>' if s.exported else '<span class="no">no</span>'
        rows.append(
            f"<tr><td>{_e(name)}</td><td>{status}</td><td class=\"num\">{m.get('matched', 0)}/{m.get('of', 0)}</td>"
            f"<td class=\"num\">{_num(m.get('max_abs'))}</td><td class=\"num\">{_num(m.get('max_rel'))}</td>"
            f"<td class=\"num\">{_num(m.get('min_cosine'), 6)}</td><td class=\"num\">{s.seconds:.2f}</td>"
            f"<td class=\"num\">{s.tracer_warnings}</td><td class=\"err\">{_e(s.error)}</td></tr>")
    return ('<section id="systems"><h2>Systems</h2><table id="systems-table"><thead><tr><th>system</th>'
            "<th>exported</th><th>matched</th><th>max abs</th><th>max rel</th><th>min cosine</th><th>export s</th>"
            "<th>TracerWarnings</th><th>error</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></section>")


def _cell(name: str, c: Comparison, exported: bool, eager_error: str | None) -> str:
    if eager_error:
        return '<td class="na">eager raised</td>'
    if not exported:
        return '<td class="na">not exported</td>'
    if c.match:
        return f'<td class="match" title="max rel {_num(c.max_rel)}">✓ {_num(c.max_abs)} · cos {_num(c.cosine, 6)}</td>'
    extra = " trace" if name == "trace" else ""
    if c.error and c.max_abs is None:
        return f'<td class="mismatch{extra}">✗ <span class="err">{_e(c.error[:160])}</span></td>'
    return f'<td class="mismatch{extra}">✗ {_num(c.max_abs)} · cos {_num(c.cosine, 6)}</td>'


def _per_input(report: VerifyReport) -> str:
    head = "".join(f"<th>{_e(n)}</th>" for n in report.systems)
    rows = []
    for info in report.inputs:
        args = "<br>".join(_e(f"{a['name']}: {a.get('dtype', '')}{a.get('shape', a.get('value', ''))}")
                           for a in info.arguments)
        cells = "".join(_cell(n, s.per_input[info.index], s.exported, info.eager_error)
                        for n, s in report.systems.items())
        rows.append(f'<tr data-input="{info.index}"><td class="num">{info.index}</td><td>{_e(info.origin)}</td>'
                    f"<td>{args}</td>{cells}</tr>")
    return ('<section id="inputs"><h2>Per input</h2><p>Each system against eager PyTorch: max abs error · cosine '
            f'similarity (rtol {_e(report.record.get("tolerances", {}).get("rtol"))}, atol '
            f'{_e(report.record.get("tolerances", {}).get("atol"))}).</p><table id="per-input-table"><thead><tr>'
            f"<th>input</th><th>origin</th><th>arguments</th>{head}</tr></thead><tbody>" + "".join(rows)
            + "</tbody></table></section>")


def _site_note(d: dict) -> str:
    bits = []
    if d["then"] is not None:
        bits.append(f"then {d['then']} · else {d['else']}")
    if d["trip_counts"] is not None:
        bits.append("trips " + (", ".join(map(str, d["trip_counts"])) or "none"))
    return "; ".join(bits)


def _coverage(report: VerifyReport) -> str:
    if not report.coverage:
        why = "the untrace model has no probe outputs" if not report.has_probes else \
            "no data-dependent branch or loop in the untrace model"
        return f'<section id="coverage"><h2>Branch coverage</h2><p>{_e(why)}.</p></section>'
    rows = []
    for site in report.coverage:
        d = site.to_dict()
        trips = ", ".join(map(str, d["trip_counts"])) if d["trip_counts"] is not None else ""
        covered = '<span class="yes">yes</span>' if site.covered else \
            f'<span class="no">no</span> (needs {_e(", ".join(site.missing()))})'
        anchor = f"#L-{_slug(site.path)}-{site.line}"
        rows.append(f'<tr><td><a href="{anchor}">{_e(site.path)}:{site.line}</a></td><td>{_e(site.construct)}</td>'
                    f'<td class="num">{_e(d["then"])}</td><td class="num">{_e(d["else"])}</td><td>{_e(trips)}</td>'
                    f"<td>{covered}</td></tr>")
    uncovered = ("<p>Uncovered: " + ", ".join(f"<code>{_e(u)}</code>" for u in report.uncovered) + "</p>"
                 if report.uncovered else "<p>Every side of every probed branch and loop was taken.</p>")
    search = ""
    if report.search is not None:
        s = report.search
        search = (f"<p>Input search: {s.evaluations} of {s.budget} evaluations in {s.seconds:.1f} s, "
                  f"{len(s.found)} input(s) added{_e(' (' + s.note + ')' if s.note else '')}.</p>")
    return ('<section id="coverage"><h2>Branch coverage</h2><p>Counts are numbers of inputs that took each side; '
            'trip counts are the distinct iteration counts seen.</p><table id="coverage-table"><thead><tr>'
            "<th>site</th><th>construct</th><th>then</th><th>else</th><th>trip counts</th><th>covered</th></tr>"
            "</thead><tbody>" + "".join(rows) + "</tbody></table>" + uncovered + search + "</section>")


def _divergence(report: VerifyReport) -> str:
    trace = report.systems.get("trace")
    if trace is None:
        return ""
    if not trace.exported:
        body = f"<p>The traced export failed: <span class=\"err\">{_e(trace.error)}</span></p>"
    elif not report.divergence:
        wrong = [i for i, c in enumerate(trace.per_input) if not c.match]
        body = ("<p>The traced export matches eager PyTorch on every input.</p>" if not wrong else
                f"<p>The traced export is wrong on input(s) {_e(', '.join(map(str, wrong)))}, where every probed "
                "branch went the traced way: a value frozen by the trace (a shape, a Python number).</p>")
    else:
        items = []
        for d in report.divergence:
            took = ", ".join(f"input {i} ({t})" for i, t in zip(d.inputs, d.took))
            items.append(f'<li><a href="#L-{_slug(d.path)}-{d.line}"><code>{_e(d.path)}:{d.line}</code></a> '
                         f"({_e(d.construct)}): traced on input 0, which took <b>{_e(d.traced)}</b>; "
                         f"the traced export is wrong on {_e(took)}</li>")
        body = '<ul class="divergence">' + "".join(items) + "</ul>"
    return f'<section id="divergence"><h2>Where the traced export diverges</h2>{body}</section>'


def _sources(report: VerifyReport) -> str:
    sites: dict[tuple[str, int], list] = {}
    for site in report.coverage:
        sites.setdefault((site.path, site.line), []).append(site)
    diverge = {(d.path, d.line): d for d in report.divergence}
    hazards: dict[tuple[str, int], list[dict]] = {}
    for h in report.record.get("hazards", []):
        hazards.setdefault((h["path"], h["line"]), []).append(h)
    blocks = []
    for path in report.sources:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        marked = {ln for (p, ln) in list(sites) + list(diverge) + list(hazards) if p == path}
        if len(lines) <= FULL_FILE_LINES:
            shown = set(range(1, len(lines) + 1))
        else:
            shown = {n for m in marked for n in range(m - CONTEXT, m + CONTEXT + 1) if 1 <= n <= len(lines)}
        rows, previous = [], 0
        slug = _slug(path)
        for n in sorted(shown):
            if n > previous + 1:
                rows.append(f'<tr class="gap"><td class="ln">⋮</td><td class="code">lines {previous + 1}-{n - 1} '
                            "not shown</td><td></td></tr>")
            previous = n
            classes, badges = ["line"], []
            for site in sites.get((path, n), []):
                state = "covered" if site.covered else "uncovered"
                classes += ["site", state]
                badges.append(f'<span class="badge {state}">{_e(site.construct)}: {_e(_site_note(site.to_dict()))}'
                              f"{'' if site.covered else ' — not covered'}</span>")
            d = diverge.get((path, n))
            if d is not None:
                classes.append("diverge")
                took = ", ".join(f"{i} ({t})" for i, t in zip(d.inputs, d.took))
                badges.append(f'<span class="badge diverge">trace froze {_e(d.traced)}; wrong on input'
                              f'{"s" if len(d.inputs) != 1 else ""} {_e(took)}</span>')
            for h in hazards.get((path, n), []):
                badges.append(f'<span class="badge hazard" title="{_e(h["message"])}">{_e(h["code"])} '
                              f"{_e(h['name'])}</span>")
            rows.append(f'<tr class="{" ".join(dict.fromkeys(classes))}" id="L-{slug}-{n}" data-line="{n}">'
                        f'<td class="ln">{n}</td><td class="code">{_e(lines[n - 1])}</td>'
                        f'<td class="note">{"".join(badges)}</td></tr>')
        if len(lines) > previous and len(lines) > FULL_FILE_LINES:
            rows.append(f'<tr class="gap"><td class="ln">⋮</td><td class="code">lines {previous + 1}-{len(lines)} '
                        "not shown</td><td></td></tr>")
        blocks.append(f'<h3>{_e(path)}</h3><table class="source" data-path="{_e(path)}"><tbody>'
                      + "".join(rows) + "</tbody></table>")
    if not blocks:
        blocks.append("<p>The model's source files could not be read.</p>")
    return '<section id="source"><h2>Source</h2>' + "".join(blocks) + "</section>"


def _record(report: VerifyReport) -> str:
    r = report.record
    versions = ", ".join(f"{k} {v}" for k, v in r.get("versions", {}).items())
    inputs = "; ".join(f"{i['index']} ({i['origin']}): " + ", ".join(
        f"{a['name']} {a.get('dtype', '')}{a.get('shape', a.get('value', ''))}" for a in i["arguments"])
        for i in r.get("inputs", []))
    rows = [
        ("model", r.get("model")), ("training mode", r.get("training")), ("versions", versions),
        ("opset", r.get("opset")), ("untrace model", r.get("untrace_model")), ("probes", r.get("probes")),
        ("dynamic axes", json.dumps(r.get("dynamic_axes"), default=str)), ("inputs", inputs),
        ("tolerances", json.dumps(r.get("tolerances"))),
        ("error metrics", json.dumps(r.get("metrics"), default=str)),
        ("TracerWarnings", r.get("tracer_warnings")), ("date", r.get("date")), ("seconds", r.get("seconds")),
    ]
    table = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    hazards = r.get("hazards", [])
    hazard_rows = "".join(
        f'<tr><td><a href="#L-{_slug(h["path"])}-{h["line"]}">{_e(h["path"])}:{h["line"]}</a></td>'
        f'<td>{_e(h["code"])}</td><td>{_e(h["name"])}</td><td>{_e(h["message"])}</td></tr>' for h in hazards)
    hazard_table = ('<table id="hazards-table"><thead><tr><th>where</th><th>code</th><th>name</th><th>message</th>'
                    "</tr></thead><tbody>" + hazard_rows + "</tbody></table>") if hazards else \
        "<p>untrace check finds no hazard in the model's files.</p>"
    raw = _e(json.dumps(r, indent=2, default=str))
    return ('<section id="record"><h2>Conversion record</h2><table id="record-table"><tbody>' + table
            + "</tbody></table><h3>Hazards found by untrace check</h3>" + hazard_table
            + f"<details><summary>raw record (JSON)</summary><pre>{raw}</pre></details></section>")
