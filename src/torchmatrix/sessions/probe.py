"""`nox -s "probe(<release>)"`: install one torch release, run its (probe, device) pairs, store their records.

Only the pairs whose stored record no longer stands for a run are run (see
:mod:`torchmatrix.freshness`), unless the arguments say ``--force``. What is
stored says exactly what ran: the environment is rebuilt when another Python
made it or an install into it was stopped halfway (:mod:`torchmatrix.cellenv`),
a reused environment whose install or ``import torch`` fails is rebuilt once
before anything is concluded, and the worker's own report of its Python and
torch must match the cell's, or nothing is stored.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nox.command import CommandFailed
from nox.virtualenv import VirtualEnv
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .. import atomicfile, cellenv, core, freshness, releases, results, runner, safetext, verify
from ..arguments import Parser, repeat_count, typed
from ..core import Outcome
from ..identity import CONSTRAINTS, PACKAGES, TORCH_BUILD, VENV_SEED
from ..plan import Cell
from ..results import CellResult
from ..tee import Tee
from .common import cell_result, notify_report, progress_log, run_pairs, tally, write_result
from .handback import Ending

if TYPE_CHECKING:
    import nox

    from ..project import Project

PYCACHE_FOLDER = ".pycache"


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
    usage = USAGE if command is None else typed(command, "probe", f"[SCRIPT …] [--torch V[,V…]] {ARGUMENTS}")
    parser = Parser(usage, "Run the probes of a cell whose records are out of date.")
    parser.add_argument("--force", action="store_true", help="re-measure every pair, up to date or not")
    parser.add_argument("--repeat", type=repeat_count, metavar="N", help="run each pair N times")
    parser.add_argument(
        "--strict", action="store_true", help="fail on a fail, error, crash or timeout no expect: entry allows"
    )
    args = parser.parse_args(list(argv))
    return ProbeRequest(args.force, args.repeat, args.strict)


def run(project: Project, session: nox.Session, parameter: str, ending: Ending, command: str | None = None) -> None:
    """Install the cell's torch, run the pairs whose records are stale (all with ``--force``), store them.

    ``ending`` hears whether the result was written or found up to date, for the session's hand-back;
    ``command`` is the one that started it when it is not nox (``torchmatrix``), for a mistake's usage line.
    """
    options = parse(session.posargs, command)
    force = options.force
    if options.repeat is not None:
        project = project.with_repeat(options.repeat)
    project.refuse_unlisted()  # a release that is no release stops the run before any cell of it
    notify_report(session)
    cell = project.cell(parameter)
    session.log(f"cell {project.cells.index(cell) + 1} of {len(project.cells)}: {safetext.for_terminal(cell.id)}")
    if cell.interpreter is None and cell.outcome is None:
        session.error(safetext.for_terminal(cell.hint))  # the plan could not choose a Python: nothing to run or store
    project.require_writable(project.machine_dir)
    if cell.outcome:  # no wheel, no interpreter: stored as such, with no environment to take turns with
        _store_outcome(project, session, cell, ending, _stored(project, session, cell), results.now_iso(),
                       cell.outcome, cell.hint)  # fmt: skip
    env = Path(session.virtualenv.location)
    # Two runs of one cell at once share its environment: the second waits, then finds what the first stored.
    with atomicfile.locked(env.parent, f".{env.name}.lock"):
        _measure(project, session, cell, ending, env, force, options.strict or project.matrix.strict)


def _measure(
    project: Project, session: nox.Session, cell: Cell, ending: Ending, env: Path, force: bool, strict: bool
) -> None:
    """Make ``env`` sound, install the cell's torch, run the pairs whose records are stale (all with ``force``)."""
    started = results.now_iso()
    stored = _stored(project, session, cell)
    for note in project.notes:  # the index read offline, a find-links folder that is not there, …
        session.log(safetext.for_terminal(note))
    inputs = project.inputs(cell)
    _ensure_sound(session, cell, env, inputs["index"], _asked(inputs))
    pairs = project.pairs()
    if force:
        todo = freshness.Stale(tuple(pairs), f"{freshness.FORCE}: re-measuring every pair")
    else:
        built = {TORCH_BUILD: cellenv.built_torch(env), PACKAGES: cellenv.package_set(env)}
        todo = freshness.stale(stored, pairs, {**project.inputs(cell), **built})
    if not todo.pairs:
        assert stored is not None  # a cell with nothing stored has every pair to run
        ending.up_to_date(project.result_file(cell), stored.finished_at)
        if strict:
            _gate(project, session, stored)
        session.skip(safetext.for_terminal(f"{cell.id}: {todo.reason}", keep_newlines=False))  # it names files read
    session.log(safetext.for_terminal(f"{cell.id}: running: {todo.reason}", keep_newlines=False))
    cell_run, inputs = _install_and_run(project, session, cell, ending, env, stored, started, todo.pairs)
    problem = mislabelled(cell, cell_run.environment)
    if problem:
        session.error(safetext.for_terminal(f"{cell.id}: {problem}; nothing is stored"))
    records = [project.identified(inputs, record) for record in cell_run.records]
    packages = cellenv.installed_versions(env, project.installed_names(cell))
    environment = {**cell_run.environment, "packages": packages} if packages else cell_run.environment
    result = _cell_result(project, cell, started, records=records, environment=environment, inputs=inputs)
    path = write_result(project, session, result)
    ending.written(path, result.finished_at)
    session.log(safetext.for_terminal(f"{cell.id}: {tally(records)}; written to {path}", keep_newlines=False))
    if strict:
        _gate(project, session, result)


