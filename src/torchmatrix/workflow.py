"""What the noxfile's sessions do, composed from the one-way chain of modules.

config -> plan -> (nox env) -> runner -> results -> summary. The noxfile holds
no logic: it builds sessions from :func:`load` and calls the methods here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from nox.command import CommandFailed

from . import config, freshness, interpreters, releases, results, runner, summary
from .config import Matrix
from .errors import TorchmatrixError
from .findlinks import pip_find_links
from .outcomes import Outcome
from .plan import KNOWN_PINS_FILE, Cell, plan
from .results import CellResult

if TYPE_CHECKING:
    import nox

MATRIX_VARIABLE = "TORCHMATRIX_MATRIX"
MACHINE_VARIABLE = "TORCHMATRIX_MACHINE"
PYCACHE_FOLDER = ".pycache"


@dataclass(frozen=True)
class Project:
    """A loaded matrix with its plan: everything the sessions need."""

    matrix: Matrix
    cells: tuple[Cell, ...]
    machine: str
    find_links: tuple[str, ...]
    offline: bool
    notes: tuple[str, ...]

    @property
    def results_dir(self) -> Path:
        return self.matrix.output / "results"

    # --- session parameters --------------------------------------------------

    def session_parameters(self) -> list[tuple[str | bool, str]]:
        """(python, session id) per probe session: the interpreter's path, or False for a cell that cannot run.

        The parameter is the id, not the cell: nox writes parameters as JSON
        (``nox --report``, and every session under ``nox -j``), and for a CI
        job reading ``nox -l --json`` a plain id is the useful value.
        """
        return [
            (cell.interpreter.path if cell.interpreter and not cell.outcome else False, cell.session_id)
            for cell in self.cells
        ]

    def session_ids(self) -> list[str]:
        return [cell.session_id for cell in self.cells]

    # --- sessions -------------------------------------------------------------

    def cell(self, session_id: str) -> Cell:
        """The cell whose probe session is ``probe(<session_id>)``."""
        return next(cell for cell in self.cells if cell.session_id == session_id)

    def probe(self, session: nox.Session, session_id: str) -> None:
        """Install the cell's torch, run every (probe, device) pair, store the result.

        A cell whose stored result was made from the same inputs and torch build
        is skipped, unless the session's arguments say ``--force``.
        """
        try:
            force = freshness.wants_force(session.posargs)
        except TorchmatrixError as error:
            session.error(str(error))
        _notify_report(session)
        cell = self.cell(session_id)
        started = results.now_iso()
        if cell.outcome:
            self._store(cell, started, outcome=cell.outcome, message=cell.hint)
            session.skip(f"{cell.outcome.value}: {cell.hint}")
        env = Path(session.virtualenv.location)
        inputs = self.inputs(cell)
        self._skip_if_up_to_date(session, cell, {**inputs, freshness.TORCH_BUILD: freshness.torch_build(env)}, force)
        install_error = self._install(session, cell)
        if install_error:
            self._store(cell, started, outcome=Outcome.INSTALL_ERROR, message=install_error, inputs=inputs)
            session.error(f"install-error: {install_error}")
        inputs[freshness.TORCH_BUILD] = freshness.torch_build(env)
        pairs = [runner.Pair(probe, device) for probe in self.matrix.probes for device in self.matrix.devices]
        python = _venv_python(session)
        run = runner.run_cell(python, pairs, self.matrix.timeout, _progress(session, len(pairs)), pycache_prefix(env))
        path = self._store(cell, started, records=run.records, environment=run.environment, inputs=inputs)
        session.log(f"{cell.id}: {_tally(run.records)}; written to {path}")

    def report(self, session: nox.Session) -> None:
        """Print the version-by-device table of this machine's results."""
        scan = results.scan(self.results_dir)
        for warning in scan.warnings:
            session.warn(warning)
        mine = [result for result in scan.results if result.machine == self.machine]
        print(summary.table(results.latest(mine), self.matrix.devices), flush=True)

    def describe_plan(self) -> str:
        """The resolved plan, one line per cell, for `nox -s plan`."""
        lines = [f"matrix: {self.matrix.file}", f"machine: {self.machine}", f"results: {self.results_dir}"]
        lines += [f"find-links: {link}" for link in self.find_links]
        lines += [f"note: {note}" for note in self.notes]
        for cell in self.cells:
            where = f"{cell.interpreter.path} ({cell.interpreter.source})" if cell.interpreter else "-"
            status = f"{cell.outcome.value}: {cell.hint}" if cell.outcome else "ready"
            lines.append(
                f"probe({cell.session_id})  {cell.id}  python={where}  [{' '.join(cell.requirements)}]  {status}"
            )
        return "\n".join(lines)

    # --- helpers --------------------------------------------------------------

    def installer_options(self) -> list[str]:
        """Where the installer looks for torch: the matrix's index and the find-links in effect."""
        options = [option for link in self.find_links for option in ("--find-links", link)]
        if self.matrix.index_url != config.DEFAULT_INDEX_URL:
            options += ["--index-url", self.matrix.index_url]
        return options

    def _install(self, session: nox.Session, cell: Cell) -> str:
        """Install the cell's requirements; the installer's last words when it fails, else ''."""
        options = self.installer_options()
        if self.offline and session.venv_backend == "uv":
            options.append("--offline")
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
            try:
                session.install(*cell.requirements, *options, silent=False, stdout=log, stderr=subprocess.STDOUT)
            except CommandFailed as exc:  # its message is the exit code only; the log says why
                log.seek(0)
                return _last_lines(log.read()) or str(exc)
        return ""

    def _skip_if_up_to_date(self, session: nox.Session, cell: Cell, inputs: dict[str, object], force: bool) -> None:
        """Skip the session when the stored result stands for a run from ``inputs``; else log why it runs."""
        if force:
            session.log(f"{cell.id}: {freshness.FORCE}: re-measuring")
            return
        verdict = freshness.verdict(self.result_file(cell), inputs)
        if verdict.up_to_date:
            session.skip(f"{cell.id}: {verdict.reason}")
        session.log(f"{cell.id}: running: {verdict.reason}")

    def result_file(self, cell: Cell) -> Path:
        """Where the cell's result on this machine is stored."""
        return results.result_path(self.results_dir, self.machine, cell.id)

    def _store(self, cell: Cell, started: str, *, outcome: Outcome | None = None, message: str = "",
               records: Sequence[runner.Record] = (), environment: dict | None = None,
               inputs: dict[str, object] | None = None) -> Path:  # fmt: skip
        result = CellResult(
            machine=self.machine,
            cell_id=cell.id,
            torch=str(cell.torch),
            python=cell.python,
            python_request=cell.python_request,
            session=f"probe({cell.session_id})",
            outcome=outcome,
            message=message,
            records=tuple(records),
            environment=environment or {},
            inputs=inputs if inputs is not None else self.inputs(cell),
            started_at=started,
            finished_at=results.now_iso(),
        )
        return results.write(self.results_dir, result)

    def inputs(self, cell: Cell) -> dict[str, object]:
        """What the cell's result depends on; a change in any of it makes the stored result stale."""
        return {
            "requirements": list(cell.requirements),
            "interpreter": cell.interpreter.path if cell.interpreter else None,
            "python_version": ".".join(map(str, cell.interpreter.version)) if cell.interpreter else None,
            "devices": list(self.matrix.devices),
            "timeout": self.matrix.timeout,
            "probes": {probe.name: _sha256(probe.path) for probe in self.matrix.probes},
            "worker": _sha256(runner.WORKER),
        }


