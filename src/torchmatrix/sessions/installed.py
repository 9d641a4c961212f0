"""`nox -s probe-installed -- PYTHON [PYTHON …]`: run the probes in a torch that is installed already.

Nothing is installed and no index is asked: for a machine that has its own
torch and cannot or should not build environments, such as a GPU box without a
network or a conda environment. Every (probe, device) pair of the matrix runs
in each named Python, as a cell's do; the result is stored as the cell of that
torch release and Python on this machine (``torch-2.11.0-py3.12``), so a
report merges it with the matrix's cells of other machines. A matrix cell of
the same release and Python on the same machine writes the same file: the
later run's result is the one kept.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from .. import results
from ..cellrun import NothingStored, cell_result, progress_log, run_pairs, tally, write
from ..errors import TorchmatrixError, UsageError
from ..planner import cell_id
from ..util import safetext
from ..util.arguments import Parser, typed
from .report import queue_report

if TYPE_CHECKING:
    import nox

    from ..project import Project

SESSION = results.INSTALLED_SESSION
ARGUMENTS = "PYTHON [PYTHON ...]"
USAGE = typed(None, SESSION, ARGUMENTS)


def run(project: Project, session: nox.Session) -> None:
    """Run every (probe, device) pair in each named Python's installed torch and store a result for each."""
    pythons = parse(session.posargs, Path(session.invoked_from))
    project.require_writable(project.machine_dir)
    queue_report(session)
    failed = []
    for python in pythons:
        try:
            path = _probe(project, session, python)
        except TorchmatrixError as error:  # one Python's torch says nothing of the next one's
            session.warn(safetext.for_terminal(str(error)))
            failed.append(python)
            continue
        session.log(safetext.for_terminal(f"{python}: written to {path}", keep_newlines=False))
    if failed:
        raise TorchmatrixError(f"no result for {', '.join(failed)}: see above")


def parse(argv: Sequence[str], invoked_from: Path) -> list[str]:
    """The Pythons named, each an executable file, absolute (a relative path is from ``invoked_from``, where
    nox was started, and a bare name is looked up on PATH); a UsageError where one is not."""
    found = []
    for python in arguments_parser().parse(argv).pythons:
        path = str(invoked_from / python) if os.sep in python else shutil.which(python)
        if path is None or not (os.path.isfile(path) and os.access(path, os.X_OK)):
            looked = f"looked at {path}" if path else "not on PATH"
            raise UsageError(
                f"{python}: not an executable file ({looked}); name a Python, e.g. /opt/torch/.venv/bin/python3"
            )
        found.append(path)
    return found


def arguments_parser(command: str | None = None) -> Parser:
    """The parser of the session's arguments, whose usage line is the ``command``'s that starts it (nox's: None)."""
    does = "Run the probes in the torch installed in each PYTHON, installing nothing."
    parser = Parser(typed(command, SESSION, ARGUMENTS), does)
    parser.add_argument("pythons", nargs="+", metavar="PYTHON", help="a Python whose environment has torch")
    return parser


def _probe(project: Project, session: nox.Session, python: str) -> Path:
    started = results.now_iso()
    pairs = project.pairs()
    session.log(
        safetext.for_terminal(
            f"{python}: running {len(pairs)} (probe, device) pairs in its installed torch", keep_newlines=False
        )
    )
    repeat = project.matrix.repeat
    progress = progress_log(session.log, len(pairs), repeat)
    seen = project.pair_environment(python)
    workdir = project.matrix.run_from
    timeout, known = project.matrix.timeout, project.torch_releases()
    cell_run = run_pairs(
        python, pairs, timeout, repeat, progress, None, seen,
        workdir=workdir, torch_releases=known, own_output=project.matrix.output,
    )  # fmt: skip
    if cell_run.import_failure:
        raise TorchmatrixError(f"{python}: torch does not import: {cell_run.import_failure}")
    environment = cell_run.environment
    try:
        torch = Version(str(environment.get("torch"))).public  # 2.11.0+cu130 is release 2.11.0's row
    except InvalidVersion:
        raise TorchmatrixError(f"{python}: its torch reports no release version: {environment.get('torch')}") from None
    python_minor = ".".join(str(environment.get("python", "")).split(".")[:2]) or None
    records = [project.identified(project.installed_inputs(python), record) for record in cell_run.records]
    result = cell_result(
        project,
        started,
        cell_id=cell_id(Version(torch), python_minor),
        torch=torch,
        python=python_minor,
        python_request=None,
        session=SESSION,
        records=tuple(records),
        environment=environment,
        inputs={"installed_python": python, "repeat": repeat},
    )
    session.log(f"{result.cell_id}: {tally(records)}")
    path = write(project, result, pairs)
    if isinstance(path, NothingStored):
        raise TorchmatrixError(path.message)
    return path