def _gate(project: Project, session: nox.Session, result: CellResult) -> None:
    """Fail the session on each outcome of ``result`` that no expectation allows (it is stored either way).

    Only the records of the matrix's probes count: a result file also keeps what a bisect or another matrix
    stored in that cell (a script, a test asked once), which is no part of this build."""
    ours = tuple(record for record in result.records if project.owner(record.probe) is not None)
    wrong = verify.not_allowed(dataclasses.replace(result, records=ours), project.matrix.expect)
    if wrong:
        allowed = "an expect: entry of its outcome in the matrix allows one"
        said = f"{result.cell_id}: strict: {len(wrong)} outcome(s) not allowed ({allowed}):\n" + "\n".join(wrong)
        session.error(safetext.for_terminal(said))


def _stored(project: Project, session: nox.Session, cell: Cell) -> CellResult | None:
    """The cell's stored result on this machine; None when there is none or it cannot be read (said in the log)."""
    path = project.result_file(cell)
    if not path.exists():
        return None
    try:
        return results.read(path)
    except results.NewerSchema as exc:
        session.error(
            safetext.for_terminal(f"{cell.id}: {path} holds a newer torchmatrix's result ({exc}), kept as it is")
        )
    except (OSError, ValueError) as exc:
        session.warn(safetext.for_terminal(f"{cell.id}: the stored result cannot be read ({exc}); it will be replaced"))
        return None


def _ensure_sound(session: nox.Session, cell: Cell, env: Path, source: Any, asked: dict[str, object]) -> None:
    """Rebuild ``env`` if another Python made it, its torch came from elsewhere than ``source``, it was built for
    other packages than ``asked`` (it may hold some a new environment would not), or an install into it was
    stopped halfway."""
    assert cell.interpreter is not None
    mismatch = (
        cellenv.interpreter_mismatch(env, cell.interpreter)
        or cellenv.source_mismatch(env, source)
        or cellenv.asked_mismatch(env, asked)
    )
    if mismatch:
        _rebuild(session, env, mismatch)
    elif cellenv.half_built(env):
        _rebuild(session, env, "its last install did not finish, or torch never imported there")


def _rebuild(session: nox.Session, env: Path, why: str) -> None:
    session.log(safetext.for_terminal(f"rebuilding {env}: {why}"))
    venv = session.virtualenv
    assert isinstance(venv, VirtualEnv)  # a cell that runs always has one: nox made it for the cell's Python
    venv.reuse_existing = False
    venv.create()


