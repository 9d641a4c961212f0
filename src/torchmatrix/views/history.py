"""A probe's checks across releases: a row per check, a column per release on each machine and device.

For probes whose records hold ``metrics.checks`` (the operator sweep's are
operators). Each step (a check in one release) has the check's outcome and
how it compares with the same check in the previous release of its machine
and device that has it, by the rule of :mod:`~torchmatrix.views.sameinputs`:
changed, the same, or not comparable (no input in common). Checks that
changed somewhere come first. A pure function of the report's model, so
every renderer shows the same steps.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..checks import check_outcome, checks_of
from ..core import Outcome, Record
from . import machine_side, sameinputs, stores
from .model import Column, Entry, Report, Row, Table
from .sameinputs import NOT_COMPARABLE, Comparison


class SincePrevious(str, Enum):
    """How a step compares with the same check in the previous release that has it."""

    FIRST = "first"
    """In the first release of its machine and device: nothing before it."""
    NEW = "new"
    """No earlier release of its machine and device has this check."""
    SAME = "same"
    CHANGED = "changed"
    NOT_COMPARED = "not-compared"
    """An earlier release has the check, but no input of it is the same (or the probe file changed)."""
    UNSTABLE = "unstable"
    """Nothing compared, as its output differs from one call to the next within one release: not a change."""

    @property
    def symbol(self) -> str:
        return _SYMBOLS[self]

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_SYMBOLS = {
    SincePrevious.FIRST: "",
    SincePrevious.NEW: "+",
    SincePrevious.SAME: "",
    SincePrevious.CHANGED: "●",
    SincePrevious.NOT_COMPARED: "◌",
    SincePrevious.UNSTABLE: "≈",
}
_MEANINGS = {
    SincePrevious.FIRST: "",
    SincePrevious.NEW: "new: no earlier release has this check",
    SincePrevious.SAME: "",
    SincePrevious.CHANGED: "changed: with the same inputs as the previous release, another value or output",
    SincePrevious.NOT_COMPARED: "not compared: none of its inputs is the same as in the previous release",
    SincePrevious.UNSTABLE: "unstable: its output differs between two runs of one release, so no change can be told",
}
SHOWN_CHANGES = (SincePrevious.CHANGED, SincePrevious.UNSTABLE, SincePrevious.NOT_COMPARED, SincePrevious.NEW)
"""The changes a renderer marks, in legend order."""


@dataclass(frozen=True)
class CheckInRelease:
    """One check in one release of one machine and device."""

    check: Mapping[str, Any]
    mark: Outcome
    change: SincePrevious
    comparison: Comparison
    against: Row | None
    """The release it was compared with (None: none has the check)."""
    outcome_changed: bool
    """Its outcome differs from that of the release it was compared with."""
    value: str
    """The check's error, short (``0.02``, ``3.4e+05``); '' without one."""
    samples: int | None
    """How many samples the check ran; None for a check that records none (it is compared as one)."""

    @property
    def weight(self) -> int:
        """How many samples it counts for where samples are counted."""
        return 1 if self.samples is None else self.samples


@dataclass(frozen=True)
class Transition:
    """From one release to the next of one machine and device: what could be compared, and what changed."""

    column: Column
    before: Row
    after: Row
    in_both: int
    """Checks both releases hold."""
    compared: int
    """Of those, checks with at least one sample of the same inputs."""
    samples: int
    """The samples of the later release's checks that both hold."""
    samples_compared: int
    changed: tuple[str, ...]
    """The checks whose value or output changed."""
    refused: int = 0
    """Samples of the same inputs that one release raised on and the other took (:mod:`.sameinputs`)."""
    differs: tuple[str, ...] = ()
    """What differs between the two records' machines as torch saw them: ``CPU capability AVX2 → AVX512``
    (:mod:`.fingerprint`)."""
    samples_from: str = ""
    """Where the samples of the two records came from (:mod:`.stores`): ``1.13.1's capture``, ``each release's
    own``; '' where their checks hold no samples."""


