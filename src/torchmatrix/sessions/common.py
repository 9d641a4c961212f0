"""What the sessions that run probes share: the queued report, the progress lines, the tally, a result."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import core, results, runner, terminal
from ..results import CellResult

if TYPE_CHECKING:
    import nox

    from ..project import Project


def notify_report(session: nox.Session) -> None:
    """Queue the table after the cells; nox runs it once, however many cells ask."""
    # Under `nox -j N` each session runs in its own nox process, which cannot
    # queue another (ValueError): `nox -j N -s probe report` prints the table once, last.
    with contextlib.suppress(ValueError):
        session.notify("report", posargs=[])  # the table takes none of the cells' arguments (--force)


def progress_log(session: nox.Session, total: int) -> runner.Listener:
    """Log each pair as it starts and its outcome as it ends; for tests, each test's.

    Tests unavailable for the reason the one before gave (a device this machine lacks) are
    not listed one by one: how many there were is said before the next pair starts.
    """
    count = 0
    unlisted = 0
    reason: str | None = None

    def listen(event: str, pair: core.Pair, record: core.Record | None) -> None:
        nonlocal count, unlisted, reason
        if event == "start":
            if unlisted:
                session.log(f"    … and {unlisted} more unavailable for the same reason")
            count, unlisted, reason = count + 1, 0, None
            session.log(f"[{count}/{total}] {pair.probe.name} on {pair.device} ...")
            return
        if record is None:
            return
        message = terminal.first_line(record.message)
        if record.probe != pair.probe.name:  # one of the pair's tests
            if record.outcome is core.Outcome.UNAVAILABLE and message == reason:
                unlisted += 1
                return
            reason = message if record.outcome is core.Outcome.UNAVAILABLE else None
            message = f"{record.probe}: {message}" if message else record.probe
        session.log(f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {message}")

    return listen


def tally(records: Sequence[core.Record]) -> str:
    """``2 pass, 4 unavailable``."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record.outcome.value] = counts.get(record.outcome.value, 0) + 1
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))


def cell_result(project: Project, started: str, **fields: Any) -> CellResult:
    """A result of this machine, started at ``started`` and finished now; ``fields`` are the rest of it."""
    defaults: dict[str, Any] = {"outcome": None, "message": "", "records": (), "environment": {}, "inputs": {}}
    return CellResult(
        machine=project.machine, **{**defaults, **fields}, started_at=started, finished_at=results.now_iso()
    )