def _install_and_run(
    project: Project,
    session: nox.Session,
    cell: Cell,
    ending: Ending,
    env: Path,
    stored: CellResult | None,
    started: str,
    pairs: Sequence[core.Pair],
) -> tuple[runner.CellRun, dict[str, object]]:
    """Install the cell's requirements and run ``pairs``: the run and the inputs it was made from.

    An install or ``import torch`` that fails in an environment that held a
    torch already is tried once more in a rebuilt one: the old install, not the
    release, may be what is broken. A failure in a new environment is the
    cell's ``install-error``.
    """
    for rebuilt in (False, True):
        reused = not rebuilt and cellenv.holds_torch(env)
        cellenv.unmark_built(env)  # the install may stop halfway: until torch imports, nothing vouches for it
        failure = _install(project, session, cell)
        inputs = project.inputs(cell)
        inputs.update({TORCH_BUILD: cellenv.torch_build(env), PACKAGES: cellenv.package_set(env)})
        if not failure:
            repeat = project.matrix.repeat
            progress = _marking_built(env, inputs, progress_log(session, len(pairs), repeat))
            timeout, python = project.matrix.timeout, _venv_python(session)
            seen = project.pair_environment(python)
            workdir = project.matrix.run_from
            cell_run = run_pairs(python, pairs, timeout, repeat, progress, pycache_prefix(env), seen, workdir=workdir)
            if not cell_run.import_failure:
                return cell_run, inputs
            failure = f"torch does not import: {cell_run.import_failure}"
        if not reused:
            _store_outcome(project, session, cell, ending, stored, started, Outcome.INSTALL_ERROR, failure, inputs)
        _rebuild(session, env, f"in it, {safetext.terminal_line(failure)}")
    raise AssertionError("unreachable: the second try stores its failure")


def _asked(inputs: dict[str, object]) -> dict[str, object]:
    """What an environment is asked to hold, of a cell's ``inputs``: its requirements, constraints and seed."""
    return {key: inputs.get(key) for key in ("requirements", CONSTRAINTS, VENV_SEED)}


def _marking_built(env: Path, inputs: dict[str, Any], listener: runner.Listener) -> runner.Listener:
    """``listener``, and the environment marked built from ``inputs`` when its first pair starts: torch imported."""
    marked = False

    def listen(event: str, pair: core.Pair, record: core.Record | None) -> None:
        nonlocal marked
        if event == "start" and not marked:
            cellenv.mark_built(env, inputs["index"], _asked(inputs))
            marked = True
        listener(event, pair, record)

    return listen


def mislabelled(cell: Cell, environment: dict[str, object]) -> str:
    """Why the worker's own report of its Python and torch is not the cell's; '' when it is."""
    assert cell.interpreter is not None
    python, torch = str(environment.get("python")), str(environment.get("torch"))
    wanted = ".".join(map(str, cell.interpreter.version))
    if python != wanted:
        return f"the worker ran Python {python}, but the cell's is {wanted}"
    try:
        matches = SpecifierSet(f"=={cell.torch}").contains(Version(torch), prereleases=True)
    except InvalidVersion:
        matches = False
    return "" if matches else f"the worker imported torch {torch}, but the cell is torch {cell.torch}"


_dead_indexes: set[str] = set()
"""Index URLs this nox run found dead (an install failed and the index did not answer): the state of one run,
not of the project, whose later cells then install from uv's cache at once."""


def _install(project: Project, session: nox.Session, cell: Cell) -> str:
    """Install the cell's requirements; '' when done, else why not (a summary, then the installer's words).

    When the index cannot be reached, uv installs from its cache alone (``--offline``): at once if the
    listing could not be fetched, else after a failed install, if the index does not answer then.
    """
    failure = _seed(session, cell)
    if failure:
        return failure
    uv = session.venv_backend == "uv"
    index = project.matrix.index_url
    offline = uv and (project.offline or index in _dead_indexes)
    log = _run_installer(project, session, cell, offline)
    if log is not None and uv and not offline and not releases.reachable(index):
        _dead_indexes.add(index)
        session.log(f"cannot reach {index}: installing from uv's cache alone (--offline)")
        offline = True
        log = _run_installer(project, session, cell, offline)
    if log is None:
        return ""
    wanted = " ".join(project.install_requirements(cell))
    bounded = f" (constraints: {' '.join(cell.constraints)})" if cell.constraints else ""
    lines = [f"installing {wanted}{bounded}{' offline' if offline else ''} failed: {_error_of(log)}"]
    if offline:
        lines.append(
            f"hint: {index} cannot be reached and uv's cache lacks something this cell needs; "
            "run once with a network to fill the cache, or put the wheels in a find_links folder"
        )
    asking = [f"{probe.name} ({', '.join(probe.requires)})" for probe in project.matrix.probes if probe.requires]
    if asking:  # a script's PEP 723 block is easy to forget when a requirement cannot be found
        lines.append(f"note: of these, the probes ask for {'; '.join(asking)}")
    return "\n".join([*lines, _last_lines(log)])


