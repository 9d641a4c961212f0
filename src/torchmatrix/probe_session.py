"""`nox -s "probe(<release>)"`: install one torch release, run every (probe, device) pair, store the result.

A cell whose stored result was made from the same inputs and torch build is
skipped (see :mod:`torchmatrix.freshness`) unless the arguments say ``--force``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nox.command import CommandFailed

from . import core, freshness, releases, results, runner, terminal
from .core import Outcome
from .plan import Cell
from .results import CellResult
from .tee import Tee

if TYPE_CHECKING:
    import nox

    from .project import Project

PYCACHE_FOLDER = ".pycache"


def run(project: Project, session: nox.Session, session_id: str) -> None:
    """Install the cell's torch, run every (probe, device) pair, store the result.

    A cell whose stored result was made from the same inputs and torch build
    is skipped, unless the session's arguments say ``--force``.
    """
    force = freshness.wants_force(session.posargs)
    notify_report(session)
    cell = project.cell(session_id)
    started = results.now_iso()
    if cell.outcome:
        _store(project, cell, started, outcome=cell.outcome, message=cell.hint)
        session.skip(terminal.escape(f"{cell.outcome.value}: {cell.hint}"))
    if project.offline:
        for note in project.notes:
            session.log(terminal.escape(note))
    env = Path(session.virtualenv.location)
    inputs = project.inputs(cell)
    _skip_if_up_to_date(project, session, cell, inputs, env, force)
    install_error = _install(project, session, cell)
    if install_error:
        _store(project, cell, started, outcome=Outcome.INSTALL_ERROR, message=install_error, inputs=inputs)
        session.error(terminal.escape(f"install-error: {install_error}"))
    inputs[freshness.TORCH_BUILD] = freshness.torch_build(env)
    pairs = project.pairs()
    progress = progress_log(session, len(pairs))
    cell_run = runner.run_cell(_venv_python(session), pairs, project.matrix.timeout, progress, pycache_prefix(env))
    if cell_run.import_failure:
        _store(project, cell, started, outcome=Outcome.INSTALL_ERROR, message=cell_run.import_failure, inputs=inputs)
        session.error(terminal.escape(f"install-error: torch does not import: {cell_run.import_failure}"))
    path = _store(project, cell, started, records=cell_run.records, environment=cell_run.environment, inputs=inputs)
    session.log(f"{cell.id}: {tally(cell_run.records)}; written to {path}")


def _install(project: Project, session: nox.Session, cell: Cell) -> str:
    """Install the cell's requirements; '' when done, else why not (a summary, then the installer's words).

    When the index cannot be reached, uv installs from its cache alone (``--offline``): at once if the
    listing could not be fetched, else after a failed install, if the index does not answer then.
    """
    uv = session.venv_backend == "uv"
    index = project.matrix.index_url
    offline = uv and (project.offline or index in project.unreachable)
    log = _run_installer(project, session, cell, offline)
    if log is not None and uv and not offline and not releases.reachable(index):
        project.unreachable.add(index)
        session.log(f"cannot reach {index}: installing from uv's cache alone (--offline)")
        offline = True
        log = _run_installer(project, session, cell, offline)
    if log is None:
        return ""
    lines = [f"installing {' '.join(cell.requirements)}{' offline' if offline else ''} failed: {_error_of(log)}"]
    if offline:
        lines.append(
            f"hint: {index} cannot be reached and uv's cache lacks something this cell needs; "
            "run once with a network to fill the cache, or put the wheels in a find_links folder"
        )
    return "\n".join([*lines, _last_lines(log)])


def _run_installer(project: Project, session: nox.Session, cell: Cell, offline: bool) -> str | None:
    """Run the install; None when it worked, else the installer's output."""
    options = project.installer_options()
    if offline:
        options.append("--offline")
    tee = Tee(keep=40)
    try:
        with tee as output:
            session.install(*cell.requirements, *options, silent=False, stdout=output, stderr=subprocess.STDOUT)
    except CommandFailed as exc:  # its message is the exit code only; the installer's output says why
        return tee.tail or str(exc)
    return None


def _skip_if_up_to_date(
    project: Project, session: nox.Session, cell: Cell, inputs: dict[str, object], env: Path, force: bool
) -> None:
    """Skip the session when the stored result stands for a run from ``inputs`` and the torch in ``env``.

    Else log why it runs.
    """
    if force:
        session.log(f"{cell.id}: {freshness.FORCE}: re-measuring")
        return
    installed = {**inputs, freshness.TORCH_BUILD: freshness.torch_build(env)}
    verdict = freshness.verdict(project.result_file(cell), installed)
    if verdict.up_to_date:
        session.skip(f"{cell.id}: {verdict.reason}")
    session.log(f"{cell.id}: running: {verdict.reason}")


def _store(project: Project, cell: Cell, started: str, *, outcome: Outcome | None = None, message: str = "",
           records: Sequence[core.Record] = (), environment: dict | None = None,
           inputs: dict[str, object] | None = None) -> Path:  # fmt: skip
    result = CellResult(
        machine=project.machine,
        cell_id=cell.id,
        torch=str(cell.torch),
        python=cell.python,
        python_request=cell.python_request,
        session=cell.session,
        outcome=outcome,
        message=message,
        records=tuple(records),
        environment=environment or {},
        inputs=inputs if inputs is not None else project.inputs(cell),
        started_at=started,
        finished_at=results.now_iso(),
    )
    return results.write(project.results_dir, result)


def pycache_prefix(env: Path) -> Path:
    """Where the cells' Pythons keep compiled bytecode: beside the environments, so a rebuilt one finds it."""
    return env.parent / PYCACHE_FOLDER


def notify_report(session: nox.Session) -> None:
    """Queue the table after the cells; nox runs it once, however many cells ask."""
    # Under `nox -j N` each session runs in its own nox process, which cannot
    # queue another (ValueError): `nox -j N -s probe report` prints the table once, last.
    with contextlib.suppress(ValueError):
        session.notify("report", posargs=[])  # the table takes none of the cells' arguments (--force)


def _venv_python(session: nox.Session) -> str:
    name = "python.exe" if sys.platform == "win32" else "python"
    return str(Path(session.bin) / name)


def progress_log(session: nox.Session, total: int) -> runner.Listener:
    """Log each pair as it starts and its outcome as it ends."""
    count = 0

    def listen(event: str, pair: core.Pair, record: core.Record | None) -> None:
        nonlocal count
        if event == "start":
            count += 1
            session.log(f"[{count}/{total}] {pair.probe.name} on {pair.device} ...")
        elif record is not None:
            message = terminal.first_line(record.message)
            session.log(f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {message}")

    return listen


def tally(records: Sequence[core.Record]) -> str:
    """``2 pass, 4 unavailable``."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record.outcome.value] = counts.get(record.outcome.value, 0) + 1
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))


def _error_of(log: str) -> str:
    """The installer's own summary of what went wrong: its first ``error:`` line, else its last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if line.lower().startswith("error:"):
            return line[len("error:") :].strip()
    return lines[-1] if lines else "no output"


def _last_lines(text: str, count: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-count:])
