"""torchmatrix's sessions, for the noxfile of any repository: its matrix.yaml, its probes, its results.

    # noxfile.py
    import torchmatrix.noxsessions

    torchmatrix.noxsessions.register(__file__)

gives ``probe`` (one ``probe(<release>)`` per cell), ``probe-installed``,
``report``, ``plan``, ``bisect``, ``verify`` and ``clean``, with every path relative to
the folder of that noxfile: ``matrix.yaml`` (or ``$TORCHMATRIX_MATRIX``),
``probes/``, and the matrix's ``output``. A broken matrix stops only the
sessions that need it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import nox
from nox import _options as nox_options  # nox's parser: what its command line means, asked of nox

from . import cellrun
from .errors import SessionErrors, say
from .project import Loaded, Project
from .sessions import childnox, handback
from .sessions import probe as probe_session  # the others import theirs when they run

__all__ = ["register"]


def register(noxfile: str | Path, root: str | Path | None = None, command: str | None = None) -> Loaded:
    """Declare the sessions for the repository of ``noxfile`` (pass ``__file__``); the project they work on.

    ``root`` is the folder of ``matrix.yaml`` and ``probes/`` when it is not the noxfile's (the noxfile
    of the ``torchmatrix`` command lives in the installed package); ``command`` the command a person
    types to start a session when it is not nox (``torchmatrix``, whose usage lines then read
    ``torchmatrix bisect …``, not ``nox -s bisect -- …``). Also makes ``probe`` what a bare
    ``nox`` runs, and uv the backend (virtualenv where uv is missing); a noxfile that wants otherwise
    sets ``nox.options`` after this call.
    """
    noxfile = Path(noxfile).resolve()
    # A broken matrix stops only the sessions that need it.
    loaded = Loaded.of(Path(root).resolve() if root is not None else noxfile.parent)
    if loaded.error is not None:  # said at once, as `nox -l` and `nox -s "probe(1.9.0)"` run no session to say it
        say(loaded.error)
    hint = python_selection_hint(sys.argv[1:], loaded.found)
    if hint:
        print(f"torchmatrix: {hint}", file=sys.stderr, flush=True)
    errors = SessionErrors()  # a session's mistake fails it alone; the run then ends with the mistake's code
    installer = cellrun.Installer()  # what this nox run learns of the indexes, for all its cells
    ran: list[str] = []  # the probe sessions this nox run ran: the table it queues shows their cells
    repeats: list[int] = []  # the runs per pair they took (`-- --repeat N`): it judges their cells' records by it
    nox.options.sessions = ["probe"]
    nox.options.default_venv_backend = "uv|virtualenv"

    helping = asks_help(sys.argv[1:])  # each probe session would print it: the first does, with no environment

    @errors.fail_session
    def probe(session: nox.Session, cell: str = "") -> None:
        """Install one torch release and run every probe on every device."""
        if helping and ran:
            return
        ran.append(session.name)
        with handback.handing_back(session.name, os.environ) as ending:  # for the bisect or verify that runs it
            request = probe_session.parse(session.posargs, command)
            if request.repeat is not None:
                repeats.append(request.repeat)
            project = with_environments(loaded.project(), session)
            probe_session.run(project, session, cell, installer, ending, request, command)

    # A session per cell; while the matrix is broken, `probe` alone, whose run says why (no placeholder cell).
    found = loaded.found
    cells = (
        probe
        if found is None
        else nox.parametrize(
            ("python", "cell"),
            [(False if helping else python, cell) for python, cell in found.session_parameters()],
            ids=found.session_ids(),
            tags=found.session_tags(),
        )(probe)
    )
    nox.session(
        name="probe", python=None if found else False, reuse_venv=True, download_python="never", allow_parallel=True
    )(cells)

    @nox.session(name="probe-installed", python=False)
    @errors.fail_session
    def probe_installed(session: nox.Session) -> None:
        """Run every probe on every device in Pythons whose torch is installed already: -- PYTHON [PYTHON …]."""
        from .sessions import installed as installed_session

        installed_session.run(loaded.project(), session)

    @nox.session(python=False)
    @errors.fail_session
    def report(session: nox.Session) -> None:
        """Render every machine's results (COMPATIBILITY.md, compatibility.html, …) and print their tables."""
        from .sessions import report as report_session

        project = with_environments(loaded.project(), session)
        report_session.run(project, session, tuple(ran), command, repeats[-1] if repeats else None)

    @nox.session(python=False)
    @errors.fail_session
    def plan(session: nox.Session) -> None:
        """Show each cell's interpreter, requirements, constraints, seed and status, what each release keeps on disk,
        and run nothing."""
        from .sessions import plan as plan_session

        plan_session.run(with_environments(loaded.project(), session), session, command)

    @nox.session(python=False)
    @errors.fail_session
    def bisect(session: nox.Session) -> None:
        """Find the first torch release whose outcome is NEW's: -- (PROBE | --all) --from OLD --to NEW […]."""
        from .sessions import bisect as bisect_session

        bisect_session.run(with_environments(loaded.project(), session), session, noxfile, command)

    @nox.session(python=False)
    @errors.fail_session
    def verify(session: nox.Session) -> None:
        """Check stored results against the matrix's expectations: [-- --run] [--machine NAME]."""
        from .sessions import verify as verify_session

        verify_session.run(with_environments(loaded.project(), session), session, noxfile, command)

    @nox.session(python=False)
    @errors.fail_session
    def clean(session: nox.Session) -> None:
        """Remove releases' environments and the cached wheels no other keeps: -- RELEASE [RELEASE …] [--dry-run]."""
        from .sessions import clean as clean_session

        clean_session.run(loaded.project(), session, command)

    return loaded


