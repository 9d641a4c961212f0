"""Every machine's stored results as tables: one per probe, rows torch releases, columns (machine, device).

Results copied in from other machines merge by their ``machine`` field: the same
cell from two machines is two columns; for one machine and cell the most
recently finished result wins. The model is a pure function of the results, so
every renderer shows the same cells, marks and notes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from packaging.version import Version

from .. import core, results
from ..core import DEVICES, Outcome, Record
from ..freshness import WAS
from ..matrix import PinRule
from ..results import CellResult
from ..util import safetext
from ..util.arguments import typed
from ..worker import printed
from . import pins

NOTE_LIMIT = 300
VALUE_LIMIT = 60
FAILING_CHECKS_SHOWN = 2
# What installers draw before their last line (uv: "  ╰─▶ reason"), which a note leaves out.
_DECORATION = re.compile(r"^[\s\u2190-\u21ff\u2500-\u25ff×•]+")
# The folders of a temporary path, which differ from run to run: /tmp/tmpk2j3/x.py, /var/folders/…/T/…/x.py,
# C:\Users\me\AppData\Local\Temp\tmp1\x.py. What a note says of them is the file's name.
_TEMPORARY = re.compile(
    r"(?<![\w.~/-])(?:/private)?(?:/tmp|/var/tmp|/var/folders/[^\s/'\"]+/[^\s/'\"]+/T)(?:/[^\s/'\"]+)*/"
    r"|(?<![\w.-])[A-Za-z]:\\(?:[^\s\\'\"]+\\)*?Temp\\(?:[^\s\\'\"]+\\)*"
)
TEMPORARY = "<tmp>/"


# Rows and columns are named tuples, not dataclasses: they key every cell, and a tuple hashes in C.
class Row(NamedTuple):
    """A torch release, and the Python the matrix pinned for it (None: the planner chose one per machine)."""

    torch: str
    python_request: str | None

    @property
    def label(self) -> str:
        return self.torch + (f" (py{self.python_request})" if self.python_request else "")

    def sort_key(self) -> tuple[Version, str, Version, str]:
        return (
            results.version_of(self.torch),
            self.torch,
            results.version_of(self.python_request or "0"),
            self.python_request or "",
        )


class Aside(NamedTuple):
    """A stored result that is no cell of the matrix now (:mod:`torchmatrix.views.cells`), and why."""

    result: CellResult
    why: str


class Column(NamedTuple):
    """One device of one machine."""

    machine: str
    device: str

    @property
    def label(self) -> str:
        return f"{self.machine} · {self.device}"

    def sort_key(self) -> tuple[str, str, int, str]:
        rank = DEVICES.index(self.device) if self.device in DEVICES else len(DEVICES)
        return (self.machine.casefold(), self.machine, rank, self.device)


SKIPPED = "skipped"
"""What the legend and a cell's tooltip call a cell unavailable though its torch had the device."""
SKIPPED_MEANING = (
    "the device was there, but pytest skipped the test (or the probe said it does not apply), for the reason "
    "the cell's message gives"
)


@dataclass(frozen=True)
class Entry:
    """One table cell: its mark, the result and record behind it (no record for a cell outcome), its note number."""

    mark: Outcome
    result: CellResult
    record: Record | None
    note: int | None = None
    ratio: float | None = None
    """The record's worst error over tolerance (:func:`error_ratio`); None without checks that have one."""

    @property
    def skipped(self) -> bool:
        """Whether it is unavailable though its torch had the device (the cell's environment names it): pytest
        skipped the test, or the probe said it does not apply, for the reason its message gives."""
        record = self.record
        if self.mark is not Outcome.UNAVAILABLE or record is None:
            return False
        devices = self.result.environment.get("devices")
        return isinstance(devices, dict) and record.device in devices

    @property
    def text(self) -> str:
        """The mark's symbol, with the note number as a superscript: ``✗¹``."""
        return self.mark.symbol + (str(self.note).translate(_SUPERSCRIPT) if self.note else "")


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Table:
    """One probe: its rows (those with any entry) and its entries by (row, column)."""

    probe: str
    rows: tuple[Row, ...]
    entries: Mapping[tuple[Row, Column], Entry]


