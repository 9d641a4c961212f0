"""What the noxfile's sessions do, composed from the one-way chain of modules.

config -> plan -> (nox env) -> runner -> results -> summary and report. The noxfile holds
no logic: it builds sessions from :func:`load` and calls the methods here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from nox.command import CommandFailed
from packaging.version import InvalidVersion, Version
from tabulate import tabulate

from . import (
    bisect_session,
    config,
    freshness,
    interpreters,
    releases,
    results,
    runner,
    summary,
    terminal,
    verify_session,
)
from .childnox import MACHINE_VARIABLE, MATRIX_VARIABLE, TORCH_VARIABLE
from .config import Matrix, PinRule, TorchEntry
from .errors import ConfigError, TorchmatrixError, UsageError
from .findlinks import pip_find_links
from .interpreters import Interpreter
from .outcomes import Outcome
from .plan import KNOWN_PINS_FILE, Cell, plan
from .releases import Listing
from .report import diff, model, publish
from .report import options as report_options
from .results import CellResult
from .tee import Tee

if TYPE_CHECKING:
    import nox

PYCACHE_FOLDER = ".pycache"


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
    listing: Listing
    interpreters: tuple[Interpreter, ...]
    platforms: tuple[str, ...]
    known_pins: tuple[PinRule, ...]
    unreachable: set[str] = field(default_factory=set)
    """Index URLs found dead during this run (an install failed and the index did not answer)."""

    @property
    def results_dir(self) -> Path:
        return self.matrix.output / "results"

    def plan_release(self, version: Version, listing: Listing | None = None) -> Cell:
        """The cell ``TORCHMATRIX_TORCH=<version> nox -s probe`` runs (the first, if the matrix pins Pythons)."""
        matrix = with_releases(self.matrix, [version])
        return plan(matrix, listing or self.listing, self.interpreters, self.platforms, self.known_pins)[0]

    def stored(self, found: Iterable[CellResult]) -> dict[tuple[Version, str | None], CellResult]:
        """This machine's newest result per cell, by (torch release, the Python the matrix asked for)."""
        mine = results.latest(result for result in found if result.machine == self.machine)
        return {(results.version_of(result.torch), result.python_request): result for result in mine}

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
        with _exit_on_fatal_error():
            force = freshness.wants_force(session.posargs)
        _notify_report(session)
        cell = self.cell(session_id)
        started = results.now_iso()
        if cell.outcome:
            self._store(cell, started, outcome=cell.outcome, message=cell.hint)
            session.skip(terminal.escape(f"{cell.outcome.value}: {cell.hint}"))
        if self.offline:
            for note in self.notes:
                session.log(terminal.escape(note))
        env = Path(session.virtualenv.location)
        inputs = self.inputs(cell)
        self._skip_if_up_to_date(session, cell, {**inputs, freshness.TORCH_BUILD: freshness.torch_build(env)}, force)
        install_error = self._install(session, cell)
        if install_error:
            self._store(cell, started, outcome=Outcome.INSTALL_ERROR, message=install_error, inputs=inputs)
            session.error(terminal.escape(f"install-error: {install_error}"))
        inputs[freshness.TORCH_BUILD] = freshness.torch_build(env)
        pairs = [runner.Pair(probe, device) for probe in self.matrix.probes for device in self.matrix.devices]
        python = _venv_python(session)
        run = runner.run_cell(python, pairs, self.matrix.timeout, _progress(session, len(pairs)), pycache_prefix(env))
        if run.import_failure:
            self._store(cell, started, outcome=Outcome.INSTALL_ERROR, message=run.import_failure, inputs=inputs)
            session.error(terminal.escape(f"install-error: torch does not import: {run.import_failure}"))
        path = self._store(cell, started, records=run.records, environment=run.environment, inputs=inputs)
        session.log(f"{cell.id}: {_tally(run.records)}; written to {path}")

    def report(self, session: nox.Session) -> None:
        """Render every machine's results into the output folder, print each machine's table, diff if asked."""
        with _exit_on_fatal_error():
            options = report_options.parse(session.posargs)
        merged = self._merged(session, self.results_dir)
        written = publish.write(self.matrix.output, publish.render(merged, options.formats))
        # This machine's table first, then those of the machines whose folders were copied in.
        machines = sorted({result.machine for result in merged.results} or {self.machine},
                          key=lambda machine: (machine != self.machine, machine.casefold()))  # fmt: skip
        for machine in machines:
            cells = [result for result in merged.results if result.machine == machine]
            print(
                f"{terminal.escape(machine, keep_newlines=False)}:\n{summary.table(cells, self.matrix.devices)}\n",
                flush=True,
            )
        names = ", ".join(path.name for path in written)
        session.log(f"{len(machines)} machine(s); wrote {names} to {self.matrix.output}")
        if options.diff:
            before = self._merged(session, options.diff)
            print(diff.render(diff.changes(before, merged), str(options.diff), str(self.results_dir)), flush=True)

    def _merged(self, session: nox.Session, results_dir: Path) -> model.Report:
        scan = results.scan(results_dir)
        for warning in scan.warnings:
            session.warn(terminal.escape(warning))
        return model.build(scan.results)

    def bisect(self, session: nox.Session, noxfile: Path) -> None:
        """Find the first torch release whose outcome is NEW's (`nox -s bisect -- PROBE --from OLD --to NEW`)."""
        with _exit_on_fatal_error():
            bisect_session.run(self, session, noxfile)

    def verify(self, session: nox.Session, noxfile: Path) -> None:
        """Check the stored results against the matrix's expectations (`nox -s verify`)."""
        with _exit_on_fatal_error():
            verify_session.run(self, session, noxfile)

    def describe_plan(self) -> str:
        """The resolved plan, a row per cell, for `nox -s plan`."""
        lines = [f"matrix:  {self.matrix.file}", f"machine: {self.machine}", f"results: {self.results_dir}"]
        lines += [f"find-links: {link}" for link in self.find_links]
        lines += [f"note: {terminal.escape(note)}" for note in self.notes]
        rows = [
            [
                f"probe({cell.session_id})",
                f"{cell.interpreter.path} ({cell.interpreter.source})" if cell.interpreter else "-",
                " ".join(cell.requirements),
                f"{cell.outcome.value}: {terminal.escape(cell.hint)}" if cell.outcome else "ready",
            ]
            for cell in self.cells
        ]
        table = tabulate(rows, headers=["session", "python", "requirements", "status"], disable_numparse=True)
        return "\n".join(lines) + "\n\n" + table

    # --- helpers --------------------------------------------------------------

    def installer_options(self) -> list[str]:
        """Where the installer looks for torch: the matrix's index and the find-links in effect."""
        options = [option for link in self.find_links for option in ("--find-links", link)]
        if self.matrix.index_url != config.DEFAULT_INDEX_URL:
            options += ["--index-url", self.matrix.index_url]
        return options

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
        options = self.installer_options()
        if offline:
            options.append("--offline")
        tee = Tee(keep=40)
        try:
            with tee as output:
                session.install(*cell.requirements, *options, silent=False, stdout=output, stderr=subprocess.STDOUT)
        except CommandFailed as exc:  # its message is the exit code only; the installer's output says why
            return tee.tail or str(exc)
        return None

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
    """Read the matrix (``$TORCHMATRIX_MATRIX`` or ``root/matrix.yaml``) and plan its cells.

    ``$TORCHMATRIX_TORCH`` (releases separated by commas) replaces the matrix's
    torch releases; everything else of the matrix stays.
    """
    environ = dict(os.environ if environ is None else environ)
    matrix_file = Path(environ.get(MATRIX_VARIABLE) or root / "matrix.yaml")
    if not matrix_file.is_file():
        hint = f"{MATRIX_VARIABLE} names it" if environ.get(MATRIX_VARIABLE) else "write one (see README)"
        raise ConfigError(str(matrix_file.absolute()), None, "", "no such matrix file", hint)
    matrix = config.load_matrix(matrix_file, probes_dir=root / "probes")
    if environ.get(TORCH_VARIABLE, "").strip():
        matrix = with_releases(matrix, _releases_from(environ[TORCH_VARIABLE]))
    find_links = matrix.find_links if matrix.find_links is not None else pip_find_links(environ)
    listing = releases.listing(matrix.index_url, find_links, wanted=[entry.version for entry in matrix.torch])
    found = tuple(interpreters.discover(environ))
    platforms = tuple(interpreters.host_platforms())
    known_pins = config.load_pin_rules(KNOWN_PINS_FILE)
    cells = plan(matrix, listing, found, platforms, known_pins)
    machine = results.safe_name(environ.get(MACHINE_VARIABLE) or matrix.machine or results.default_machine_name())
    return Project(
        matrix, cells, machine, tuple(find_links), listing.offline, listing.notes, listing, found, platforms, known_pins
    )