def _run_installer(project: Project, session: nox.Session, cell: Cell, offline: bool) -> str | None:
    """Run the install; None when it worked, else the installer's output."""
    options = project.installer_options()
    if offline:
        options.append("--offline")
    if cell.constraints:  # they bound what is installed, and add nothing
        options += ["--constraint", str(cellenv.constraints_file(Path(session.virtualenv.location), cell.constraints))]
    # The seed's packages by name: the installer keeps the seeded versions, unless a constraint rules one out.
    seeded = [Requirement(requirement).name for requirement in cell.seed]
    requirements = list(dict.fromkeys([*project.install_requirements(cell), *seeded]))
    # Off a terminal, a long download would otherwise print nothing for minutes: a line now and then says it runs.
    tee = Tee(keep=40, doing=f"installing {' '.join(requirements)}")
    try:
        with tee as output:
            session.install(*requirements, *options, silent=False, stdout=output, stderr=subprocess.STDOUT)
    except CommandFailed as exc:  # its message is the exit code only; the installer's output says why
        return tee.tail or str(exc)
    return None


def _seed(session: nox.Session, cell: Cell) -> str:
    """Seed a new environment as ``python -m venv`` does, with its interpreter's ensurepip; '' when done, else why not.

    An environment that holds the seed's packages already (a reused one, or one virtualenv made and seeded) is left
    as it is; the seed's packages are then installed with the rest, which a constraint bounds.
    """
    missing = cellenv.unseeded(Path(session.virtualenv.location), cell.seed)
    if not missing:
        return ""
    try:
        session.run(_venv_python(session), *cellenv.SEED_ARGUMENTS, silent=True)
    except CommandFailed as exc:
        return f"seeding the environment with {', '.join(missing)} (python -m ensurepip) failed: {exc}"
    return ""


def _store_outcome(
    project: Project,
    session: nox.Session,
    cell: Cell,
    ending: Ending,
    stored: CellResult | None,
    started: str,
    outcome: Outcome,
    message: str,
    inputs: dict[str, object] | None = None,
) -> None:
    """End the session with a cell outcome: stored, unless measured records are stored, which it never replaces."""
    said = safetext.for_terminal(f"{outcome.value}: {message}")
    if stored is not None and stored.records:
        said += f"\n(the records stored at {stored.finished_at} are kept)"
    else:
        made_from = inputs or project.inputs(cell)
        result = _cell_result(project, cell, started, outcome=outcome, message=message, inputs=made_from)
        ending.written(write_result(project, session, result), result.finished_at)
    if outcome is Outcome.INSTALL_ERROR:
        session.error(said)
    session.skip(said)


def _cell_result(project: Project, cell: Cell, started: str, **fields: object) -> CellResult:
    """The result of ``cell`` (its inputs, unless ``fields`` say otherwise)."""
    labels = {"cell_id": cell.id, "torch": str(cell.torch), "python": cell.python,
              "python_request": cell.python_request, "session": cell.session}  # fmt: skip
    return cell_result(project, started, **{**labels, "inputs": project.inputs(cell), **fields})


def pycache_prefix(env: Path) -> Path:
    """Where the cells' Pythons keep compiled bytecode: beside the environments, so a rebuilt one finds it."""
    return env.parent / PYCACHE_FOLDER


def _venv_python(session: nox.Session) -> str:
    name = "python.exe" if sys.platform == "win32" else "python"
    return str(Path(session.bin) / name)


def _error_of(log: str) -> str:
    """The installer's own summary of what went wrong: its first ``error:`` line, else its last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if line.lower().startswith("error:"):
            return line[len("error:") :].strip()
    return lines[-1] if lines else "no output"


def _last_lines(text: str, count: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-count:])
