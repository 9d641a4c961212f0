"""Run probe sessions in a child nox, so that bisect and verify build cells exactly as `nox -s probe` does.

Same noxfile, same environments folder (``--envdir``), same matrix and
machine: a cell built here is the one a later `nox -s probe` reuses, and its
result file is the one `nox -s report` shows. A cell on a Python the bisect
holds is not the matrix's cell of that release: its environment is its own,
in a folder of that Python's (:func:`torchmatrix.environment.disk.envdir_for`),
so neither rebuilds the other. What each session did comes back in its
hand-back file (:mod:`.handback`); the child's output is for
people, and nothing here reads it.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import variables
from ..environment import disk
from ..util import interrupts, tethered
from .handback import HandBack, Stored, received

if TYPE_CHECKING:
    import nox

    from ..planner import Cell
    from ..project import Project

NOX_MAIN = (
    "import runpy, sys; sys.path[:] = filter(None, sys.path); "
    "runpy.run_module('nox', run_name='__main__', alter_sys=True)"
)
"""``python -m nox`` without the folder it is started in on ``sys.path``, where ``-m`` puts it: a file of the user's
there named like a module (``signal.py``, ``tabulate.py``, ``nox.py``) stays the user's, never a module of
torchmatrix's own process."""


def nox_command(python: str, noxfile: Path, envdir: Path) -> list[str]:
    """The command line that starts nox on ``python``, reading ``noxfile`` and keeping environments in ``envdir``."""
    return [python, "-c", NOX_MAIN, "--noxfile", str(noxfile), "--envdir", str(envdir)]


def command(noxfile: Path, envdir: Path, sessions: Sequence[str], arguments: Sequence[str] = ()) -> list[str]:
    """The nox command line that runs ``sessions`` (e.g. ``probe(1.12.0)``), with ``arguments`` after ``--``."""
    argv = [*nox_command(sys.executable, noxfile, envdir), "--sessions", *sessions]
    return [*argv, "--", *arguments] if arguments else argv


def run_cells(
    project: Project,
    session: nox.Session,
    noxfile: Path,
    cells: Sequence[Cell],
    log: Path | None = None,
    *,
    arguments: Sequence[str] = (),
    settings: Mapping[str, str] | None = None,
) -> dict[str, HandBack]:
    """Run the probe sessions of ``cells`` as the running nox would: same noxfile, envdir, matrix and machine.

    A cell's own release goes in ``TORCHMATRIX_TORCH``, so a release the matrix does not list runs too;
    probes given for this run (a script bisect runs alone) go in ``TORCHMATRIX_PROBES``.
    ``arguments`` go to the probe sessions (``--repeat 5``); ``settings`` are more variables for them.
    Returns what each session handed back, by its name (``probe(1.12.0)``), in a folder of this run's own.
    """
    chosen = {
        variables.MATRIX.name: str(project.matrix.file),
        variables.MACHINE.name: project.machine,
        variables.TORCH.name: ",".join(str(cell.torch) for cell in cells),
        **(settings or {}),
    }
    if project.given_probes:
        chosen[variables.PROBES.name] = ",".join(project.given_probes)
    envdir = disk.envdir_for(envdir_of(session), chosen.get(variables.PYTHON.name))
    sessions = [cell.session for cell in cells]
    with tempfile.TemporaryDirectory(prefix="torchmatrix-handback-") as folder:
        chosen[variables.HANDBACK.name] = folder
        code = run(noxfile, envdir, sessions, chosen, log, arguments)
        interrupts.stop_if_interrupted(code)  # a cell an interrupt stopped is no outcome: the run stops as at Ctrl-C
        return {name: _handed_back(Path(folder), name, code, log) for name in sessions}


def envdir_of(session: nox.Session) -> Path:
    """The environments folder of the running nox (its ``--envdir``): the folder of the session's own environment,
    which nox names but makes only for a session that has one (its ``cache_dir`` would make ``<envdir>/.cache``)."""
    return session.env_dir.parent.resolve()


def _handed_back(folder: Path, session: str, code: int, log: Path | None) -> HandBack:
    """What ``session`` handed back in ``folder``; where it handed back nothing, that it never began."""
    try:
        handed = received(folder, session)
    except (OSError, ValueError) as exc:
        return HandBack(session, Stored.NOTHING, None, message=f"its hand-back cannot be read: {exc}")
    if handed is not None:
        return handed
    see = f"see {log}" if log else "its output is above"
    why = "it stopped before its probe session began, or could not write its hand-back"
    return HandBack(
        session, Stored.NOTHING, None, message=f"the child nox handed back nothing: {why} ({_ended(code)}); {see}"
    )


def _ended(code: int) -> str:
    """How the child nox ended, by its exit status: ``exit 3``, or ``killed by SIGKILL`` (a negative status)."""
    if code >= 0:
        return f"exit {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def run(
    noxfile: Path,
    envdir: Path,
    sessions: Sequence[str],
    variables: Mapping[str, str],
    log: Path | None = None,
    arguments: Sequence[str] = (),
) -> int:
    """Run ``sessions`` with ``variables`` added to the environment; their output goes to ``log`` (or through).

    Returns nox's exit code, which says little: a cell that fails is data in its result file, and a
    probe session says how it ended in its hand-back (:func:`run_cells`).
    """
    environ = dict(os.environ, **variables)
    argv = command(noxfile, envdir, sessions, arguments)
    if log is None:
        return tethered.run(argv, env=environ, stdin=subprocess.DEVNULL)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as handle:
        handle.write(f"$ {shlex.join(argv)}\n")
        handle.flush()
        return tethered.run(argv, env=environ, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT)
