"""The body of `nox -s bisect -- PROBE --from OLD --to NEW`: which release first shows NEW's outcome.

Candidates are the releases from OLD to NEW that the index (and find-links)
has a wheel of for this platform. Each release is looked at as its cell of the
matrix would be, with the matrix's probes, devices, pins and machine, but with
that one release (as ``TORCHMATRIX_TORCH=<release> nox -s probe`` would):

- a stored result of this machine is reused when it is up to date
  (:func:`torchmatrix.freshness.stands_for`: same requirements, interpreter,
  timeout, worker and probe file);
- a cell the planner knows cannot run (no wheel for any Python here, no
  interpreter) is untestable at no cost;
- anything else is built and run by a child `nox -s "probe(<release>)"` with
  the same noxfile and environments folder, so it lands in `.nox/probe-<release>`
  and in the results folder like any probe run, and `nox -s report` shows it.

:mod:`torchmatrix.bisection` decides what to look at next.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from .. import atomicfile, bisection, config, criteria, printed, releases, results, terminal
from ..arguments import Parser
from ..bisection import Observation, Status, Step, Verdict
from ..core import DEVICES, Kind, Probe
from ..criteria import Criterion
from ..errors import TorchmatrixError, UsageError, did_you_mean
from ..matrix import Matrix
from ..plan import Cell
from . import childnox

if TYPE_CHECKING:
    import nox

    from ..project import Project

USAGE = (
    "nox -s bisect -- PROBE --from OLD --to NEW [--device cpu] [--metric NAME (--above X | --below X) | --by-output] "
    "[--pre]"
)
SUMMARY_SCHEMA = 1


@dataclass(frozen=True)
class Request:
    """What to bisect, as the command line asked."""

    probe: str
    old: Version
    new: Version
    device: str = "cpu"
    criterion: Criterion = Criterion()
    pre: bool = False
    alone: str | None = None
    """The script (or test) to run instead of the matrix's probes, for one the matrix does not list."""


def parse(argv: Sequence[str], matrix: Matrix) -> Request:
    """Read the session's arguments; a mistake raises :class:`UsageError` naming it."""
    parser = Parser(USAGE, "Find the first torch release in which a probe's outcome is NEW's.")
    parser.add_argument("probe", metavar="PROBE", help="a probe of the matrix, one of its tests, or a script's path")
    parser.add_argument("--from", dest="old", required=True, metavar="OLD", help="the older release")
    parser.add_argument("--to", dest="new", required=True, metavar="NEW", help="the newer release")
    parser.add_argument("--device", default="cpu", choices=DEVICES)
    parser.add_argument("--metric", metavar="NAME", help="compare a metric of the record instead of the outcome")
    side = parser.add_mutually_exclusive_group()
    side.add_argument("--above", type=float, metavar="X", help="NAME > X or not")
    side.add_argument("--below", type=float, metavar="X", help="NAME < X or not")
    parser.add_argument("--by-output", action="store_true", help="compare what the script prints, normalised")
    parser.add_argument("--pre", action="store_true", help="include pre-releases")
    args = parser.parse_args(list(argv))

    name, owner, alone = _what_to_bisect(parser, args.probe, matrix)
    if args.device not in matrix.devices:
        parser.error(f"{matrix.file.name} does not run on {args.device} (devices: {', '.join(matrix.devices)})")
    if not owner.runs_on(args.device):
        parser.error(f"{owner.name} runs on {', '.join(owner.devices or ())} alone, not on {args.device}")
    threshold = args.above if args.above is not None else args.below
    if (args.metric is None) != (threshold is None):
        parser.error("--metric NAME goes with --above X or --below X, and they only with --metric")
    if args.by_output and args.metric:
        parser.error("--by-output compares what a script prints; --metric a number in its record: choose one")
    if threshold is not None and not math.isfinite(threshold):
        parser.error(f"the threshold must be a finite number, not {threshold}")
    old, new = _release(parser, "--from", args.old), _release(parser, "--to", args.new)
    if old >= new:
        parser.error(f"--from {old} must be older than --to {new}")
    for flag, end in (("--from", old), ("--to", new)):
        if end.is_prerelease and not args.pre:
            parser.error(f"{flag} {end} is a pre-release; add --pre to bisect among pre-releases")
    criterion = Criterion(args.metric, threshold or 0.0, args.above is not None) if args.metric else Criterion()
    if args.by_output:
        criterion = Criterion(by_output=True)
    return Request(name, old, new, args.device, criterion, args.pre, alone)


