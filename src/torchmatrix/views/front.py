"""A library's front table: a matrix of tests as one compact table, then only the tests that did not pass.

A suite of 66 tests is 66 tables of one row per release, which no one reads. The
front table has a row per release and a column per machine and device, each cell
how the tests went there (``✓ all 66 pass``, ``✗ 64 of 66 pass; error:
test_other.py::test_a, …``, as ``SUPPORTED.md`` says it). The detail under it is a
row per test that did not pass in every cell, a column per release (and machine
and device), each cell the test's mark with its note; the tests that passed
everywhere are counted. The page keeps every test's table besides.

A test is a probe whose name is a pytest node id (``tests/test_x.py::test_y``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core import Outcome, holds
from . import escape, supported
from .model import Column, Entry, Report, Row, Table, collectors, is_test

__all__ = ["Front", "front", "is_test", "mark"]


@dataclass(frozen=True)
class Front:
    """The tests of a report: their front table and the detail of those that did not pass everywhere."""

    report: Report
    tests: tuple[Table, ...]
    uncollected: tuple[Table, ...]
    """The files that did not collect in some release (:func:`.model.collectors`): said as such, not as tests."""
    rows: tuple[Row, ...]
    shorten: int
    """The characters every test's name loses in front (the part they all share)."""

    @property
    def spots(self) -> tuple[tuple[Row, Column], ...]:
        """The detail's columns: each release with each column of the report that holds a test there."""
        return tuple(
            (row, column)
            for row in self.rows
            for column in self.report.columns
            if any((row, column) in table.entries for table in (*self.tests, *self.uncollected))
        )

    def summary(
        self,
        row: Row,
        column: Column,
        quote: Callable[[str], str] = escape.markdown,
        join: Callable[[Sequence[str]], str] = supported.listed,
    ) -> str:
        """One cell of the front table: how the tests went in that release on that machine and device (``quote``
        and ``join`` as :func:`.supported.cell_text` takes them)."""
        found = supported.entries((*self.tests, *self.uncollected), row, column)
        return supported.cell_text(found, self.shorten, quote, {table.probe for table in self.uncollected}, join)

    def entry(self, table: Table, spot: tuple[Row, Column]) -> Entry | None:
        """A test's cell in the detail: its own, or where it has none, that of its file if the file did not
        collect there (the error that kept it from running)."""
        own = table.entries.get(spot)
        if own is not None:
            return own
        holders = (file.entries.get(spot) for file in self.uncollected if holds(file.probe, table.probe))
        return next((entry for entry in holders if entry is not None and entry.record is not None), None)

    def not_passing(self) -> tuple[Table, ...]:
        """The tests with a cell shown that is not a plain pass, in name order."""
        spots = self.spots
        return tuple(
            table
            for table in self.tests
            if any((entry := self.entry(table, spot)) is not None and entry.mark is not Outcome.PASS for spot in spots)
        )

    def name(self, table: Table) -> str:
        return table.probe[self.shorten :]

    def spot_label(self, row: Row, column: Column) -> str:
        """A detail column's heading: the release, and the machine and device where the report has several."""
        # The release alone, where no other row is of the same release with another Python.
        twin = sum(other.torch == row.torch for other in self.rows) > 1
        release = row.label if twin else row.torch
        return release if len(self.report.columns) == 1 else f"{release} · {column.label}"

    def passed_everywhere(self) -> str:
        """What the detail leaves out, as a sentence (plain text); '' when it leaves out none."""
        passed = len(self.tests) - len(self.not_passing())
        if not passed:
            return ""
        return f"{passed} of {len(self.tests)} tests passed in every cell: the page and the data files have each."


def front(report: Report) -> Front | None:
    """The report's tests as a front table; None when it has no test."""
    tests = tuple(table for table in report.tables if is_test(table.probe))
    if not tests:
        return None
    files = collectors(table.probe for table in report.tables)
    uncollected = tuple(table for table in report.tables if table.probe in files)
    rows = tuple(sorted({row for table in (*tests, *uncollected) for row in table.rows}, key=Row.sort_key))
    ran = [table.probe for table in tests if any(entry.record for entry in table.entries.values())]
    return Front(report, tests, uncollected, rows, supported.shortener(ran))


def mark(entry: Entry | None) -> str:
    """A detail cell: the mark with its note's number; '' where the test has no cell."""
    return entry.text if entry else ""