def with_releases(matrix: Matrix, versions: Iterable[Version]) -> Matrix:
    """``matrix`` with only ``versions`` as its torch releases; a release it lists keeps its Pythons and pins."""
    entries = {entry.version: entry for entry in matrix.torch}
    return dataclasses.replace(matrix, torch=tuple(entries.get(version, TorchEntry(version)) for version in versions))


def _releases_from(text: str) -> list[Version]:
    versions: list[Version] = []
    for part in text.replace(",", " ").split():
        try:
            version = Version(part)
        except InvalidVersion:
            raise UsageError(f"{TORCH_VARIABLE}: {part!r} is not a torch release (e.g. 1.12.1)") from None
        if version not in versions:
            versions.append(version)
    return versions


def load_or_exit(root: Path) -> Project:
    """:func:`load`, turning a user's mistake into its message and exit code instead of a traceback."""
    try:
        return load(root)
    except TorchmatrixError as error:
        _exit(error)


@contextlib.contextmanager
def _exit_on_fatal_error() -> Iterator[None]:
    """Inside a session: a user's mistake ends the run with its message and exit code, not a traceback."""
    try:
        yield
    except TorchmatrixError as error:
        _exit(error)


def _exit(error: TorchmatrixError) -> NoReturn:
    print(f"torchmatrix: error: {terminal.escape(str(error))}", file=sys.stderr, flush=True)
    raise SystemExit(error.exit_code)


def pycache_prefix(env: Path) -> Path:
    """Where the cells' Pythons keep compiled bytecode: beside the environments, so a rebuilt one finds it."""
    return env.parent / PYCACHE_FOLDER


def _notify_report(session: nox.Session) -> None:
    """Queue the table after the cells; nox runs it once, however many cells ask."""
    # Under `nox -j N` each session runs in its own nox process, which cannot
    # queue another (ValueError): `nox -j N -s probe report` prints the table once, last.
    with contextlib.suppress(ValueError):
        session.notify("report", posargs=[])  # the table takes none of the cells' arguments (--force)


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