@dataclass(frozen=True)
class History:
    """One probe's checks across releases."""

    probe: str
    columns: tuple[Column, ...]
    """The machines and devices whose records hold checks."""
    releases: Mapping[Column, tuple[Row, ...]]
    """The releases of each column with a record (not unavailable), in release order."""
    entries: Mapping[tuple[Row, Column], Entry]
    """The record behind each release: its outcome, when it holds no checks (it raised)."""
    checks: tuple[str, ...]
    """Every check's name: those that changed somewhere first (most changes first), then by name."""
    steps: Mapping[tuple[str, Row, Column], CheckInRelease]
    transitions: tuple[Transition, ...]

    def changed_checks(self, column: Column | None = None) -> tuple[str, ...]:
        """The checks with a step that changed (in ``column``, if given), in :attr:`checks` order."""
        changed = {
            name
            for (name, _, where), step in self.steps.items()
            if step.change is SincePrevious.CHANGED and column in (None, where)
        }
        return tuple(name for name in self.checks if name in changed)


def histories(report: Report) -> tuple[History, ...]:
    """A history per probe of ``report`` whose records hold checks, over the columns the report shows."""
    found = (history(table, report.columns) for table in report.tables)
    return tuple(item for item in found if item is not None)


def stale_left_out(report: Report) -> str:
    """What the views of checks across releases say of the stale records they leave out ('' when there are none):
    a stale record's checks are of what has changed since, so none is compared."""
    shown = set(report.columns)
    stale = sum(
        entry.mark is Outcome.STALE
        for table in report.tables
        for (_, column), entry in table.entries.items()
        if column in shown
    )
    if not stale:
        return ""
    return (
        f"{stale} stored record{'s are' if stale != 1 else ' is'} ↻ stale (made from what has changed since), "
        "left out here: `nox -s probe` measures them again."
    )


def history(table: Table, columns: Iterable[Column]) -> History | None:
    """``table``'s probe across releases; None when none of its records holds checks."""
    releases: dict[Column, tuple[Row, ...]] = {}
    steps: dict[tuple[str, Row, Column], CheckInRelease] = {}
    transitions: list[Transition] = []
    for column in columns:
        rows = tuple(row for row in table.rows if _measured(table.entries.get((row, column))))
        records = [_record(table, row, column) for row in rows]
        checks = [checks_of(record) for record in records]
        if not any(checks):
            continue
        releases[column] = rows
        environments = [table.entries[row, column].result.environment for row in rows]
        transitions += _walk(column, rows, records, checks, steps, environments)
    if not releases:
        return None
    return History(
        probe=table.probe,
        columns=tuple(releases),
        releases=releases,
        entries={key: entry for key, entry in table.entries.items() if key[1] in releases},
        checks=_ordered(steps),
        steps=steps,
        transitions=tuple(transitions),
    )


def check_mark(check: Mapping[str, Any]) -> Outcome:
    """A check's outcome (:func:`torchmatrix.checks.check_outcome`), within tolerance where it passed but was
    not bit-identical."""
    outcome = check_outcome(check)
    if outcome is Outcome.PASS and check.get("bit_identical") is False:
        return Outcome.WITHIN_TOLERANCE
    return outcome


def short_number(value: Any) -> str:
    """A number to two significant digits; the worker stores infinities and NaN as text."""
    if type(value) is float or type(value) is int:  # not a bool; checked first, as it is for thousands of cells
        return f"{value:.2g}" if math.isfinite(value) else str(value)
    return value if value in ("inf", "-inf", "nan") else ""


def _measured(entry: Entry | None) -> bool:
    return entry is not None and entry.record is not None and entry.mark is not Outcome.UNAVAILABLE


