"""The cells whose outcome differs between two result sets (e.g. last week's and today's, or two machines')."""

from __future__ import annotations

from dataclasses import dataclass

from tabulate import tabulate

from ..core import Outcome
from ..util import safetext
from .model import Column, Report, Row


@dataclass(frozen=True)
class MarkChange:
    """One cell: its mark before and after (None: no such cell on that side)."""

    probe: str
    row: Row
    column: Column
    before: Outcome | None
    after: Outcome | None
    stale: bool = False
    """Whether the record after is stale now: what it says is not what a run now would show (the table's ↻)."""


def changes(before: Report, after: Report, now: Report | None = None) -> list[MarkChange]:
    """Every (probe, torch release, machine, device) whose mark differs, in table order; each the report ``now``
    (``after``'s results, their stale records marked) marks stale, said so.

    Only columns that either side shows count: a column unavailable throughout
    both would list nothing but `unavailable` coming and going.
    """
    old, new = _marks(before), _marks(after)
    stale = {key for key, mark in _marks(now).items() if mark is Outcome.STALE} if now else set()
    shown = {*before.columns, *after.columns}
    keys = sorted(
        (key for key in old.keys() | new.keys() if key[2] in shown),
        key=lambda key: (key[0], key[1].sort_key(), key[2].sort_key()),
    )
    return [MarkChange(*key, old.get(key), new.get(key), key in stale) for key in keys if old.get(key) != new.get(key)]


def _marks(report: Report) -> dict[tuple[str, Row, Column], Outcome]:
    return {
        (table.probe, row, column): entry.mark
        for table in report.tables
        for (row, column), entry in table.entries.items()
    }


def render(found: list[MarkChange], before: str, after: str) -> str:
    """A plain-text table of ``found`` for the terminal (every text from a file cleaned)."""
    sides = f"between {safetext.report_line(before)} (before) and {safetext.report_line(after)} (after)"
    if not found:
        return f"no cell changed outcome {sides}"
    rows = [
        [*map(safetext.report_line, (change.probe, change.row.label, change.column.label)),
         _mark(change.before), ("↻ stale: " if change.stale else "") + _mark(change.after)]
        for change in found
    ]  # fmt: skip
    table = tabulate(rows, headers=["probe", "torch", "machine · device", "before", "after"], disable_numparse=True)
    count = f"{len(found)} cell" + (" changed" if len(found) == 1 else "s changed")
    return f"{count} outcome {sides}:\n{table}"


def _mark(mark: Outcome | None) -> str:
    return f"{mark.symbol} {mark.value}" if mark else "(absent)"
