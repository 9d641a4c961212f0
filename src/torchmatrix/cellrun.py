"""One cell run, as a value: install the cell's torch, run its (probe, device) pairs whose records are stale, store
them, and say what happened.

Only the pairs whose stored record no longer stands for a run are run (see
:mod:`torchmatrix.freshness`), unless the request says ``force``. What is
stored says exactly what ran: the environment is rebuilt when another Python
made it or an install into it was stopped halfway (:mod:`torchmatrix.environment.cellenv`),
a reused environment whose install or ``import torch`` fails is rebuilt once
before anything is concluded, and the worker's own report of its Python and
torch must match the cell's, or nothing is stored.

Nothing here knows nox: the tool that made the cell's environment lends it as
a :class:`CellEnvironment`, and :func:`run_cell` returns one of the values of
:data:`Ended`, which the probe session (:mod:`torchmatrix.sessions.probe`)
turns into nox's words: a success, a skip or a failure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from . import core, expectations, freshness, identity, results
from .core import Outcome
from .environment import cellenv
from .index import releases
from .planner import Cell
from .project import Project, environment_asks
from .results import CellResult
from .util import safetext
from .util.tee import Tee
from .worker import repeats, runner


class CellEnvironment(Protocol):
    """What a cell run asks of the tool that made the cell's environment (nox's session)."""

    @property
    def location(self) -> Path:
        """The environment's folder."""

    @property
    def python(self) -> str:
        """Its Python."""

    @property
    def uses_uv(self) -> bool:
        """Whether its installer is uv, which can install from its cache alone."""

    def log(self, line: str) -> None:
        """Say ``line`` (escaped already) as the run goes."""

    def warn(self, line: str) -> None:
        """Say ``line`` (escaped already) as a warning."""

    def install(self, arguments: Sequence[str], output: IO[str]) -> bool:
        """Install ``arguments`` (requirements and the installer's options), its output to ``output``; whether
        the installer succeeded."""

    def run(self, arguments: Sequence[str]) -> str:
        """Run the environment's Python with ``arguments``, quietly; '' when it succeeded, else why not."""

    def rebuild(self) -> None:
        """Make the environment anew, empty."""


@dataclass(frozen=True)
class CellRequest:
    """What a cell run is asked, besides its cell."""

    force: bool = False
    """Re-measure every pair, up to date or not."""
    strict: bool = False
    """Fail on an outcome no expectation of the matrix allows (the result is stored either way)."""


@dataclass(frozen=True)
class Written:
    """The pairs ran and their records were stored in ``path``."""

    path: Path
    result: CellResult
    not_allowed: tuple[str, ...] = ()
    """Under ``strict``, the outcomes of the matrix's probes that no expectation allows."""


@dataclass(frozen=True)
class UpToDate:
    """Every stored record of the cell's pairs stands for a run now: nothing ran."""

    path: Path
    result: CellResult
    reason: str
    not_allowed: tuple[str, ...] = ()


@dataclass(frozen=True)
class CellOutcome:
    """The cell has an outcome of its own (``no-wheel``, ``install-error``…): stored in ``path``, unless records
    measured before are kept there (``path`` None)."""

    outcome: Outcome
    message: str
    path: Path | None
    finished_at: str = ""
    not_allowed: tuple[str, ...] = ()
    """Under ``strict``, the outcome, where no expectation allows it (``install-error``, ``no-interpreter``)."""


@dataclass(frozen=True)
class NothingStored:
    """The run stopped before anything could be stored, for ``message``'s reason."""

    message: str


Ended = Written | UpToDate | CellOutcome | NothingStored
"""What one cell run did."""


def run_cell(project: Project, cell: Cell, env: CellEnvironment, installer: Installer, request: CellRequest) -> Ended:
    """Run ``cell`` in ``env``: what it stored, or why it stored nothing."""
    if cell.interpreter is None and cell.outcome is None:
        return NothingStored(cell.hint)  # the plan could not choose a Python: nothing to run or store
    started = results.now_iso()
    if cell.outcome:  # no wheel, no interpreter: stored as such, with no environment to take turns with
        stored = _stored(project, cell, env)
        if isinstance(stored, NothingStored):
            return stored
        return _store_outcome(project, cell, request, stored, started, cell.outcome, cell.hint)
    # Two runs of one cell at once share its environment: the second waits, then finds what the first stored.
    with cellenv.locked(env.location):
        return _measure(project, cell, env, installer, request, started, _stored(project, cell, env))


