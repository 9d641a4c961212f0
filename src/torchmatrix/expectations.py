"""Check stored results against the expectations of a matrix (its ``expect:`` key).

Pure: expectations and results in, one :class:`Check` per expectation out.
A result speaks to an expectation when its torch release is in the
expectation's range, its Python and machine are the ones named (if any), and
it holds a record of the probe on the device. A result that could not test it (the
device unavailable there, the cell not run: no-wheel, no-interpreter,
install-error) is not counted either way, unless that outcome is what was
expected; nor is a stale record (:data:`Outcome.STALE`: made from what has changed
since), which is counted as skipped. An expectation no result tested is reported, never passed; but one
that names a machine no result here comes from is out of reach, not failed: no
run here could test it (an Apple Silicon bug, verified on Linux), and it is
named as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from .bisection.criteria import record_of, records_under
from .core import CELL_OUTCOMES, Outcome, Record
from .matrix import Expectation
from .results import CellResult, safe_name

NOT_A_TEST = CELL_OUTCOMES | {Outcome.UNAVAILABLE, Outcome.STALE}
"""Outcomes that say nothing about a probe's numbers now: the cell or the device did not run it, or what ran
has changed since."""


@dataclass(frozen=True)
class Finding:
    """One stored result's outcome for one expectation."""

    result: CellResult
    got: Outcome
    record: str = ""
    """The record it comes from where that is not the expectation's own: one of the tests it names (a file's,
    a parametrized test's cases), or the module that holds its test and did not import."""


@dataclass(frozen=True)
class Check:
    expectation: Expectation
    tested: tuple[Finding, ...]
    """Results that tested the expectation: each holds or violates it."""
    untested: tuple[Finding, ...]
    """Results in its range that could not test it (device unavailable, cell not run)."""
    out_of_reach: str = ""
    """Why no result here can test it, where that is so (it names a machine none of them comes from); ''."""

    @property
    def violations(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.tested if finding.got != self.expectation.outcome)

    @property
    def holds(self) -> bool:
        """True when at least one result tested it and none violates it."""
        return bool(self.tested) and not self.violations


def check(expectations: Sequence[Expectation], found: Iterable[CellResult]) -> list[Check]:
    """One :class:`Check` per expectation, against ``found`` (one result per cell and machine)."""
    found = list(found)
    machines = {result.machine for result in found}
    checks = []
    for expectation in expectations:
        tested: list[Finding] = []
        untested: list[Finding] = []
        for result in found:
            seen = _outcome_of(result, expectation)
            if seen is None:
                continue
            got, record = seen
            if got in NOT_A_TEST and got != expectation.outcome:
                untested.append(Finding(result, got, record))
            else:
                tested.append(Finding(result, got, record))
        elsewhere = expectation.machine is not None and safe_name(expectation.machine) not in machines
        reach = f"no result of machine {expectation.machine} here" if elsewhere and not tested else ""
        checks.append(Check(expectation, tuple(tested), tuple(untested), reach))
    return checks


GATED = frozenset({
    Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.UNSTABLE, Outcome.INSTALL_ERROR,
    Outcome.NO_INTERPRETER,
})  # fmt: skip
"""What ``--strict`` (``strict: true``) fails a probe session for, unless an expectation allows it: every outcome
that is not what the build should give, a pair that passed in only some of its runs and a cell this machine has no
Python for among them. A release with no wheel for this platform is the release's fact, and passes."""


def not_allowed(result: CellResult, expectations: Sequence[Expectation]) -> list[str]:
    """What of ``result`` fails a strict run: each record (or the cell) whose outcome is in :data:`GATED` that no
    expectation of its cell says it must have. One line each: ``✗ test_x.py::test_y on cpu: fail (why)``."""
    try:
        torch = Version(result.torch)
    except InvalidVersion:
        return []
    covering = [item for item in expectations if applies(item, torch, result.python, result.machine)]
    if result.outcome is not None:
        allowed = any(item.outcome is result.outcome for item in covering)
        wrong = result.outcome in GATED and not allowed
        return [f"✗ {result.cell_id}: {result.outcome.value} ({_first_line(result.message)})"] if wrong else []
    return [
        f"✗ {record.probe} on {record.device}: {record.outcome.value} ({_first_line(record.message)})"
        for record in result.records
        if record.outcome in GATED and not any(_allows(item, result, record) for item in covering)
    ]


