"""What the noxfile's sessions do, composed from the one-way chain of modules.

config -> plan -> (nox env) -> runner -> results -> summary. The noxfile holds
no logic: it builds sessions from :func:`load` and calls the methods here.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from nox.command import CommandFailed

from . import config, interpreters, releases, results, runner, summary, terminal
from .config import Matrix
from .errors import ConfigError, TorchmatrixError
from .findlinks import pip_find_links
from .outcomes import Outcome
from .plan import KNOWN_PINS_FILE, Cell, plan
from .results import CellResult

if TYPE_CHECKING:
    import nox

MATRIX_VARIABLE = "TORCHMATRIX_MATRIX"
MACHINE_VARIABLE = "TORCHMATRIX_MACHINE"


@dataclass(frozen=True)
class Project:
    """A loaded matrix with its plan: everything the sessions need."""

    matrix: Matrix
    cells: tuple[Cell, ...]
    machine: str
    find_links: tuple[str, ...]
    offline: bool
    """The index could not be read when the plan was made: uv installs from its cache alone."""
    notes: tuple[str, ...]
    unreachable: set[str] = field(default_factory=set)
    """Index URLs found dead during this run (an install failed and the index did not answer)."""

    @property
    def results_dir(self) -> Path:
        return self.matrix.output / "results"

    # --- session parameters --------------------------------------------------

    def session_parameters(self) -> list[tuple[str | bool, Cell]]:
        """(python, cell) per probe session: the interpreter's path, or False for a cell that cannot run."""
        return [
            (cell.interpreter.path if cell.interpreter and not cell.outcome else False, cell) for cell in self.cells
        ]

    def session_ids(self) -> list[str]:
        return [cell.session_id for cell in self.cells]

    # --- sessions -------------------------------------------------------------

    def probe(self, session: nox.Session, cell: Cell) -> None:
        """Install the cell's torch, run every (probe, device) pair, store the result."""
        session.notify("report")
        started = results.now_iso()
        if cell.outcome:
            self._store(cell, started, outcome=cell.outcome, message=cell.hint)
            session.skip(terminal.escape(f"{cell.outcome.value}: {cell.hint}"))
        if self.offline:
            for note in self.notes:
                session.log(terminal.escape(note))
        install_error = self._install(session, cell)
        if install_error:
            self._store(cell, started, outcome=Outcome.INSTALL_ERROR, message=install_error)
            session.error(terminal.escape(f"install-error: {install_error}"))
        pairs = [runner.Pair(probe, device) for probe in self.matrix.probes for device in self.matrix.devices]
        python = _venv_python(session)
        run = runner.run_cell(python, pairs, self.matrix.timeout, listener=_progress(session, len(pairs)))
        path = self._store(cell, started, records=run.records, environment=run.environment)
        session.log(f"{cell.id}: {_tally(run.records)}; written to {path}")

    def report(self, session: nox.Session) -> None:
        """Print the version-by-device table of this machine's results."""
        scan = results.scan(self.results_dir)
        for warning in scan.warnings:
            session.warn(terminal.escape(warning))
        mine = [result for result in scan.results if result.machine == self.machine]
        print(summary.table(results.latest(mine), self.matrix.devices), flush=True)

    def describe_plan(self) -> str:
        """The resolved plan, one line per cell, for `nox -s plan`."""
        lines = [f"matrix: {self.matrix.file}", f"machine: {self.machine}", f"results: {self.results_dir}"]
        lines += [f"find-links: {link}" for link in self.find_links]
        lines += [f"note: {terminal.escape(note)}" for note in self.notes]
        for cell in self.cells:
            where = f"{cell.interpreter.path} ({cell.interpreter.source})" if cell.interpreter else "-"
            status = f"{cell.outcome.value}: {terminal.escape(cell.hint)}" if cell.outcome else "ready"
            lines.append(
                f"probe({cell.session_id})  {cell.id}  python={where}  [{' '.join(cell.requirements)}]  {status}"
            )
        return "\n".join(lines)

    # --- helpers --------------------------------------------------------------

    def _install(self, session: nox.Session, cell: Cell) -> str:
        """Install the cell's requirements; '' when done, else why not (a summary, then the installer's words).

        When the index cannot be reached, uv installs from its cache alone (``--offline``): at once if the
        listing could not be fetched, else after a failed install, if the index does not answer then.
        """
        uv = session.venv_backend == "uv"
        index = self.matrix.index_url
        offline = uv and (self.offline or index in self.unreachable)
        log = self._run_installer(session, cell, offline)
        if log is not None and uv and not offline and not releases.reachable(index):
            self.unreachable.add(index)
            session.log(f"cannot reach {index}: installing from uv's cache alone (--offline)")
            offline = True
            log = self._run_installer(session, cell, offline)
        if log is None:
            return ""
        lines = [f"installing {' '.join(cell.requirements)}{' offline' if offline else ''} failed: {_error_of(log)}"]
        if offline:
            lines.append(
                f"hint: {index} cannot be reached and uv's cache lacks something this cell needs; "
                "run once with a network to fill the cache, or put the wheels in a find_links folder"
            )
        return "\n".join([*lines, _last_lines(log)])

    def _run_installer(self, session: nox.Session, cell: Cell, offline: bool) -> str | None:
        """Run the install; None when it worked, else the installer's output."""
        options = [option for link in self.find_links for option in ("--find-links", link)]
        if self.matrix.index_url != config.DEFAULT_INDEX_URL:
            options += ["--index-url", self.matrix.index_url]
        if offline:
            options.append("--offline")
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
            try:
                session.install(*cell.requirements, *options, silent=False, stdout=log, stderr=subprocess.STDOUT)
            except CommandFailed as exc:  # its message is the exit code only; the log says why
                log.seek(0)
                return log.read() or str(exc)
        return None

    def _store(self, cell: Cell, started: str, *, outcome: Outcome | None = None, message: str = "",
               records: Sequence[runner.Record] = (), environment: dict | None = None) -> Path:  # fmt: skip
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
            inputs=self.inputs(cell),
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
    if not matrix_file.is_file():
        hint = f"{MATRIX_VARIABLE} names it" if environ.get(MATRIX_VARIABLE) else "write one (see README)"
        raise ConfigError(str(matrix_file.absolute()), None, "", "no such matrix file", hint)
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
    print(f"torchmatrix: error: {terminal.escape(str(error))}", file=sys.stderr, flush=True)
    raise SystemExit(error.exit_code)


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
            message = terminal.first_line(record.message)
            session.log(f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {message}")

    return listen


def _tally(records: Sequence[runner.Record]) -> str:
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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