def _measure(
    project: Project,
    cell: Cell,
    env: CellEnvironment,
    installer: Installer,
    request: CellRequest,
    started: str,
    stored: CellResult | None | NothingStored,
) -> Ended:
    """Make ``env`` sound, install the cell's torch, run the pairs whose records are stale (all with ``force``)."""
    if isinstance(stored, NothingStored):
        return stored
    for note in project.notes:  # the index read offline, a find-links folder that is not there, …
        env.log(safetext.for_terminal(note))
    inputs = project.inputs(cell)
    _ensure_sound(env, cell, inputs["index"], environment_asks(inputs))
    pairs = project.pairs()
    if request.force:
        todo = freshness.ToRun(tuple(pairs), f"{freshness.FORCE}: re-measuring every pair")
    else:
        todo = freshness.stale(stored, pairs, project.inputs(cell, env.location), project.hardware)
    if not todo.pairs:
        assert stored is not None  # a cell with nothing stored has every pair to run
        return UpToDate(project.result_file(cell), stored, todo.reason, _gate(project, stored, request))
    env.log(safetext.for_terminal(f"{cell.id}: running: {todo.reason}", keep_newlines=False))
    ran = _install_and_run(project, cell, env, installer, request, stored, started, todo.pairs)
    if not isinstance(ran, tuple):
        return ran
    cell_run, inputs = ran
    problem = worker_mismatch(cell, cell_run.environment)
    if problem:
        return NothingStored(f"{cell.id}: {problem}; nothing is stored")
    records = [project.identified(inputs, record) for record in cell_run.records]
    packages = cellenv.installed_versions(env.location, project.installed_names(cell))
    environment = {**cell_run.environment, "packages": packages} if packages else cell_run.environment
    result = _cell_result(project, cell, started, records=records, environment=environment, inputs=inputs)
    path = write(project, result, todo.pairs)
    if isinstance(path, NothingStored):
        return path
    env.log(safetext.for_terminal(f"{cell.id}: {tally(records)}; written to {path}", keep_newlines=False))
    return Written(path, result, _gate(project, result, request))


def _gate(project: Project, result: CellResult, request: CellRequest) -> tuple[str, ...]:
    """Under ``strict``, each outcome of ``result`` that no expectation allows (it is stored either way).

    Only the records of the matrix's probes count: a result file also keeps what a bisect or another matrix
    stored in that cell (a script, a test asked once), which is no part of this build."""
    if not (request.strict or project.matrix.strict):
        return ()
    ours = tuple(record for record in result.records if project.owner(record.probe) is not None)
    return tuple(expectations.not_allowed(dataclasses.replace(result, records=ours), project.matrix.expect))


def _stored(project: Project, cell: Cell, env: CellEnvironment) -> CellResult | None | NothingStored:
    """The cell's stored result on this machine; None when there is none or it cannot be read (said as a warning);
    a newer torchmatrix's, which nothing may replace, stops the run."""
    path = project.result_file(cell)
    if not path.exists():
        return None
    try:
        return results.read(path)
    except results.NewerSchema as exc:
        return NothingStored(f"{cell.id}: {path} holds a newer torchmatrix's result ({exc}), kept as it is")
    except (OSError, ValueError) as exc:
        said = f"{cell.id}: the stored result cannot be read ({exc}); {_set_aside(path)}, and this run's replaces it"
        env.warn(safetext.for_terminal(said))
        return None


def _set_aside(path: Path) -> str:
    """Keep an unreadable result file under a name no reader takes for a result (``….json.unreadable-<time>``), so
    that the records it may still hold, of probes this run does not run, are not lost; what became of it."""
    kept = path.with_name(f"{path.name}.unreadable-{datetime.datetime.now(datetime.timezone.utc):%Y%m%dT%H%M%SZ}")
    try:
        path.replace(kept)
    except OSError as exc:
        return f"it could not be kept aside ({exc})"
    return f"kept as {kept}"


