"""What the sessions that run probes share: the queued report, the runs, the progress lines, the tally, a result
and its writing."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import core, identity, repeats, results, runner, safetext
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


def run_pairs(
    python: str,
    pairs: Sequence[core.Pair],
    timeout: float,
    repeat: int,
    listener: runner.Listener,
    pycache_prefix: Path | None = None,
    variables_seen: dict[str, str] | None = None,
    *,
    workdir: Path,
) -> runner.CellRun:
    """Run each pair ``repeat`` times (listed that often to the runner) in the environment ``variables_seen``, from
    the folder ``workdir``; one record per pair (:mod:`.repeats`).

    The listener hears ("done", last pair, None) at the end, besides the runner's events.
    """
    listed = repeats.listed(pairs, repeat)
    cell_run = runner.run_cell(python, listed, timeout, listener, pycache_prefix, variables_seen, workdir=workdir)
    if pairs:
        listener("done", pairs[-1], None)
    return dataclasses.replace(cell_run, records=tuple(repeats.merged(cell_run.records, repeat)))


def progress_log(session: nox.Session, total: int, repeat: int = 1) -> runner.Listener:
    """Log each pair as it starts and its outcome as it ends: for tests, each test's; with repeats, each run,
    then what they add up to.

    Tests unavailable for the reason the one before gave (a device this machine lacks) are
    not listed one by one: how many there were is said before the next pair starts, or at the end.
    Every line goes through :func:`safetext.for_terminal`: a probe's name, a test's id and a message are the
    probe's text.
    """
    started = 0
    unlisted = 0
    reason: str | None = None
    runs: list[core.Record] = []

    def say(line: str) -> None:
        session.log(safetext.for_terminal(line, keep_newlines=False))

    def listen(event: str, pair: core.Pair, record: core.Record | None) -> None:
        nonlocal started, unlisted, reason
        if event in ("start", "done") and unlisted:
            say(f"    … and {unlisted} more unavailable for the same reason")
            unlisted = 0
        if event == "done":
            return
        if event == "start":
            started, reason = started + 1, None
            which = f" (run {(started - 1) % repeat + 1} of {repeat})" if repeat > 1 else ""
            say(f"[{(started - 1) // repeat + 1}/{total}] {pair.probe.name} on {pair.device}{which} ...")
            return
        if record is None:
            return
        if record.probe != pair.probe.name:  # one of the pair's tests
            message = safetext.terminal_line(record.message)
            if record.outcome is core.Outcome.UNAVAILABLE and message == reason:
                unlisted += 1
                return
            reason = message if record.outcome is core.Outcome.UNAVAILABLE else None
            shown = f"{record.probe}: {message}" if message else record.probe
            say(f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {shown}")
            for line in _rest_of_message(record):
                say(line)
            return
        say(_outcome_line(record))
        for line in _rest_of_message(record):
            say(line)
        runs.append(record)
        if repeat > 1 and len(runs) == repeat:
            merged = repeats.merge(runs).outcome
            counted = repeats.counts(Counter(run.outcome for run in runs))
            say(f"    {merged.symbol} {merged.value} over {repeat} runs ({counted})")
            runs.clear()

    return listen


MESSAGE_LINES = 12
"""How many lines of what a failed pair raised the console shows below its line; the result file has all."""
WHOLE_MESSAGE = (core.Outcome.FAIL, core.Outcome.ERROR)
"""The outcomes whose message is an exception, all of which explains it (``assert x == y`` and its values)."""


def _rest_of_message(record: core.Record) -> list[str]:
    """The lines after the first of a failed record's message, indented under its line, at most MESSAGE_LINES."""
    if record.outcome not in WHOLE_MESSAGE:
        return []
    rest = record.message.rstrip().splitlines()[1:]
    shown = [f"        {line.rstrip()}" for line in rest[:MESSAGE_LINES]]
    if len(rest) > MESSAGE_LINES:
        shown.append(f"        … {len(rest) - MESSAGE_LINES} more lines in the result file")
    return shown


def _outcome_line(record: core.Record) -> str:
    message = safetext.terminal_line(record.message)
    return f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {message}".rstrip()


def tally(records: Sequence[core.Record]) -> str:
    """``2 pass, 4 unavailable``."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record.outcome.value] = counts.get(record.outcome.value, 0) + 1
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))


def cell_result(project: Project, started: str, **fields: Any) -> CellResult:
    """A result of this machine, started at ``started`` and finished now; ``fields`` are the rest of it.

    Its environment holds how this machine computes (:data:`identity.HARDWARE`), whatever else it holds.
    """
    defaults: dict[str, Any] = {"outcome": None, "message": "", "records": (), "inputs": {}}
    environment = {**fields.pop("environment", {}), identity.HARDWARE: project.hardware.to_json()}
    return CellResult(
        machine=project.machine, **{**defaults, **fields}, environment=environment, started_at=started,
        finished_at=results.now_iso(),
    )  # fmt: skip


def write_result(project: Project, session: nox.Session, result: CellResult) -> Path:
    """Store ``result``; where that fails, one message, and the result printed to the log so it is not lost."""
    try:
        return results.write(project.results_dir, result)
    except OSError as exc:
        path = results.result_path(project.results_dir, result.machine, result.cell_id)
        print(json.dumps(result.to_json(), indent=2, sort_keys=True), flush=True)
        session.error(safetext.for_terminal(
            f"{result.cell_id}: cannot write {path}: {exc.strerror or exc}; the result is printed above as JSON"
        ))  # fmt: skip
