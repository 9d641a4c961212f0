"""`nox -s "probe(<release>)"`: one cell run (:mod:`torchmatrix.cellrun`), told in nox's words.

The cell run returns what it did; this session says it: a result written is a
success, one up to date a skip, a cell outcome a skip (``no-wheel``) or a
failure (``install-error``), and a run that stored nothing a failure. Under
``--strict`` an outcome no expectation allows fails the session, its result
stored either way. nox lends the cell's environment (:class:`NoxEnvironment`).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from nox.command import CommandFailed
from nox.virtualenv import VirtualEnv

from .. import cellrun
from ..cellrun import CellOutcome, CellRequest, Ended, Installer, NothingStored, UpToDate, Written
from ..core import Outcome
from ..util import interrupts, safetext
from ..util.arguments import Parser, repeat_count, typed
from .handback import ResultFile
from .report import queue_report

if TYPE_CHECKING:
    import nox

    from ..project import Project

ARGUMENTS = "[--force] [--repeat N] [--strict]"
USAGE = typed(None, '"probe(<release>)"', ARGUMENTS)


@dataclass(frozen=True)
class ProbeRequest:
    """What a probe session's arguments ask."""

    force: bool = False
    repeat: int | None = None
    """Runs per (probe, device) pair instead of the matrix's ``repeat:``."""
    strict: bool = False
    """Fail the session on an outcome no expectation allows, as the matrix's ``strict: true`` does."""


def parse(argv: Sequence[str], command: str | None = None) -> ProbeRequest:
    """Read the session's arguments; anything else is refused (a typo must not pass for a skip). The usage line is
    the ``command``'s that started it when it is not nox (``torchmatrix probe [SCRIPT …] [--torch V[,V…]] …``)."""
    args = arguments_parser(command).parse(argv)
    return ProbeRequest(args.force, args.repeat, args.strict)


def arguments_parser(command: str | None = None) -> Parser:
    """The parser of the session's arguments, whose usage line is the ``command``'s that starts it (nox's: None)."""
    usage = USAGE if command is None else typed(command, "probe", f"[SCRIPT …] [--torch V[,V…]] {ARGUMENTS}")
    parser = Parser(usage, "Run the probes of a cell whose records are out of date.")
    parser.add_argument("--force", action="store_true", help="re-measure every pair, up to date or not")
    parser.add_argument("--repeat", type=repeat_count, metavar="N", help="run each pair N times")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail on a fail, error, crash, timeout or unstable pair no expect: entry allows",
    )
    return parser


def run(
    project: Project,
    session: nox.Session,
    parameter: str,
    installer: Installer,
    ending: ResultFile,
    request: ProbeRequest,
    command: str | None = None,
) -> None:
    """Run the cell of ``parameter`` as the session's arguments ask (``request``, :func:`parse`) and say how it
    ended; ``ending`` hears what it stored, for the session's hand-back; ``command``: the one that started the
    session, which its messages name (nox's: None)."""
    if request.repeat is not None:
        project = project.with_repeat(request.repeat)
    project.refuse_unlisted(command)  # a release that is no release stops the run before any cell of it
    queue_report(session)
    cell = project.cell(parameter)
    session.log(f"cell {project.cells.index(cell) + 1} of {len(project.cells)}: {safetext.for_terminal(cell.id)}")
    if cell.interpreter is not None or cell.outcome is not None:  # else the plan's hint is all there is to say
        project.require_writable(project.machine_dir)
    asked = CellRequest(request.force, request.strict)
    with _saying_what_an_interrupt_left(session, cell.id, project.result_file(cell)):
        ended = cellrun.run_cell(project, cell, NoxEnvironment(session), installer, asked)
    tell(session, ended, ending)