@dataclass(frozen=True)
class Report:
    """The merged results of every machine, as one table per probe."""

    results: tuple[CellResult, ...]
    """One per machine and cell, the newest."""
    tables: tuple[Table, ...]
    columns: tuple[Column, ...]
    """The columns shown."""
    hidden: tuple[Column, ...]
    """Columns left out of the tables because every cell in them is `unavailable`."""
    notes: tuple[str, ...]
    """Note ``n`` is ``notes[n - 1]``; cells with the same story share a note."""
    pythons: Mapping[Row, tuple[str, ...]]
    """The Pythons each row's cells ran on, over all machines."""
    marks: tuple[Outcome, ...]
    """The marks the shown cells use, in legend order."""
    others: tuple[Aside, ...] = ()
    """Stored results left out, as no cell of the matrix now (``report --all-cells`` shows them)."""
    command: str | None = None
    """The command that renders it when it is not nox (``torchmatrix``), in whose words the report suggests what
    to type."""
    row_notes: Mapping[Row, int] = field(default_factory=dict)
    """The note of each row installed under a constraint a neighbouring row was not (:mod:`.pins`), by number."""
    warnings: tuple[str, ...] = ()
    """What reading the results warned of (:attr:`results.Scan.warnings`): a file that could not be read, whose
    cell the tables then lack, two files of one cell, a machine of mixed hardware. The files the report writes say
    how many, not what: a warning names a file by its path on this machine."""

    @property
    def machines(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(column.machine for column in self.columns))

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return tuple(sorted((*self.columns, *self.hidden), key=Column.sort_key))

    @property
    def updated(self) -> str:
        """When the newest result finished (ISO 8601), or '' with no results."""
        return max(self.results, key=results.finished).finished_at if self.results else ""

    def legend(self) -> tuple[tuple[Outcome, str, str], ...]:
        """(mark, name, meaning) of each kind of cell the tables show, in legend order: ``unavailable`` said by
        its kind, a device the torch lacks or a skip (:attr:`Entry.skipped`), each where a cell is of it."""
        unavailable = {
            entry.skipped
            for table in self.tables
            for (_, column), entry in table.entries.items()
            if entry.mark is Outcome.UNAVAILABLE and column in self.columns
        }
        kinds = []
        for mark in self.marks:
            if mark is not Outcome.UNAVAILABLE or False in unavailable:
                kinds.append((mark, mark.value, mark.meaning))
            if mark is Outcome.UNAVAILABLE and True in unavailable:
                kinds.append((mark, SKIPPED, SKIPPED_MEANING))
        return tuple(kinds)

    def torch_text(self, row: Row) -> str:
        """The row's release, with the number of its note where it has one (:attr:`row_notes`): ``2.2.0³``."""
        number = self.row_notes.get(row)
        return row.torch + (str(number).translate(_SUPERSCRIPT) if number else "")

    def python_text(self, row: Row) -> str:
        """The row's Python, named once: those its cells ran on, or the one pinned where none ran."""
        return ", ".join(self.pythons.get(row, ())) or (row.python_request or "")

    def afterword(self) -> list[str]:
        """What the legend does not say: how notes are marked, which columns and cells are left out (plain text)."""
        lines = ["A superscript number after a symbol is the number of the cell's note."] if self.notes else []
        if self.row_notes:
            lines.append(
                "One after a release is that of what it was installed under besides torch, where a release beside it "
                "was not."
            )
        if self.hidden:
            hidden = ", ".join(column.label for column in self.hidden)
            lines.append(f"Not shown, as every cell in them is unavailable: {hidden}.")
        if self.others:
            count = f"{len(self.others)} stored cell" + ("s" if len(self.others) != 1 else "")
            named = "; ".join(
                f"{aside.result.cell_id} of {aside.result.machine} ({aside.why})" for aside in self.others
            )
            lines.append(
                f"Not shown, as no cell of the matrix now: {count}: {named}. "
                f"{typed(self.command, 'report', '--all-cells')} shows every stored cell."
            )
        if self.warnings:
            count = f"{len(self.warnings)} time" + ("s" if len(self.warnings) != 1 else "")
            lines.append(
                f"Reading the results warned {count} (a file that could not be read, whose cell the tables lack; "
                f"two files of one cell; a machine of mixed hardware): {typed(self.command, 'report')} names each."
            )
        return lines

    def describe(self) -> str:
        """One sentence on what the tables hold (plain text: machine names in it still need escaping)."""
        if not self.results:
            which = " of the matrix's cells" if self.others else ""  # those left out are named after the tables
            return f"No results{which} yet: run {typed(self.command, 'probe')}."
        machines = self.machines
        count = f"{len(machines)} machine" + ("s" if len(machines) != 1 else "")
        tests = sum(is_test(table.probe) for table in self.tables)
        if tests == len(self.tables):
            layout = (
                f"One table of the {tests} tests: a row per torch release, a column per machine and device; "
                "then a row per test that did not pass everywhere."
            )
        else:
            layout = "One table per probe: a row per torch release, a column per machine and device."
        return f"Results from {count} ({', '.join(machines)}), the newest finished {self.updated}. {layout}"


def is_test(probe: str) -> bool:
    """Whether ``probe`` names a pytest test (a node id), not a module or a script."""
    return "::" in probe