def with_environments(project: Project, session: nox.Session) -> Project:
    """``project`` with the folder of the cells' environments of the running nox: the views, verify and bisect
    compare a record's torch build and packages with those of the environment a run would take."""
    return dataclasses.replace(project, envdir=childnox.envdir_of(session))


def nox_command_line(argv: Sequence[str]) -> nox_options.NoxConfig | None:
    """nox's own reading of its command line ``argv`` (its options and the ``posargs`` its sessions get, as nox
    parses them); None where ``argv`` is none of nox's (the noxfile loaded by another program)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return nox_options.options.parse_args(list(argv))
    except SystemExit:
        return None


def asks_help(argv: Sequence[str]) -> bool:
    """Whether nox's ``argv`` passes its sessions ``-h`` or ``--help`` (``nox -s probe -- --help``), as nox reads it."""
    read = nox_command_line(argv)
    return read is not None and any(word in ("-h", "--help") for word in read.posargs or ())


def python_selection_hint(argv: Sequence[str], found: Project | None) -> str:
    """What to type instead of ``nox -p 3.10``, which matches no probe session of ``found`` ('' when not asked, or
    while the matrix is broken, which is said instead).

    A probe session's Python is the interpreter's path (the planner finds Pythons that are not on PATH), and
    nox's ``-p`` compares it with what was typed; each session is tagged with its Python instead. Only a tag or
    a session the matrix has is named: ``-p "probe(1.9.0)"`` is told the session, a Python no cell has its tags.
    """
    read = nox_command_line(argv)
    asked = [python for python in (read.pythons if read is not None else None) or [] if python]
    if not asked or found is None:
        return ""
    tags = list(dict.fromkeys(tag for tags in found.session_tags() for tag in tags if tag.startswith("py")))
    sessions = [f"probe({parameter})" for parameter in found.session_ids()]
    chosen = [f"py{python}" for python in asked if f"py{python}" in tags]
    named = [python for python in asked if python in sessions]
    typed = [*([f"-t {' '.join(chosen)}"] if chosen else []), *([f"-s {' '.join(map(repr, named))}"] if named else [])]
    said = f"the probe sessions' Pythons are paths, which -p {' '.join(asked)} does not match"
    unknown = [python for python in asked if f"py{python}" not in tags and python not in sessions]
    if unknown:
        their = ", ".join(tags) or "none"
        said += f"; no probe session is named or has Python {', '.join(unknown)} (their tags: {their})"
    return f"{said}: nox {' '.join(typed)}" if typed else said