def _ensure_sound(env: CellEnvironment, cell: Cell, source: Any, asked: dict[str, object]) -> None:
    """Rebuild ``env`` if another Python made it, its torch came from elsewhere than ``source``, it was built for
    other packages than ``asked`` (it may hold some a new environment would not), or an install into it was
    stopped halfway."""
    assert cell.interpreter is not None
    mismatch = (
        cellenv.interpreter_mismatch(env.location, cell.interpreter)
        or cellenv.source_mismatch(env.location, source)
        or cellenv.asked_mismatch(env.location, asked)
    )
    if mismatch:
        _rebuild(env, mismatch)
    elif cellenv.half_built(env.location):
        _rebuild(env, "its last install did not finish, or torch never imported there")


def _ensure_whole(env: CellEnvironment) -> None:
    """Rebuild ``env`` where a file its packages installed is gone: a removal of it stopped halfway (``nox
    --reuse-venv=never`` clears it before torchmatrix's code runs) leaves the marker over what is left, which the
    installer, reading each package's metadata alone, takes for installed. Asked only where pairs are to run: it
    reads every package's ``RECORD``."""
    gone = cellenv.missing_file(env.location)
    if gone:
        _rebuild(env, f"{gone}, which its packages installed, is gone: a removal of it stopped halfway")


def _rebuild(env: CellEnvironment, why: str) -> None:
    """Make ``env`` anew, its marker removed first: the removal of what it held may stop halfway (Ctrl-C, a file
    that cannot be removed), and what is left of it is then no environment that counts as built."""
    env.log(safetext.for_terminal(f"rebuilding {env.location}: {why}"))
    cellenv.unmark_built(env.location)
    env.rebuild()


def _install_and_run(
    project: Project,
    cell: Cell,
    env: CellEnvironment,
    installer: Installer,
    request: CellRequest,
    stored: CellResult | None,
    started: str,
    pairs: Sequence[core.Pair],
) -> tuple[runner.CellRun, dict[str, object]] | CellOutcome | NothingStored:
    """Install the cell's requirements and run ``pairs``: the run and the inputs it was made from.

    An install or ``import torch`` that fails in an environment that held a
    torch already is tried once more in a rebuilt one: the old install, not the
    release, may be what is broken. A failure in a new environment is the
    cell's ``install-error``.
    """
    _ensure_whole(env)
    for rebuilt in (False, True):
        reused = not rebuilt and cellenv.holds_torch(env.location)
        cellenv.unmark_built(env.location)  # the install may stop halfway: until torch imports, nothing vouches for it
        failure = installer.install(project, cell, env)
        inputs = project.inputs(cell)
        if not failure:
            repeat = project.matrix.repeat
            progress = _marking_built(env.location, inputs, progress_log(env.log, len(pairs), repeat))
            seen, workdir = project.pair_environment(env.python), project.matrix.run_from
            timeout, prefix = project.matrix.timeout, cellenv.pycache_prefix(env.location)
            cell_run = run_pairs(
                env.python,
                pairs,
                timeout,
                repeat,
                progress,
                prefix,
                seen,
                workdir=workdir,
                torch_releases=project.torch_releases(),
                own_output=project.matrix.output,
            )
            if not cell_run.import_failure:  # torch imported: what the environment holds is what ran
                return cell_run, project.inputs(cell, env.location)
            failure = f"torch does not import: {cell_run.import_failure}"
        if not reused:
            return _store_outcome(project, cell, request, stored, started, Outcome.INSTALL_ERROR, failure, inputs)
        _rebuild(env, f"in it, {safetext.terminal_line(failure)}")
    raise AssertionError("unreachable: the second try is in a new environment, which stores its failure")


def _marking_built(env: Path, inputs: dict[str, Any], listener: runner.Listener) -> runner.Listener:
    """``listener``, and the environment marked built from ``inputs`` when its first pair starts: torch imported."""
    marked = False

    def listen(event: str, pair: core.Pair, record: core.Record | None) -> None:
        nonlocal marked
        if event == "start" and not marked:
            cellenv.mark_built(env, inputs["index"], environment_asks(inputs))
            marked = True
        listener(event, pair, record)

    return listen


def worker_mismatch(cell: Cell, environment: dict[str, object]) -> str:
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