def _allows(expectation: Expectation, result: CellResult, record: Record) -> bool:
    """Whether ``expectation`` says ``record`` (its own, or one of the tests it names) has its outcome."""
    if expectation.outcome is not record.outcome or expectation.device != record.device:
        return False
    own = record_of(result, expectation.probe, record.device)
    return own is record or record in records_under(result, expectation.probe, record.device)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no message")


def applies(expectation: Expectation, torch: Version, python: str | None, machine: str) -> bool:
    """Whether the cell of ``torch`` on ``python``, on ``machine``, is one ``expectation`` speaks of."""
    named = expectation.machine is None or safe_name(expectation.machine) == machine
    return named and expectation.covers(torch, python)


def _outcome_of(result: CellResult, expectation: Expectation) -> tuple[Outcome, str] | None:
    """The outcome ``result`` shows for the expectation, and the record it comes from where that is another's;
    None if it is outside its range or holds nothing of it."""
    try:
        torch = Version(result.torch)
    except InvalidVersion:
        return None
    if not applies(expectation, torch, result.python, result.machine):
        return None
    if result.outcome is not None:
        return result.outcome, ""
    name, device = expectation.probe, expectation.device
    own = record_of(result, name, device)  # its own record, or the error of the module that holds its test
    if own is not None:
        return own.outcome, "" if own.probe == name else own.probe
    return _outcome_of_tests(records_under(result, name, device), expectation.outcome)


def _outcome_of_tests(tests: Sequence[Record], expected: Outcome) -> tuple[Outcome, str] | None:
    """What the tests an expectation names show together: the first that does not show what it expects, or
    what it expects where every test that ran shows it."""
    ran = [test for test in tests if test.outcome not in NOT_A_TEST or test.outcome == expected]
    wrong = next((test for test in ran if test.outcome != expected), None)
    if wrong is not None:
        return wrong.outcome, wrong.probe
    if ran:
        return expected, ""
    return (tests[0].outcome, tests[0].probe) if tests else None


def report(checks: Sequence[Check]) -> list[str]:
    """One line per violation (probe, cell, device, expected, got), per untested expectation, per one that holds."""
    lines = []
    for item in checks:
        expectation = item.expectation
        why = f"{expectation.where}" + (f": {expectation.reason}" if expectation.reason else "")
        for finding in item.violations:
            result = finding.result
            which = f" ({finding.record})" if finding.record else ""
            lines.append(
                f"✗ {expectation.probe} {result.cell_id} {expectation.device}: expected {expectation.outcome.value}, "
                f"got {finding.got.value}{which} [{result.machine}] ({why})"
            )
        if item.out_of_reach:
            lines.append(
                f"– {expectation.describe()}: no result here can test it: {item.out_of_reach}; run verify there, "
                f"or copy its results folder in ({expectation.where})"
            )
        elif not item.tested:
            could_not = "; ".join(f"{f.result.cell_id} [{f.result.machine}]: {f.got.value}" for f in item.untested)
            lines.append(
                f"? {expectation.describe()}: no stored result tested it"
                + (f" ({could_not})" if could_not else "")
                + f" ({expectation.where})"
            )
        elif item.holds:
            cells = ", ".join(f"{f.result.cell_id} [{f.result.machine}]" for f in item.tested)
            lines.append(f"✓ {expectation.describe()}: holds for {cells}")
    return lines


def tally(checks: Sequence[Check]) -> str:
    held = sum(item.holds for item in checks)
    violated = sum(bool(item.violations) for item in checks)
    elsewhere = sum(bool(item.out_of_reach) for item in checks)
    untested = sum(not item.tested for item in checks) - elsewhere
    reach = f", {elsewhere} out of reach here (no result of their machine)" if elsewhere else ""
    stale = sum(finding.got is Outcome.STALE for item in checks for finding in item.untested)
    skipped = f"; {stale} stale record{'s' if stale != 1 else ''} skipped (re-run them: --run)" if stale else ""
    return (
        f"{held} of {len(checks)} expectations hold; {violated} violated, {untested} not tested by any result"
        f"{reach}{skipped}"
    )


def all_hold(checks: Sequence[Check]) -> bool:
    """Every expectation holds, or is out of reach here; and one at least holds (verifying nothing is no pass)."""
    return all(item.holds or item.out_of_reach for item in checks) and any(item.holds for item in checks)