def _what_to_bisect(parser: Parser, given: str, matrix: Matrix) -> tuple[str, Probe, str | None]:
    """The records' name, the probe that makes them, and what to run alone when the matrix does not list it.

    A probe of the matrix or one of its tests is bisected as the matrix runs it; a path to
    a script (or a test's node id) it does not list runs alone in each cell, as
    ``$TORCHMATRIX_PROBES`` would run it.
    """
    owner = next((probe for probe in matrix.probes if probe.covers(given)), None)
    if owner is not None:
        return given, owner, None
    target = Path(given.partition("::")[0])
    if target.suffix == ".py" and target.is_file():
        listed = next((probe for probe in matrix.probes if probe.path == target.resolve()), None)
        if listed is not None and listed.kind is not Kind.PYTEST:
            return listed.name, listed, None
        _, separator, test = given.partition("::")
        entry = str(target.resolve()) + separator + test
        try:
            (alone,) = config.given_probes([entry], matrix.file.parent, matrix.file.parent, matrix.devices)
        except UsageError as error:
            parser.error(str(error))
        if alone.kind is Kind.PYTEST and "::" not in given:
            parser.error(f"{given} holds tests: name one of them, e.g. {given}::test_name")
        return (given if alone.kind is Kind.PYTEST else alone.name), alone, entry
    probes = [probe.name for probe in matrix.probes]
    hint = did_you_mean(given, probes, f"it runs: {', '.join(probes)}; or give a script's path")
    parser.error(f"{given!r} is not a probe of {matrix.file.name}, one of its tests, nor a script here; {hint}")