def collectors(names: Iterable[str]) -> set[str]:
    """Of the record names ``names``, those of a file (or folder) that did not collect: pytest's record of it holds
    tests another release collected, which the file's error kept from running there; it is no test itself."""
    every = set(names)
    tests = [name for name in every if is_test(name)]
    return {name for name in every if not is_test(name) and any(core.holds(name, test) for test in tests)}


def build(
    found: Iterable[CellResult],
    others: Iterable[Aside] = (),
    command: str | None = None,
    known_pins: Sequence[PinRule] = (),
    matrix_pins: Sequence[PinRule] = (),
) -> Report:
    """Merge ``found`` (any number of machines, any number of files per cell) into one report.

    ``others``: stored results left out as no cell of the matrix now, which the report names; ``command``: the
    command that renders it when it is not nox, whose words the report suggests; ``known_pins`` and
    ``matrix_pins``: the rules that say why of a constraint a result recorded no rule of, an older torchmatrix's
    (:mod:`.pins`).
    """
    merged = tuple(results.latest(found))
    devices = _devices_by_machine(merged)
    probes = sorted({record.probe for result in merged for record in result.records} | _planned_probes(merged))
    entries: dict[str, dict[tuple[Row, Column], Entry]] = {probe: {} for probe in probes}
    pythons: dict[Row, set[str]] = {}
    for result in merged:
        row = Row(result.torch, result.python_request)
        pythons.setdefault(row, set()).update([result.python] if result.python else [])
        if result.outcome:
            mark = result.outcome
            for probe in _planned_probes([result]) or probes:
                for device in devices[result.machine]:
                    entries[probe][row, Column(result.machine, device)] = Entry(mark, result, None)
            continue
        for record in result.records:
            column = Column(result.machine, record.device)
            entries[record.probe][row, column] = Entry(record.shown, result, record, None, error_ratio(record))

    every_column = sorted({column for table in entries.values() for _, column in table}, key=Column.sort_key)
    shown = _shown_columns(every_column, entries)
    notes: dict[str, int] = {}
    tables = []
    for probe in probes:
        rows = tuple(sorted({row for row, _ in entries[probe]}, key=Row.sort_key))
        for row in rows:
            for column in shown:
                entry = entries[probe].get((row, column))
                if entry and entry.mark.noted:
                    number = notes.setdefault(note_text(entry), len(notes) + 1)
                    entries[probe][row, column] = Entry(entry.mark, entry.result, entry.record, number, entry.ratio)
        tables.append(Table(probe, rows, entries[probe]))
    row_notes = {
        row: notes.setdefault(safetext.report_line(text), len(notes) + 1)
        for row, text in _constraint_notes(merged, known_pins, matrix_pins).items()
    }
    return Report(
        results=merged,
        tables=tuple(tables),
        columns=tuple(shown),
        hidden=tuple(column for column in every_column if column not in shown),
        notes=tuple(notes),
        pythons={row: tuple(sorted(seen, key=results.version_of)) for row, seen in pythons.items()},
        marks=_marks_used(tables, shown),
        others=tuple(others),
        command=command,
        row_notes=row_notes,
    )


def _constraint_notes(
    merged: Iterable[CellResult], known: Sequence[PinRule], matrix: Sequence[PinRule]
) -> dict[Row, str]:
    """For each row installed under a constraint that a row beside it (the one before, the one after) was not,
    what it was and why, as its results recorded it (:func:`.pins.reasons_of`, :func:`.pins.note`)."""
    constrained: dict[Row, dict[str, str]] = {}
    for result in merged:
        said = pins.reasons_of(result, known, matrix)
        if said is not None:
            reasons = constrained.setdefault(Row(result.torch, result.python_request), {})
            reasons.update({pin: why for pin, why in said.items() if why or pin not in reasons})  # one that says why
    ordered = sorted(constrained, key=Row.sort_key)
    found = {}
    for index, row in enumerate(ordered):
        beside = [*ordered[max(index - 1, 0) : index], *ordered[index + 1 : index + 2]]
        neighbours = [(other.label, frozenset(constrained[other])) for other in beside]
        text = pins.note(row.label, constrained[row], neighbours)
        if text:
            found[row] = text
    return found


def _marks_used(tables: Iterable[Table], shown: Iterable[Column]) -> tuple[Outcome, ...]:
    visible = set(shown)
    used = {entry.mark for table in tables for (_, column), entry in table.entries.items() if column in visible}
    return tuple(outcome for outcome in Outcome if outcome in used)


def _devices_by_machine(merged: Iterable[CellResult]) -> dict[str, list[str]]:
    """The devices each machine's cells ran on, or were planned to run on."""
    found: dict[str, set[str]] = {}
    for result in merged:
        devices = found.setdefault(result.machine, set())
        devices.update(record.device for record in result.records)
        planned = result.inputs.get("devices")
        if isinstance(planned, list):
            devices.update(str(device) for device in planned)
    return {
        machine: sorted(devices or {DEVICES[0]}, key=lambda device: Column(machine, device).sort_key())
        for machine, devices in found.items()
    }