def load(root: Path, environ: dict[str, str] | None = None) -> Project:
    """Read the matrix (``$TORCHMATRIX_MATRIX`` or ``root/matrix.yaml``) and plan its cells."""
    environ = dict(os.environ if environ is None else environ)
    matrix_file = Path(environ.get(MATRIX_VARIABLE) or root / "matrix.yaml")
    matrix = config.load_matrix(matrix_file, probes_dir=root / "probes")
    find_links = matrix.find_links if matrix.find_links is not None else pip_find_links(environ)
    listing = releases.listing(matrix.index_url, find_links, wanted=[entry.version for entry in matrix.torch])
    found = interpreters.discover(environ)
    cells = plan(matrix, listing, found, interpreters.host_platforms(), config.load_pin_rules(KNOWN_PINS_FILE))
    machine = results.safe_name(environ.get(MACHINE_VARIABLE) or matrix.machine or results.default_machine_name())
    return Project(matrix, cells, machine, tuple(find_links), listing.offline, listing.notes)


def load_or_exit(root: Path) -> Project:
    """:func:`load`, turning a user's mistake into its message and exit code instead of a traceback."""
    try:
        return load(root)
    except TorchmatrixError as error:
        _exit(error)


def _exit(error: TorchmatrixError) -> NoReturn:
    print(f"torchmatrix: error: {error}", file=sys.stderr, flush=True)
    raise SystemExit(error.exit_code)


def pycache_prefix(env: Path) -> Path:
    """Where the cells' Pythons keep compiled bytecode: beside the environments, so a rebuilt one finds it."""
    return env.parent / PYCACHE_FOLDER


def _notify_report(session: nox.Session) -> None:
    """Queue the table after the cells; nox runs it once, however many cells ask."""
    # Under `nox -j N` each session runs in its own nox process, which cannot
    # queue another (ValueError): `nox -j N -s probe report` prints the table once, last.
    with contextlib.suppress(ValueError):
        session.notify("report")


def _venv_python(session: nox.Session) -> str:
    name = "python.exe" if sys.platform == "win32" else "python"
    return str(Path(session.bin) / name)


def _progress(session: nox.Session, total: int) -> runner.Listener:
    count = 0

    def listen(event: str, pair: runner.Pair, record: runner.Record | None) -> None:
        nonlocal count
        if event == "start":
            count += 1
            session.log(f"[{count}/{total}] {pair.probe.name} on {pair.device} ...")
        elif record is not None:
            first_line = record.message.splitlines()[0] if record.message else ""
            session.log(f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {first_line}")

    return listen


def _tally(records: Sequence[runner.Record]) -> str:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.outcome.value] = counts.get(record.outcome.value, 0) + 1
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))


def _last_lines(text: str, count: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-count:])


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