def _release(parser: Parser, flag: str, text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        parser.error(f"{flag} {text!r} is not a torch release (e.g. 1.12.1)")


@dataclass
class _Seen:
    """How one release was looked at, for the progress lines and the summary."""

    cell: Cell
    how: str
    """built, stored or planned"""
    seconds: float = 0.0
    result: Path | None = None
    log: Path | None = None
    stored_at: str = ""


@dataclass
class _Bisection:
    project: Project
    session: nox.Session
    noxfile: Path
    request: Request
    versions: list[Version]
    cells: dict[Version, Cell]
    seen: dict[Version, _Seen] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    started_at: str = field(default_factory=results.now_iso)

    @property
    def budget(self) -> int:
        return bisection.budget_for(len(self.versions))

    @property
    def folder(self) -> Path:
        return self.project.matrix.output / "bisect" / self.project.machine

    @property
    def summary_path(self) -> Path:
        request = self.request
        metric = f"-{results.safe_name(request.criterion.metric)}" if request.criterion.metric else ""
        by = metric or ("-output" if request.criterion.by_output else "")
        name = results.safe_name(request.probe)
        return self.folder / f"{name}-{request.device}{by}-{request.old}-{request.new}.json"

    def known(self) -> dict[Version, Observation]:
        """What is known without building anything: up-to-date stored results, and cells that cannot run."""
        scan = results.scan(self.project.results_dir)
        results.warn_skipped(scan, self.session.warn)
        stored = self.project.stored(scan.results)
        known = {}
        for version, cell in self.cells.items():
            if cell.outcome:
                known[version] = Observation(None, f"{cell.outcome.value}: {cell.hint}")
                self.seen[version] = _Seen(cell, "planned")
                continue
            result = self.project.up_to_date(cell, stored, [(self.request.probe, self.request.device)])
            if result:
                known[version] = self.observe(result)
                self.seen[version] = _Seen(cell, "stored", result=result.path, stored_at=result.finished_at)
        return known

    def build(self, version: Version) -> Observation:
        """Build and run the release's cell in a child nox, then read the result file it wrote."""
        cell = self.cells[version]
        project = self.project
        log = self.folder / "logs" / f"{cell.id}.log"
        number = sum(step.built for step in self.steps) + 1
        self.session.log(
            f"[build {number}/{self.budget}] torch {version} on Python {cell.python or '-'}: "
            f'nox -s "{cell.session}" … (log: {log})'
        )
        started_at, clock = results.now_iso(), time.monotonic()
        code = childnox.run_cells(project, self.session, self.noxfile, [cell], log)
        seconds = time.monotonic() - clock
        path = project.result_file(cell)
        self.seen[version] = _Seen(cell, "built", seconds, path, log)
        try:
            result = results.read(path)
        except (OSError, ValueError):
            result = None
        if result is None or result.started_at < started_at:
            return Observation(None, f"the probe session stored no result (nox exited with {code}; see {log})")
        return self.observe(result)

    def observe(self, result: results.CellResult) -> Observation:
        return criteria.observe(result, self.request.probe, self.request.device, self.request.criterion)

    def on_step(self, step: Step) -> None:
        self.steps.append(step)
        seen = self.seen[step.version]
        observation = step.observation
        shown = observation.detail if observation.testable else f"untestable: {observation.detail}"
        how = {
            "built": "built",
            "stored": f"stored result of {seen.stored_at}",
            "planned": "not built: the plan rules it out",
        }[seen.how]
        self.session.log(
            terminal.escape(
                f"[{len(self.steps)}] torch {step.version}  Python {seen.cell.python or '-'}  {shown}  "
                f"{seen.seconds:.1f} s  ({how})",
                keep_newlines=False,
            )
        )
        self.write_summary()

    def write_summary(self, verdict: Verdict | None = None) -> Path:
        """The summary so far (after every step, so an interrupted bisection leaves its steps), or the verdict."""
        request = self.request
        data: dict[str, Any] = {
            "schema": SUMMARY_SCHEMA,
            "probe": request.probe,
            "device": request.device,
            "machine": self.project.machine,
            "compare": request.criterion.to_json(),
            "from": str(request.old),
            "to": str(request.new),
            "pre": request.pre,
            "candidates": [str(version) for version in self.versions],
            "budget": self.budget,
            "built": sum(step.built for step in self.steps),
            "status": verdict.status.value if verdict else "running",
            "steps": [self._step_json(step) for step in self.steps],
            "started_at": self.started_at,
            "finished_at": results.now_iso() if verdict else None,
        }
        if verdict:
            data.update(
                old=_observation_json(verdict.old),
                new=_observation_json(verdict.new),
                last_old=str(verdict.last_old) if verdict.last_old else None,
                first_new=str(verdict.first_new) if verdict.first_new else None,
                between=[{"version": str(v), "why": verdict.why_unresolved(v)} for v in verdict.between],
                warnings=list(verdict.warnings),
            )
        atomicfile.write_json(self.summary_path, data)
        return self.summary_path

    def _step_json(self, step: Step) -> dict[str, Any]:
        seen = self.seen[step.version]
        return {
            "version": str(step.version),
            "cell": seen.cell.id,
            "python": seen.cell.python,
            "category": step.observation.category,
            "detail": step.observation.detail,
            "seconds": round(seen.seconds, 3),
            "how": seen.how,
            "result": str(seen.result) if seen.result else None,
            "log": str(seen.log) if seen.log else None,
        }


def _observation_json(observation: Observation | None) -> dict[str, Any] | None:
    if observation is None:
        return None
    return {"category": observation.category, "detail": observation.detail}


def run(project: Project, session: nox.Session, noxfile: Path) -> None:
    """Bisect as ``session.posargs`` asks; print each step as it goes, the answer, and write the summary."""
    request = parse(session.posargs, project.matrix)
    if request.alone:
        project = project.running_alone(request.alone)
    project.require_writable(project.machine_dir)
    matrix = project.matrix
    listing = releases.listing(matrix.index_url, project.find_links, wanted=[request.old, request.new])
    for note in listing.notes:
        session.warn(terminal.escape(note))
    if not listing.known:
        raise TorchmatrixError(f"cannot list the torch releases: {'; '.join(listing.notes)}")
    versions = bisection.candidates(listing, project.platforms, request.old, request.new, request.pre)
    for flag, end in (("--from", request.old), ("--to", request.new)):
        if end not in versions:
            raise UsageError(f"{flag} {end}: {listing.missing(end, project.platforms)}")
    cells = {version: project.plan_release(version, listing) for version in versions}
    job = _Bisection(project, session, noxfile, request, versions, cells)
    known = job.known()
    session.log(
        f"bisect {request.probe} on {request.device} {request.criterion.describe()}: {len(versions)} releases "
        f"from {request.old} to {request.new} ({', '.join(map(str, versions))}); "
        f"{len(known)} known already, at most {job.budget} cells to build"
    )
    verdict = bisection.bisect(versions, job.build, known, on_step=job.on_step)
    summary = job.write_summary(verdict)
    for warning in verdict.warnings:
        session.warn(terminal.escape(warning, keep_newlines=False))
    session.log(f"built {verdict.built} of at most {verdict.budget} cells; summary: {summary}")
    lines = answer(verdict, request)
    if verdict.status in (Status.SAME, Status.UNTESTABLE_END):
        session.error(terminal.escape(" ".join(lines), keep_newlines=False))
    for line in lines:
        session.log(terminal.escape(line, keep_newlines=False))


def answer(verdict: Verdict, request: Request) -> list[str]:
    """What a person reads at the end: the first release with NEW's outcome and the last with OLD's, or why not."""
    old, new = verdict.old, verdict.new
    if verdict.status is Status.UNTESTABLE_END:
        flag, end, seen = ("--from", request.old, old) if old and not old.testable else ("--to", request.new, new)
        detail = seen.detail if seen else ""
        return [f"torch {end} ({flag}) could not be tested: {detail}; choose another {flag}"]
    assert old is not None and new is not None  # both ends were observed
    label = request.criterion.label
    if verdict.status is Status.SAME:
        criterion = request.criterion
        compared = criterion.metric or criterion.by_output
        other = "widen the range" + ("" if compared else ", or compare a metric (--metric)")
        return [
            f"torch {request.old} and {request.new} both show {label(old.category)} on {request.device}: "
            f"nothing to bisect; {other}"
        ]
    first = f"first release with NEW's outcome ({label(new.category)}): "
    last = f"last release with OLD's outcome ({label(old.category)}): torch {verdict.last_old}"
    changed = _what_changed(old, new) if request.criterion.by_output else []
    if verdict.status is Status.FOUND:
        return [first + f"torch {verdict.first_new}", last, *changed]
    between = verdict.between
    span = ", ".join(map(str, (*between, verdict.first_new)))
    return [
        first + f"one of {span}: the answer is bounded by releases that could not be told apart",
        *[f"    {version}: {verdict.why_unresolved(version)}" for version in between],
        last,
        *changed,
    ]


def _what_changed(old: Observation, new: Observation) -> list[str]:
    """By output: the first line printed that NEW's output differs in from OLD's (the outcome leads each category)."""
    _, *before = str(old.category).split("\n")
    _, *after = str(new.category).split("\n")
    difference = printed.first_difference(before, after)
    return [f"what it printed, from OLD to NEW: {difference}"] if difference else []