@contextlib.contextmanager
def _saying_what_an_interrupt_left(session: nox.Session, cell_id: str, result: Path) -> Iterator[None]:
    """Say, when the run is interrupted, what of the cell is stored: nothing, unless ``result`` was written since
    the cell began.

    The interrupt goes on to nox, which ends the run there (exit status 130), so that no later session runs.
    """
    before = _stamp(result)
    try:
        yield
    except KeyboardInterrupt:
        if _stamp(result) not in (None, before):
            session.warn(safetext.for_terminal(f"interrupted: {cell_id}'s result was written to {result} before"))
        else:
            session.warn(safetext.for_terminal(f"interrupted: nothing stored for {cell_id}"))
        raise


def _stamp(path: Path) -> tuple[int, int] | None:
    """What tells a file written anew (its inode and modification time, as an atomic replace changes them)."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_ino, status.st_mtime_ns


def tell(session: nox.Session, ended: Ended, ending: ResultFile) -> None:
    """Say ``ended`` as nox does: return (a success), ``session.skip`` or ``session.error``."""
    if isinstance(ended, Written):
        ending.written(ended.path, ended.result.finished_at)
        _gate(session, ended.result.cell_id, ended.not_allowed)
    elif isinstance(ended, UpToDate):
        ending.up_to_date(ended.path, ended.result.finished_at)
        _gate(session, ended.result.cell_id, ended.not_allowed)
        session.skip(safetext.for_terminal(f"{ended.result.cell_id}: {ended.reason}", keep_newlines=False))
    elif isinstance(ended, CellOutcome):
        if ended.path is not None:
            ending.written(ended.path, ended.finished_at)
        said = safetext.for_terminal(f"{ended.outcome.value}: {ended.message}")
        if ended.outcome is Outcome.INSTALL_ERROR:
            session.error(said)
        _gate(session, "", ended.not_allowed)  # its line names the cell
        session.skip(said)
    elif isinstance(ended, NothingStored):
        session.error(safetext.for_terminal(ended.message))


def _gate(session: nox.Session, cell_id: str, not_allowed: tuple[str, ...]) -> None:
    """Fail the session, under ``strict``, on the outcomes of ``not_allowed``; ``cell_id`` leads the message."""
    if not_allowed:
        allowed = "an expect: entry of its outcome in the matrix allows one"
        said = f"strict: {len(not_allowed)} outcome(s) not allowed ({allowed}):\n" + "\n".join(not_allowed)
        session.error(safetext.for_terminal(f"{cell_id}: {said}" if cell_id else said))


class NoxEnvironment:
    """The cell's environment as nox made it for ``session``: what a cell run asks of it
    (:class:`torchmatrix.cellrun.CellEnvironment`)."""

    def __init__(self, session: nox.Session) -> None:
        self._session = session

    @property
    def location(self) -> Path:
        return Path(self._session.virtualenv.location)

    @property
    def python(self) -> str:
        return str(Path(self._session.bin) / ("python.exe" if sys.platform == "win32" else "python"))

    @property
    def uses_uv(self) -> bool:
        return self._session.venv_backend == "uv"

    def log(self, line: str) -> None:
        self._session.log(line)

    def warn(self, line: str) -> None:
        self._session.warn(line)

    def install(self, arguments: Sequence[str], output: IO[str]) -> bool:
        try:
            self._session.install(*arguments, silent=False, stdout=output, stderr=subprocess.STDOUT)
        except CommandFailed as exc:  # its message is the exit code only; the installer's output says why
            interrupts.stop_if_interrupted(exc.return_code)  # an installer stopped by a signal did not fail
            return False
        return True

    def run(self, arguments: Sequence[str]) -> str:
        try:
            self._session.run(self.python, *arguments, silent=True)
        except CommandFailed as exc:
            interrupts.stop_if_interrupted(exc.return_code)
            return str(exc)
        return ""

    def rebuild(self) -> None:
        venv = self._session.virtualenv
        assert isinstance(venv, VirtualEnv)  # a cell that runs always has one: nox made it for the cell's Python
        venv.reuse_existing = False
        venv.create()
