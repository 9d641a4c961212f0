"""Run probe sessions in a child nox, so that bisect and verify build cells exactly as `nox -s probe` does.

Same noxfile, same environments folder (``--envdir``), same matrix and
machine: a cell built here is the one a later `nox -s probe` reuses, and its
result file is the one `nox -s report` shows.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import variables

if TYPE_CHECKING:
    import nox

    from ..plan import Cell
    from ..project import Project


def command(noxfile: Path, envdir: Path, sessions: Sequence[str], arguments: Sequence[str] = ()) -> list[str]:
    """The nox command line that runs ``sessions`` (e.g. ``probe(1.12.0)``), with ``arguments`` after ``--``."""
    argv = [sys.executable, "-m", "nox", "--noxfile", str(noxfile), "--envdir", str(envdir), "--sessions", *sessions]
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
) -> int:
    """Run the probe sessions of ``cells`` as the running nox would: same noxfile, envdir, matrix and machine.

    A cell's own release goes in ``TORCHMATRIX_TORCH``, so a release the matrix does not list runs too;
    probes given for this run (a script bisect runs alone) go in ``TORCHMATRIX_PROBES``.
    ``arguments`` go to the probe sessions (``--repeat 5``); ``settings`` are more variables for them.
    """
    chosen = {
        variables.MATRIX.name: str(project.matrix.file),
        variables.MACHINE.name: project.machine,
        variables.TORCH.name: ",".join(str(cell.torch) for cell in cells),
        **(settings or {}),
    }
    if project.given_probes:
        chosen[variables.PROBES.name] = ",".join(project.given_probes)
    envdir = session.cache_dir.parent.resolve()  # cache_dir is <envdir>/.cache, by nox's definition
    return run(noxfile, envdir, [cell.session for cell in cells], chosen, log, arguments)


def run(
    noxfile: Path,
    envdir: Path,
    sessions: Sequence[str],
    variables: Mapping[str, str],
    log: Path | None = None,
    arguments: Sequence[str] = (),
) -> int:
    """Run ``sessions`` with ``variables`` added to the environment; their output goes to ``log`` (or through).

    Returns nox's exit code. A cell that fails is data in its result file, so
    callers read the result file rather than trust the exit code.
    """
    environ = dict(os.environ, **variables)
    argv = command(noxfile, envdir, sessions, arguments)
    if log is None:
        return subprocess.run(argv, env=environ, stdin=subprocess.DEVNULL, check=False).returncode
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as handle:
        handle.write(f"$ {shlex.join(argv)}\n")
        handle.flush()
        return subprocess.run(
            argv, env=environ, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT, check=False
        ).returncode


ERROR_MARKS = ("torchmatrix: error: ", "nox > Session ")
"""How the lines that say why a child nox stopped begin: torchmatrix's own message, then nox's verdict."""


def last_error(log: Path) -> str:
    """The first line of ``log`` that says why the child stopped ('' if none): torchmatrix's message, else nox's."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for mark in ERROR_MARKS:
        found = next((line for line in lines if line.startswith(mark) and "was successful" not in line), None)
        if found is not None:
            return found.removeprefix(mark).strip()
    return ""