def _planned_probes(merged: Iterable[CellResult]) -> set[str]:
    """The probes a cell was to run, for cells that ran none (their inputs name them)."""
    return {
        str(name)
        for result in merged
        if result.outcome and isinstance(result.inputs.get("probes"), dict)
        for name in result.inputs["probes"]
    }


def _shown_columns(every: list[Column], entries: Mapping[str, Mapping[tuple[Row, Column], Entry]]) -> list[Column]:
    """Every column that holds something besides `unavailable`; all of a machine's if none of its columns does."""
    informative = {
        column
        for table in entries.values()
        for (_, column), entry in table.items()
        if entry.record is not None and not _unavailable(entry.record)
    }
    machines_shown = {column.machine for column in informative}
    return [column for column in every if column in informative or column.machine not in machines_shown]


def _unavailable(record: Record) -> bool:
    """Whether ``record`` says its device is not there: unavailable, or stale and unavailable when it was made."""
    return record.outcome is Outcome.UNAVAILABLE or (
        record.outcome is Outcome.STALE and record.metrics.get(WAS) == Outcome.UNAVAILABLE.value
    )


def note_text(entry: Entry) -> str:
    """What a note says about a cell that did not pass: observed vs expected of its failing checks, or why."""
    record, result = entry.record, entry.result
    if record is None:
        lines = [line for line in result.message.splitlines() if line.strip()]
        # An installer's last line says why it failed; a planner's hint is one line anyway.
        story = _DECORATION.sub("", lines[-1]) if lines else ""
    else:
        failing = [
            f"{check.get('name', '?')}: observed {format_value(check.get('observed'))}, "
            f"expected {format_value(check.get('expected'))}"
            for check in failing_checks(record.metrics)
        ]
        shown = "; ".join(failing[:FAILING_CHECKS_SHOWN])
        more = len(failing) - FAILING_CHECKS_SHOWN
        and_more = f"; and {more} more failing check" + ("s" if more > 1 else "") if more > 0 else ""
        story = shown + and_more if failing else record.message
        # The first line; a colon that introduced the lines left out (a crash's log) goes with them.
        story = story.splitlines()[0].rstrip(" :") if story.strip() else ""
    if record is None or record.outcome is not Outcome.STALE:  # a stale record's words name what changed, as it is
        story = per_run(story)
    return safetext.report_line(f"{entry.mark.value}: {story}" if story.strip() else entry.mark.value, NOTE_LIMIT)


def per_run(text: str) -> str:
    """``text`` less what differs from one run to the next: temporary folders, addresses in default reprs.

    Cells whose stories differ only there share a note (five tests failing in five temporary folders: one note).
    """
    return printed.normalised(_TEMPORARY.sub(TEMPORARY, text))


def failing_checks(metrics: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The checks of ``metrics.checks`` that are not ok."""
    checks = metrics.get("checks")
    if not isinstance(checks, list):
        return []
    return [check for check in checks if isinstance(check, dict) and check.get("ok") is False]


def format_value(value: Any) -> str:
    """A metric value, short: floats to 6 significant digits, long lists cut."""
    if isinstance(value, float):
        return f"{value:.1f}" if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"
    if isinstance(value, list):
        shown = ", ".join(format_value(item) for item in value[:6])
        return safetext.report_line("[" + shown + (", …]" if len(value) > 6 else "]"), VALUE_LIMIT)
    if isinstance(value, str):
        return safetext.report_line(value, VALUE_LIMIT)
    return safetext.report_line(json.dumps(value, sort_keys=True, default=str), VALUE_LIMIT)


def error_ratio(record: Record) -> float | None:
    """The largest error/tolerance over the record's checks: at most 1 when every check is within tolerance.

    An exact check (tolerance 0) counts 0 when it holds and infinity when it
    does not; a check without a numeric error and tolerance is not counted.
    None when no check counts.
    """
    checks = record.metrics.get("checks")
    if not isinstance(checks, list):
        return None
    worst: float | None = None
    for check in checks:
        if type(check) is not dict:
            continue
        error: Any = check.get("error")
        tolerance: Any = check.get("tolerance")
        # type() rather than isinstance(): a bool is no number here, and this runs for every check of a report.
        # A NaN fails `error == error` and `tolerance >= 0`.
        if type(error) not in _NUMBERS or type(tolerance) not in _NUMBERS or error != error or not tolerance >= 0:
            continue
        error = abs(error)
        if tolerance > 0 and error != math.inf:
            ratio = error / tolerance
        else:
            ratio = 0.0 if check.get("ok") is True else math.inf
        if worst is None or ratio > worst:
            worst = ratio
    return worst


_NUMBERS = (int, float)