class Installer:
    """Installs a cell's requirements into its environment, and keeps what one nox run learns of the indexes.

    When the index cannot be reached, uv installs from its cache alone (``--offline``): at once if the listing
    could not be fetched, else after a failed install, if the index does not answer then; an index found dead
    is not asked again in this run, whose later cells then install from uv's cache at once.
    """

    def __init__(self) -> None:
        self._dead: set[str] = set()

    def install(self, project: Project, cell: Cell, env: CellEnvironment) -> str:
        """Install the cell's requirements; '' when done, else why not (a summary, then the installer's words)."""
        failure = _seed(env, cell)
        if failure:
            return failure
        index = project.matrix.index_url
        offline = env.uses_uv and (project.offline or index in self._dead)
        log = _run_installer(project, cell, env, offline)
        if log is not None and env.uses_uv and not offline and not releases.reachable(index):
            self._dead.add(index)
            env.log(f"cannot reach {index}: installing from uv's cache alone (--offline)")
            offline = True
            log = _run_installer(project, cell, env, offline)
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


def _run_installer(project: Project, cell: Cell, env: CellEnvironment, offline: bool) -> str | None:
    """Run the install; None when it worked, else the installer's output."""
    options = project.installer_options()
    if offline:
        options.append("--offline")
    if cell.constraints:  # they bound what is installed, and add nothing
        options += ["--constraint", str(cellenv.constraints_file(env.location, cell.constraints))]
    # The seed's packages by name: the installer keeps the seeded versions, unless a constraint rules one out.
    seeded = [Requirement(requirement).name for requirement in cell.seed]
    requirements = list(dict.fromkeys([*project.install_requirements(cell), *seeded]))
    # Off a terminal, a long download would otherwise print nothing for minutes: a line now and then says it runs.
    tee = Tee(keep=40, doing=f"installing {' '.join(requirements)}")
    with tee as output:
        installed = env.install([*requirements, *options], output)
    return None if installed else tee.tail or "the installer failed and printed nothing"


def _seed(env: CellEnvironment, cell: Cell) -> str:
    """Seed a new environment as ``python -m venv`` does, with its interpreter's ensurepip; '' when done, else why not.

    An environment that holds the seed's packages already (a reused one, or one virtualenv made and seeded) is left
    as it is; the seed's packages are then installed with the rest, which a constraint bounds. One uv made for an
    interpreter without ensurepip is left unseeded, and the log says why (virtualenv seeds the environments it
    makes its own way).
    """
    if env.uses_uv and cell.interpreter and cell.interpreter.why_unseeded:
        env.log(safetext.for_terminal(cell.interpreter.why_unseeded))
    missing = cellenv.unseeded(env.location, cell.seed)
    if not missing:
        return ""
    failure = env.run(cellenv.SEED_ARGUMENTS)
    return (
        f"seeding the environment with {', '.join(missing)} (python -m ensurepip) failed: {failure}" if failure else ""
    )


def _store_outcome(
    project: Project,
    cell: Cell,
    request: CellRequest,
    stored: CellResult | None,
    started: str,
    outcome: Outcome,
    message: str,
    inputs: dict[str, object] | None = None,
) -> CellOutcome | NothingStored:
    """The cell's own outcome, stored, unless measured records are stored, which it never replaces."""
    if stored is not None and stored.records:
        return CellOutcome(outcome, f"{message}\n(the records stored at {stored.finished_at} are kept)", None)
    made_from = inputs or project.inputs(cell)
    result = _cell_result(project, cell, started, outcome=outcome, message=message, inputs=made_from)
    path = write(project, result)
    if isinstance(path, NothingStored):
        return path
    return CellOutcome(outcome, message, path, result.finished_at, _gate(project, result, request))


def _cell_result(project: Project, cell: Cell, started: str, **fields: object) -> CellResult:
    """The result of ``cell`` (its inputs, unless ``fields`` say otherwise), with the rules of its constraints."""
    labels = {"cell_id": cell.id, "torch": str(cell.torch), "python": cell.python,
              "python_request": cell.python_request, "session": cell.session,
              "constrained_by": cell.constrained_by}  # fmt: skip
    return cell_result(project, started, **{**labels, "inputs": project.inputs(cell), **fields})


