"""The terminal summary of a ``VerifyReport`` (rich): verdict, per-input table, coverage,
where the traced export diverges, and what a peer exporter refused."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from lowering.verification.compare import Comparison
from lowering.verification.report import VerifyReport


def verdict(report: VerifyReport) -> str:
    n = report.n_inputs
    untrace = report.systems["untrace"]
    if not untrace.exported:
        return f"FAILED: untrace could not produce an ONNX model ({_first_line(untrace.error)})"
    eager_failed = [i.index for i in report.inputs if i.eager_error]
    ran = n - len(eager_failed)
    if report.ok:
        text = f"OK: the untrace ONNX matches eager PyTorch on all {ran} inputs"
    else:
        bad = [i for i, c in enumerate(untrace.per_input) if not c.match and i not in eager_failed]
        text = f"MISMATCH: the untrace ONNX differs from eager PyTorch on input{'s' if len(bad) != 1 else ''} " \
               f"{', '.join(map(str, bad))}" if bad else "MISMATCH: no input ran in eager PyTorch"
    trace = report.systems.get("trace")
    if trace is not None:
        if not trace.exported:
            text += "; the traced export failed"
        else:
            wrong = sum(1 for c in trace.per_input if not c.match)
            text += f"; the traced export is wrong on {wrong} of {n}" if wrong else "; the traced export matches too"
    if report.uncovered:
        text += f"; {len(report.uncovered)} branch site{'s' if len(report.uncovered) != 1 else ''} not covered"
    if eager_failed:
        text += f"; eager PyTorch raised on input{'s' if len(eager_failed) != 1 else ''} {', '.join(map(str, eager_failed))}"
    return text


def cell(c: Comparison) -> Text:
    if c.match:
        return Text(f"✓ {_num(c.max_abs)}", style="green")
    if c.error and c.max_abs is None:
        return Text(f"✗ {_first_line(c.error)[:40]}", style="red")
    return Text(f"✗ {_num(c.max_abs)} cos {_num(c.cosine, 3)}", style="red")


def render(report: VerifyReport, console: Console | None = None) -> None:
    console = console or Console()
    origins = {}
    for i in report.inputs:
        origins[i.origin] = origins.get(i.origin, 0) + 1
    console.print(f"[bold]untrace verify[/bold] {report.record.get('model', '')}: {report.n_inputs} inputs "
                  f"({', '.join(f'{k} {v}' for k, v in origins.items())}), opset {report.record.get('opset')}")

    table = Table(title="outputs against eager PyTorch (max abs error)", title_justify="left")
    table.add_column("input", justify="right")
    table.add_column("origin")
    table.add_column("arguments")
    for name in report.systems:
        table.add_column(name)
    for info in report.inputs:
        args = ", ".join(f"{a['name']} {a.get('dtype', '')}{a.get('shape', a.get('value', ''))}" for a in info.arguments)
        row = [str(info.index), info.origin, args]
        for system in report.systems.values():
            if info.eager_error:
                row.append(Text("eager raised", style="yellow"))
            elif not system.exported:
                row.append(Text("not exported", style="dim"))
            else:
                row.append(cell(system.per_input[info.index]))
        table.add_row(*row)
    console.print(table)

    if report.coverage:
        cov = Table(title="branch coverage (untrace probes)", title_justify="left")
        cov.add_column("site", overflow="fold")
        for col in ("construct", "then", "else", "trip counts", "covered"):
            cov.add_column(col)
        for site in report.coverage:
            d = site.to_dict()
            cov.add_row(f"{site.path}:{site.line}", site.construct, _opt(d["then"]), _opt(d["else"]),
                        ",".join(map(str, d["trip_counts"])) if d["trip_counts"] is not None else "",
                        Text("yes", style="green") if site.covered else Text("no: needs " + ", ".join(site.missing()), style="red"))
        console.print(cov)
    elif not report.has_probes:
        console.print("[dim]coverage: the untrace model has no probe outputs[/dim]")
    else:
        console.print("[dim]coverage: no data-dependent branch or loop in the untrace model[/dim]")

    if report.search is not None:
        s = report.search
        console.print(f"search: {s.evaluations} of {s.budget} evaluations, {s.seconds:.1f} s, "
                      f"{len(s.found)} input{'s' if len(s.found) != 1 else ''} added" + (f" ({s.note})" if s.note else ""))

    for d in report.divergence:
        took = ", ".join(f"{i} ({t})" for i, t in zip(d.inputs, d.took))
        console.print(Text(f"trace diverges at {d.path}:{d.line} ({d.construct}): traced on input 0, which took "
                           f"{d.traced}; wrong on input{'s' if len(d.inputs) != 1 else ''} {took}", style="yellow"))
    for name, system in report.systems.items():
        if name != "untrace" and system.error:
            console.print(Text(f"{name}: not exported: {_first_line(system.error)}", style="dim"))
        if system.tracer_warnings:
            console.print(Text(f"{name}: {system.tracer_warnings} TracerWarning"
                               f"{'s' if system.tracer_warnings != 1 else ''} (silenced)", style="dim"))
    console.print(Text(verdict(report), style="bold green" if report.ok else "bold red"))


def _num(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"


def _opt(x) -> str:
    return "" if x is None else str(x)


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""