def _record(table: Table, row: Row, column: Column) -> Record:
    record = table.entries[row, column].record
    assert record is not None  # _measured() chose only entries with a record
    return record


def _walk(
    column: Column,
    rows: tuple[Row, ...],
    records: list[Record],
    checks: list[dict[str, Mapping[str, Any]]],
    steps: dict[tuple[str, Row, Column], CheckInRelease],
    environments: Sequence[Mapping[str, Any]],
) -> list[Transition]:
    """Fill ``steps`` for one column, release after release (``checks``: each record's; ``environments``: each
    result's fingerprint); the transitions between consecutive releases."""
    latest: dict[str, tuple[Row, Record, CheckInRelease]] = {}
    transitions = []
    for index, (row, record, held) in enumerate(zip(rows, records, checks, strict=True)):
        for name, check in held.items():
            step = _step(check, latest.get(name), record, first=index == 0)
            steps[name, row, column] = step
            latest[name] = (row, record, step)
        if index:
            transition = _transition(column, rows[index - 1], row, checks[index - 1], held, steps)
            differs = machine_side.differences(environments[index - 1], environments[index], column.device)
            sampled = any(sameinputs.samples_of(check) is not None for check in held.values())
            source = stores.samples_from(records[index - 1], record) if sampled else ""
            transitions.append(dataclasses.replace(transition, differs=differs, samples_from=source))
    return transitions


def _step(
    check: Mapping[str, Any], earlier: tuple[Row, Record, CheckInRelease] | None, record: Record, first: bool
) -> CheckInRelease:
    mark = check_mark(check)
    listed = sameinputs.samples_of(check)
    value, samples = short_number(check.get("error")), None if listed is None else len(listed)
    if earlier is None:
        return CheckInRelease(
            check,
            mark,
            SincePrevious.FIRST if first else SincePrevious.NEW,
            NOT_COMPARABLE,
            None,
            False,
            value,
            samples,
        )
    row, earlier_record, earlier_step = earlier
    probe_file = record.inputs.get("probe")
    same_probe = probe_file is not None and earlier_record.inputs.get("probe") == probe_file
    comparison = sameinputs.compare(earlier_step.check, check, same_probe)
    change = SincePrevious.UNSTABLE if check.get("nondeterministic") else SincePrevious.NOT_COMPARED
    if comparison.comparable:
        change = SincePrevious.CHANGED if comparison.changed else SincePrevious.SAME
    return CheckInRelease(check, mark, change, comparison, row, mark is not earlier_step.mark, value, samples)


def _transition(
    column: Column,
    before: Row,
    after: Row,
    earlier: Mapping[str, Mapping[str, Any]],
    later: Mapping[str, Mapping[str, Any]],
    steps: Mapping[tuple[str, Row, Column], CheckInRelease],
) -> Transition:
    both = [name for name in later if name in earlier]
    compared = [steps[name, after, column] for name in both]
    return Transition(
        column=column,
        before=before,
        after=after,
        in_both=len(both),
        compared=sum(step.comparison.comparable for step in compared),
        samples=sum(step.weight for step in compared),
        samples_compared=sum(step.comparison.compared for step in compared),
        refused=sum(step.comparison.refused for step in compared),
        changed=tuple(name for name, step in zip(both, compared, strict=True) if step.change is SincePrevious.CHANGED),
    )


def _ordered(steps: Mapping[tuple[str, Row, Column], CheckInRelease]) -> tuple[str, ...]:
    """Every check's name: most changes of value first, then most changes of outcome, then by name."""
    changes: dict[str, int] = {}
    outcome_changes: dict[str, int] = {}
    for (name, _, _), step in steps.items():
        changes[name] = changes.get(name, 0) + (step.change is SincePrevious.CHANGED)
        outcome_changes[name] = outcome_changes.get(name, 0) + step.outcome_changed
    return tuple(sorted(changes, key=lambda name: (-changes[name], -outcome_changes[name], name.casefold(), name)))
