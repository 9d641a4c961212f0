"""The report as GitHub-flavoured Markdown: one table per probe, notes, a legend, and the charts beside them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..summaries import Summary
from . import bisected, escape
from .chart import title as chart_title
from .model import Report, Table

TITLE = "torch compatibility"


def render(report: Report, charts: Mapping[str, str] | None = None, bisections: Sequence[Summary] = ()) -> str:
    """COMPATIBILITY.md. ``charts`` maps a probe to the file name of its picture (shown under its table).

    ``bisections``: the stored bisections' summaries, shown in a section after the tables.
    """
    charts = charts or {}
    lines = [f"# {TITLE}", "", escape.markdown(report.describe()), ""]
    for table in report.tables:
        lines += [f"## {escape.markdown(table.probe)}", "", *_table(report, table), ""]
        if table.probe in charts:
            lines += [f"![{escape.markdown(chart_title(table.probe))}]({charts[table.probe]})", ""]
    lines += bisected.markdown(bisections)
    if report.notes:
        lines += ["## Notes", ""]
        lines += [f"{number}. {escape.markdown(note)}" for number, note in enumerate(report.notes, start=1)]
        lines.append("")
    if report.marks:
        lines += ["## Legend", "", "| symbol | outcome | meaning |", "| :-: | --- | --- |"]
        lines += [f"| {mark.symbol} | {mark.value} | {mark.meaning} |" for mark in report.marks]
        lines.append("")
    lines += [f"{escape.markdown(line)}\n" for line in report.afterword()]
    return "\n".join(lines)


def _table(report: Report, table: Table) -> list[str]:
    header = ["torch", "python", *(escape.markdown(column.label) for column in report.columns)]
    lines = [_line(header), _line([":--", ":--", *[":-:"] * len(report.columns)])]
    for row in table.rows:
        cells = [table.entries.get((row, column)) for column in report.columns]
        label = [escape.markdown(row.label), escape.markdown(", ".join(report.pythons.get(row, ())))]
        lines.append(_line([*label, *(entry.text if entry else "" for entry in cells)]))
    return lines


def _line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
