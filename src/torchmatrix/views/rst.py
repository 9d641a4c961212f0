"""The report as reStructuredText for Sphinx: the same tables, notes and legend as the Markdown."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from ..util import safetext
from . import escape
from .chart import title as chart_title
from .markdown import TITLE
from .model import Entry, Report, Table


def render(report: Report, charts: Mapping[str, str] | None = None) -> str:
    """COMPATIBILITY.rst. ``charts`` maps a probe to the file name of its picture (shown under its table)."""
    charts = charts or {}
    lines = [*_heading(TITLE, "="), escape.rst(report.describe()), ""]
    for table in report.tables:
        lines += [*_heading(escape.rst(table.probe) or "?", "-"), *_table(report, table), ""]
        if table.probe in charts:
            lines += [
                f".. image:: {charts[table.probe]}",
                f"   :alt: {safetext.report_line(chart_title(table.probe))}",
                "",
            ]
    if report.notes:
        lines += [*_heading("Notes", "-")]
        lines += [f".. [{number}] {escape.rst(note)}" for number, note in enumerate(report.notes, start=1)]
        lines.append("")
    if report.marks:
        lines += [*_heading("Legend", "-")]
        lines += [f"* {mark.symbol} **{name}**: {meaning}" for mark, name, meaning in report.legend()]
        lines.append("")
    lines += [f"{escape.rst(line)}\n" for line in report.afterword()]
    return "\n".join(lines)


def _heading(title: str, underline: str) -> list[str]:
    width = sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in title)
    return [title, underline * max(width, 4), ""]


def _table(report: Report, table: Table) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", ""]
    header = ["torch", "python", *(escape.rst(column.label) for column in report.columns)]
    rows = [header]
    for row in table.rows:
        number = report.row_notes.get(row)
        release = escape.rst(row.torch) + (f" [{number}]_" if number else "")
        label = [release, escape.rst(report.python_text(row))]
        rows.append([*label, *(_cell(table.entries.get((row, column))) for column in report.columns)])
    for texts in rows:
        lines += [f"   * - {texts[0]}".rstrip(), *(f"     - {text}".rstrip() for text in texts[1:])]
    return lines


def _cell(entry: Entry | None) -> str:
    if entry is None:
        return ""
    # A note is a footnote reference, so that Sphinx links the cell to its note.
    return f"{entry.mark.symbol} [{entry.note}]_" if entry.note else entry.mark.symbol