def _error_of(log: str) -> str:
    """The installer's own summary of what went wrong: its first ``error:`` line, else its last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if line.lower().startswith("error:"):
            return line[len("error:") :].strip()
    return lines[-1] if lines else "no output"


def _last_lines(text: str, count: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-count:])


# --- what the sessions that run probes share ---------------------------------------------


def run_pairs(
    python: str,
    pairs: Sequence[core.Pair],
    timeout: float,
    repeat: int,
    listener: runner.Listener,
    pycache_prefix: Path | None = None,
    variables_seen: dict[str, str] | None = None,
    *,
    workdir: Path,
    torch_releases: Sequence[str] = (),
    own_output: Path | None = None,
) -> runner.CellRun:
    """Run each pair ``repeat`` times in the environment ``variables_seen``, from the folder ``workdir``; one record
    per pair (:mod:`.repeats`).

    Each run of a pair is in a round of its own, every pair once, and each round in workers of its own: two runs of
    one pair share no process, not even the worker the pair's process is forked from, so that what differs from one
    process to the next (a pid, an address, an ``id()``) differs between them, as between two runs by hand; and
    each round has a hash seed of its own (``PYTHONHASHSEED``: the first :data:`identity.SEED`, then one more each
    round), so that an order that follows strings' hashes (a set printed) differs between them too, as it does
    between two processes by hand. The generators' seed is one for all.
    The listener hears ("done", last pair, None) at the end, besides the runner's events.
    """
    made = _made_before_the_pairs(own_output)
    try:
        return _run_rounds(python, pairs, timeout, repeat, listener, pycache_prefix, variables_seen, workdir,
                           torch_releases, own_output)  # fmt: skip
    except BaseException:  # Ctrl-C: a cell that stores nothing leaves nothing, not even the folder it made
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only while empty
        raise


def _made_before_the_pairs(output: Path | None) -> list[Path]:
    """Make torchmatrix's own output folder before any pair runs, and return the folders made, outermost first.

    The run writes its results there after the pairs: a pair that listed a folder holding it (the folder it runs
    from, which torch's own import lists too, looking for its backends) would find it there in every later run but
    the first, whose record would then be stale at once, and run again. Where it cannot be made, writing the result
    says why."""
    if output is None:
        return []
    missing = [folder for folder in (output, *output.parents) if not folder.exists()]
    with contextlib.suppress(OSError):
        output.mkdir(parents=True, exist_ok=True)
    return [folder for folder in reversed(missing) if folder.is_dir()]


def _run_rounds(
    python: str,
    pairs: Sequence[core.Pair],
    timeout: float,
    repeat: int,
    listener: runner.Listener,
    pycache_prefix: Path | None,
    variables_seen: dict[str, str] | None,
    workdir: Path,
    torch_releases: Sequence[str],
    own_output: Path | None,
) -> runner.CellRun:
    records: list[core.Record] = []
    environment: dict[str, Any] = {}
    for run in range(repeat):
        cell_run = runner.run_cell(
            python,
            pairs,
            timeout,
            listener,
            pycache_prefix,
            variables_seen,
            workdir=workdir,
            torch_releases=torch_releases,
            own_output=own_output,
            hash_seed=identity.SEED + run,
        )
        if cell_run.import_failure:
            return cell_run
        records += cell_run.records
        environment = environment or cell_run.environment
    if pairs:
        listener("done", pairs[-1], None)
    return runner.CellRun(environment, tuple(repeats.merged(records, repeat)))


def progress_log(log: Callable[[str], None], total: int, repeat: int = 1) -> runner.Listener:
    """Log each pair as it starts and its outcome as it ends: for tests, each test's; with repeats, each run
    (round by round, :func:`run_pairs`), then, after a pair's last run, what its runs add up to.

    Tests unavailable for the reason the one before gave (a device this machine lacks) are
    not listed one by one: how many there were is said before the next pair starts, or at the end.
    Every line goes through :func:`safetext.for_terminal`: a probe's name, a test's id and a message are the
    probe's text.
    """
    started = 0
    unlisted = 0
    reason: str | None = None
    runs: dict[tuple[str, str], list[core.Record]] = {}

    def say(line: str) -> None:
        log(safetext.for_terminal(line, keep_newlines=False))

    def listen(event: str, pair: core.Pair, record: core.Record | None) -> None:
        nonlocal started, unlisted, reason
        if event in ("start", "done") and unlisted:
            say(f"    … and {unlisted} more unavailable for the same reason")
            unlisted = 0
        if event == "done":
            return
        if event == "start":
            started, reason = started + 1, None
            which = f" (run {(started - 1) // total + 1} of {repeat})" if repeat > 1 else ""
            say(f"[{(started - 1) % total + 1}/{total}] {pair.probe.name} on {pair.device}{which} ...")
            return
        if record is None:
            return
        if record.probe != pair.probe.name:  # one of the pair's tests
            message = safetext.terminal_line(record.message)
            if record.outcome is core.Outcome.UNAVAILABLE and message == reason:
                unlisted += 1
                return
            reason = message if record.outcome is core.Outcome.UNAVAILABLE else None
            shown = f"{record.probe}: {message}" if message else record.probe
            say(f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {shown}")
            for line in _rest_of_message(record):
                say(line)
            return
        say(_outcome_line(record))
        for line in _rest_of_message(record):
            say(line)
        pair_runs = runs.setdefault((record.probe, record.device), [])
        pair_runs.append(record)
        if repeat > 1 and len(pair_runs) == repeat:
            merged = repeats.merge(pair_runs)
            unstable = merged.outcome is core.Outcome.UNSTABLE  # its message: the counts and where runs differ
            counted = merged.message if unstable else repeats.counts(Counter(run.outcome for run in pair_runs))
            say(f"    {merged.outcome.symbol} {merged.outcome.value} over {repeat} runs ({counted})")

    return listen


MESSAGE_LINES = 12
"""How many lines of what a failed pair raised the console shows below its line; the result file has all."""
WHOLE_MESSAGE = (core.Outcome.FAIL, core.Outcome.ERROR)
"""The outcomes whose message is an exception, all of which explains it (``assert x == y`` and its values)."""


def _rest_of_message(record: core.Record) -> list[str]:
    """The lines after the first of a failed record's message, indented under its line, at most MESSAGE_LINES."""
    if record.outcome not in WHOLE_MESSAGE:
        return []
    rest = record.message.rstrip().splitlines()[1:]
    shown = [f"        {line.rstrip()}" for line in rest[:MESSAGE_LINES]]
    if len(rest) > MESSAGE_LINES:
        shown.append(f"        … {len(rest) - MESSAGE_LINES} more lines in the result file")
    return shown


def _outcome_line(record: core.Record) -> str:
    message = safetext.terminal_line(record.message)
    return f"    {record.outcome.symbol} {record.outcome.value} ({record.duration:.2f} s) {message}".rstrip()


def tally(records: Sequence[core.Record]) -> str:
    """``2 pass, 4 unavailable``."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record.outcome.value] = counts.get(record.outcome.value, 0) + 1
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))


def cell_result(project: Project, started: str, **fields: Any) -> CellResult:
    """A result of this machine, started at ``started`` and finished now; ``fields`` are the rest of it.

    Its environment holds how this machine computes (:data:`identity.HARDWARE`), whatever else it holds.
    """
    defaults: dict[str, Any] = {"outcome": None, "message": "", "records": (), "inputs": {}}
    environment = {**fields.pop("environment", {}), identity.HARDWARE: project.hardware.to_json()}
    return CellResult(
        machine=project.machine, **{**defaults, **fields}, environment=environment, started_at=started,
        finished_at=results.now_iso(),
    )  # fmt: skip


def write(project: Project, result: CellResult, ran: Sequence[core.Pair] = ()) -> Path | NothingStored:
    """Store ``result``: its file, or, where that fails, why, with the result printed as JSON so it is not lost.

    A stored record that one of the pairs it ``ran`` answers for (:func:`freshness.pair_answers_for`) goes, whoever made
    it: the run said what that pair's tests are now (:func:`results.merged`)."""
    made: dict[tuple[str, str], list[core.Record]] = {}
    for record in result.records:
        made.setdefault(identity.maker(record), []).append(record)

    def replaced(record: core.Record) -> bool:
        return any(
            freshness.pair_answers_for(pair, record, made.get((pair.probe.name, pair.device), ())) for pair in ran
        )

    try:
        return results.write(project.results_dir, result, replaced)
    except OSError as exc:
        path = results.result_path(project.results_dir, result.machine, result.cell_id)
        print(json.dumps(result.to_json(), indent=2, sort_keys=True), flush=True)
        return NothingStored(
            f"{result.cell_id}: cannot write {path}: {exc.strerror or exc}; the result is printed above as JSON"
        )
