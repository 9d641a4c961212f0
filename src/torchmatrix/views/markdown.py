"""The report as GitHub-flavoured Markdown: a front table of the tests, one table per other probe, notes, a legend,
and the charts beside them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..bisection.summaries import Summary
from . import bisected, escape
from .chart import title as chart_title
from .front import Front, front, is_test, mark
from .model import Report, Table

TITLE = "torch compatibility"


def render(report: Report, charts: Mapping[str, str] | None = None, bisections: Sequence[Summary] = ()) -> str:
    """COMPATIBILITY.md. ``charts`` maps a probe to the file name of its picture (shown under its table).

    ``bisections``: the stored bisections' summaries, shown in a section after the tables.
    """
    charts = charts or {}
    lines = [f"# {TITLE}", "", escape.markdown(report.describe()), ""]
    tests = front(report)
    if tests:
        lines += _front(tests)
    for table in report.tables:
        if is_test(table.probe):
            continue
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
        lines += [f"| {mark.symbol} | {name} | {meaning} |" for mark, name, meaning in report.legend()]
        lines.append("")
    lines += [f"{escape.markdown(line)}\n" for line in report.afterword()]
    return "\n".join(lines)


def _table(report: Report, table: Table) -> list[str]:
    header = ["torch", "python", *(escape.markdown(column.label) for column in report.columns)]
    lines = [_line(header), _line([":--", ":--", *[":-:"] * len(report.columns)])]
    for row in table.rows:
        cells = [table.entries.get((row, column)) for column in report.columns]
        label = [escape.markdown(report.torch_text(row)), escape.markdown(report.python_text(row))]
        lines.append(_line([*label, *(entry.text if entry else "" for entry in cells)]))
    return lines


def _front(tests: Front) -> list[str]:
    """The tests' front table, then a row per test that did not pass in every cell."""
    report = tests.report
    header = ["torch", "python", *(escape.markdown(column.label) for column in report.columns)]
    lines = ["## Tests", "", _line(header), _line([":--", ":--", *[":--"] * len(report.columns)])]
    for row in tests.rows:
        cells = [tests.summary(row, column) for column in report.columns]
        lines.append(_line([escape.markdown(report.torch_text(row)), escape.markdown(report.python_text(row)), *cells]))
    lines.append("")
    shown = tests.not_passing()
    if shown:
        spots = tests.spots
        lines += ["### Tests that did not pass everywhere", ""]
        lines.append(_line(["test", *(escape.markdown(tests.spot_label(*spot)) for spot in spots)]))
        lines.append(_line([":--", *[":-:"] * len(spots)]))
        for table in shown:
            lines.append(_line([escape.markdown(tests.name(table)), *(mark(tests.entry(table, s)) for s in spots)]))
        lines.append("")
    if tests.passed_everywhere():
        lines += [escape.markdown(tests.passed_everywhere()), ""]
    return lines


def _line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
