"""The body of `nox -s bisect -- (PROBE | --all) --from OLD --to NEW`: where outcomes changed between two releases.

For one probe on one device, the first release whose outcome is NEW's. With
``--all``, every (probe, device) pair of the matrix whose outcome differs
between OLD and NEW, each with its first release, found in one search
(:func:`torchmatrix.bisection.search`): one build of a release answers for
every pair, so no release is built twice.

Candidates are the releases from OLD to NEW that the index and find-links
(the matrix's, or ``--index-url`` and ``--find-links``) have a wheel of for
this platform; pre-releases and nightly builds with ``--pre``. Each release
is looked at as its cell of the matrix would be, with the matrix's probes,
devices, pins and machine, but with that one release (as
``TORCHMATRIX_TORCH=<release> nox -s probe`` would):

- a stored result of this machine is reused for each pair whose record is up
  to date (:func:`torchmatrix.freshness.answers_for`: same requirements,
  interpreter, timeout, runs per pair, worker and probe file);
- a cell the planner knows cannot run (no wheel for any Python here, no
  interpreter) is untestable at no cost;
- anything else is built and run by a child `nox -s "probe(<release>)"` with
  the same noxfile and environments folder, so it lands in `.nox/probe-<release>`
  and in the results folder like any probe run, and `nox -s report` shows it.

With ``--repeat N`` (or the matrix's ``repeat:``) each pair runs N times: a
release whose runs disagree is untestable, and an end whose runs disagree is
no end to bisect from.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from .. import identity, planner, results, variables
from ..bisection import criteria, search, standing, summaries
from ..bisection.search import Look, Observation, Search, Status, Verdict
from ..bisection.summaries import BisectedChange, Commits
from ..core import Record, holds
from ..environment import library
from ..errors import TorchmatrixError, UsageError
from ..index import releases
from ..index.releases import Listing, dated
from ..planner import Cell
from ..util import atomicfile, safetext, storedjson
from . import childnox
from .handback import HandBack

if TYPE_CHECKING:
    import nox

    from ..project import Project
from ..bisection.request import BisectRequest, Key, in_order, missing_end, parse, sources
from ..bisection.words import (
    ambiguous,
    answer,
    changed_in_table,
    commits_line,
    detail,
    file_name_digest,
    key_text,
    one_end_testable,
    packages_changed,
    side,
    stale_answers,
    unstable_end,
    untestable_end,
    widen,
)

SUMMARY_SCHEMA = summaries.SCHEMA


@dataclass(frozen=True)
class _Seen:
    """How one release was looked at, for the progress lines and the summary."""

    cell: Cell
    how: str
    """built, stored or planned"""
    seconds: float = 0.0
    result: Path | None = None
    log: Path | None = None
    stored_at: str = ""
    git: str | None = None
    """The git hash of the build that showed it (``torch.version.git_version``), if it names one."""
    why: str = ""
    """Why a release built has no result: what its probe session handed back."""


@dataclass
class _Bisection:
    project: Project
    session: nox.Session
    noxfile: Path
    request: BisectRequest
    versions: list[Version]
    cells: dict[Version, Cell]
    held: Mapping[Version, str] = field(default_factory=dict)
    """The releases whose cell runs on a Python the bisect holds, not the one the planner would choose."""
    listing: Listing | None = None
    seen: dict[Version, _Seen] = field(default_factory=dict)
    looks: list[tuple[Look[Key], _Seen]] = field(default_factory=list)
    started_at: str = field(default_factory=results.now_iso)
    ends_built: dict[Version, results.CellResult | None] = field(default_factory=dict)
    """Ends built before the search (to learn their tests' names): the search's look at them reads these."""

    @property
    def budget(self) -> int:
        """The most cells it may build before the ends show how many pairs changed: one per pair, at most."""
        return search.budget_for(len(self.versions), len(self.request.keys))

    @property
    def folder(self) -> Path:
        return self.project.matrix.output / "bisect" / self.project.machine

    @property
    def summary_path(self) -> Path:
        """One file per question: named by its parts for a person to read, and a digest of the whole question.

        The parts: the probe and device (``--all`` as ``_all``, a name no probe's can be, as safe_name strips a
        leading ``_``; a file's tests as the file), what is compared, ``pre`` and the runs per pair, and the ends
        as listed; the digest covers the probe as given, the criterion whole, the index and find-links too. The
        tests of ``--all`` or of a file, which it learns as it runs, are no part of it: its summary stays where
        it is.
        """
        request = self.request
        criterion = request.criterion
        if request.every:
            asked = "_all-" + "+".join(request.devices)
        else:  # a file's tests by the file's name: its summary stays where it is, whatever tests a release has
            asked = f"{results.safe_name(request.within or request.probes[0])}-{request.devices[0]}"
        parts = [("check", criterion.check), ("metric", criterion.metric), ("output", criterion.by_output or None)]
        readable = "".join(f"-{kind}" + (f"-{results.safe_name(value)}" if value is not True else "")
                           for kind, value in parts if value is not None)  # fmt: skip
        repeat = request.repeat if request.repeat is not None else self.project.matrix.repeat
        readable += ("-pre" if request.pre else "") + (f"-repeat-{repeat}" if repeat > 1 else "")
        index_url, find_links = sources(request, self.project)
        question = {
            "probes": None if request.every else [request.within] if request.within else list(request.probes),
            "devices": list(request.devices),
            "compare": criterion.to_json(),
            "pre": request.pre,
            "repeat": repeat,
            "index_url": index_url,
            "find_links": list(find_links),
        }
        old, new = self.versions[0], self.versions[-1]  # as the index lists them: --from 1.9 is 1.9.0's
        digest = file_name_digest(json.dumps(question, sort_keys=True))
        return self.folder / f"{asked}{readable}-{old}-{new}-{digest}.json"

    def known(self) -> dict[Version, dict[Key, Observation]]:
        """What is known without building anything: up-to-date stored records, and cells that cannot run."""
        scan = results.scan(self.project.results_dir)
        results.warn_skipped(scan, self.session.warn)
        stored = self.project.stored(scan.results)
        known: dict[Version, dict[Key, Observation]] = {}
        for version, cell in self.cells.items():
            if version in self.ends_built:
                continue
            if cell.outcome:
                untestable = Observation(None, f"{cell.outcome.value}: {cell.hint}")
                known[version] = {key: untestable for key in self.request.keys}
                self.seen[version] = _Seen(cell, "planned")
                continue
            standing = {key: self.project.up_to_date(cell, stored, [key]) for key in self.request.keys}
            standing.update(
                {key: self._ran_without(cell, stored, key) for key, result in standing.items() if not result}
            )
            found = {key: self.observe(result, key) for key, result in standing.items() if result}
            if found:
                result = next(result for result in standing.values() if result)
                known[version] = found
                self.seen[version] = _Seen(cell, "stored", result=result.path, stored_at=result.finished_at,
                                           git=summaries.git_hash(result.environment.get("git_version")))  # fmt: skip
        return known

    def with_tests_as_questions(self) -> None:
        """Each test that either end ran becomes a question of its own, in place of the tests asked that hold it:
        with ``--all``, every test probe of the matrix; else the file, folder, class or test named.

        A test probe's records are its tests, which only a run of a release names (and only a cell's pytest says
        whether a file without ``run(device)`` holds tests at all): an end whose stored result holds no standing
        record of them is built first, and that build is the search's look at it. A record of a file that did not
        collect is no test, but what holds the tests the other end collected: each of them shows that error there.
        """
        asked = [name for name in self.request.probes if self._test_probe(name)]
        if not asked:
            return
        stored = self.project.stored(results.scan(self.project.results_dir).results)
        found: list[str] = []
        for end in (self.request.old, self.request.new):
            if self.cells[end].outcome:
                continue
            result = self.project.up_to_date(self.cells[end], stored, [])
            ran = self._tests_in(result, asked)
            pairs = [(name, device) for name in ran for device in self.request.devices]
            if not ran or self.project.up_to_date(self.cells[end], stored, pairs) is None:
                said = f"{', '.join(asked)}: a question per test; torch {dated(end)} runs first to name them"
                self.session.log(safetext.for_terminal(said, keep_newlines=False))
                result = self.ends_built[end] = self._run_cell(end)
                ran = self._tests_in(result, asked)
            found += ran
        tests = [name for name in dict.fromkeys(found) if not any(holds(name, other) for other in found)]
        questions = {name: [test for test in tests if test == name or holds(name, test)] for name in asked}
        probes = [test for name in self.request.probes for test in questions.get(name) or [name]]
        within = None if self.request.every or len(probes) == 1 else self.request.probes[0]
        self.request = dataclasses.replace(self.request, probes=tuple(dict.fromkeys(probes)), within=within)

    def _tests_in(self, result: results.CellResult | None, asked: Sequence[str]) -> list[str]:
        """The names of the records that ``result`` holds of the tests ``asked`` names, as the probe that asks
        them made them: one per test (or file that did not collect). A record another probe made (a node id
        asked once, which pytest did not collect) is not one of the file's tests."""
        records = result.records if result else ()
        names = dict.fromkeys(record.probe for record in records if self._made_by_its_owner(record))
        return [name for name in names if any(name == test or holds(test, name) for test in asked)]

    def _made_by_its_owner(self, record: Record) -> bool:
        owner = self.project.owner(record.probe)
        return owner is not None and identity.maker(record)[0] == owner.name

    def _test_probe(self, name: str) -> bool:
        owner = self.project.owner(name)
        return owner is not None and owner.kind.may_be_tests

    def _ran_without(self, cell: Cell, stored: Mapping[Any, results.CellResult], key: Key) -> results.CellResult | None:
        """The cell's stored result if the test probe of the test ``key`` names ran there as it would now, and
        holds no record of it: the test did not exist in that release, or its module did not import."""
        name, device = key
        owner = self.project.owner(name)
        if owner is None or not owner.kind.may_be_tests:
            return None
        result = self.project.up_to_date(cell, stored, [])
        records = result.records if result else ()
        ran = [(r.probe, device) for r in records if r.device == device and self.project.owner(r.probe) == owner]
        return result if ran and self.project.up_to_date(cell, stored, ran) else None

    def build(self, version: Version) -> dict[Key, Observation]:
        """The release's observations: from the result of its cell, built and run in a child nox."""
        result = self.ends_built.pop(version) if version in self.ends_built else self._run_cell(version)
        if result is None:
            seen = self.seen[version]
            why = f"{seen.cell.session} stored no result: {seen.why}"
            return {key: Observation(None, why) for key in self.request.keys}
        return {key: self.observe(result, key) for key in self.request.keys}

    def _run_cell(self, version: Version) -> results.CellResult | None:
        """Build and run the release's cell in a child nox; the result file it wrote, None if it wrote none."""
        cell = self.cells[version]
        log = self.folder / "logs" / f"{cell.id}.log"
        number = sum(seen.how == "built" for seen in self.seen.values()) + 1
        self.session.log(
            safetext.for_terminal(
                f"[build {number}/{self.budget}] torch {dated(version)} on Python {cell.python or '-'}: "
                f'nox -s "{cell.session}" … (log: {log})',
                keep_newlines=False,
            )
        )
        clock = time.monotonic()
        handed = childnox.run_cells(
            self.project,
            self.session,
            self.noxfile,
            [cell],
            log,
            arguments=self._arguments(),
            settings=self._settings(version),
        )[cell.session]
        result, why = _result_handed_back(handed)
        git = summaries.git_hash(result.environment.get("git_version")) if result else None
        self.seen[version] = _Seen(cell, "built", time.monotonic() - clock, handed.result, log, git=git, why=why)
        return result

    def _arguments(self) -> list[str]:
        return ["--repeat", str(self.request.repeat)] if self.request.repeat else []

    def _settings(self, version: Version) -> dict[str, str]:
        """The index and find-links asked for, for the child nox: it installs from there; the Python held."""
        settings = {variables.INDEX_URL.name: self.request.index_url} if self.request.index_url else {}
        if version in self.held:
            settings[variables.PYTHON.name] = self.held[version]
        if self.request.find_links is not None:
            settings[variables.FIND_LINKS.name] = " ".join(self.request.find_links)
        return settings

    def observe(self, result: results.CellResult, key: Key) -> Observation:
        probe, device = key
        return criteria.observe(result, probe, device, self.request.criterion)

    def on_look(self, look: Look[Key]) -> None:
        seen = self.seen[look.version]
        self.looks.append((look, seen))
        runs = max((observation.runs for observation in look.observations.values()), default=1)
        how = {
            "built": "built",
            "stored": f"stored result of {seen.stored_at}",
            "planned": "not built: the plan rules it out",
        }[seen.how] + (f", {runs} runs each" if runs > 1 else "")
        self.session.log(
            safetext.for_terminal(
                f"[{len(self.looks)}] torch {dated(look.version)}  Python {seen.cell.python or '-'}  "
                f"{self._shown(look)}  {seen.seconds:.1f} s  ({how})",
                keep_newlines=False,
            )
        )
        self.write_summary()

    def _shown(self, look: Look[Key]) -> str:
        """What a look showed: of its one question; of the brackets it was chosen to split; or a tally."""
        if len(self.request.keys) == 1 or look.splits:
            shown = [(key, look.observations[key]) for key in (look.splits or self.request.keys)]
            prefix = len(self.request.keys) > 1
            return "; ".join((key_text(key) + ": " if prefix else "") + detail(seen) for key, seen in shown)
        tally = Counter(seen.category or "untestable" for seen in look.observations.values())
        return f"{len(look.observations)} pairs: " + ", ".join(f"{count} {name}" for name, count in tally.most_common())

    def write_summary(self, found: Search[Key] | None = None) -> Path:
        """The summary so far (after every step, so an interrupted bisection leaves its steps), or the answer."""
        request = self.request
        index_url, find_links = sources(request, self.project)
        data: dict[str, Any] = {
            "schema": SUMMARY_SCHEMA,
            "machine": self.project.machine,
            "probes": list(request.probes),
            "devices": list(request.devices),
            "all": request.every,
            "compare": request.criterion.to_json(),
            "from": str(request.old),
            "to": str(request.new),
            "pre": request.pre,
            "repeat": self.project.matrix.repeat,
            "index_url": index_url,
            "find_links": list(find_links),
            "candidates": [str(version) for version in self.versions],
            "budget": found.budget if found else self.budget,
            "built": sum(look.built for look, _ in self.looks),
            "steps": [_step_json(look, seen) for look, seen in self.looks],
            **self._verdicts_json(found),
            "started_at": self.started_at,
            "finished_at": results.now_iso() if found else None,
        }
        if not request.several:  # what a summary of one probe said before there were others (schema 1)
            verdict = found.verdicts[request.keys[0]] if found else None
            data.update(probe=request.probes[0], device=request.devices[0], **summaries.verdict_json(verdict))
        atomicfile.write_json(self.summary_path, storedjson.sealed(data))
        return self.summary_path

    def _verdicts_json(self, found: Search[Key] | None) -> dict[str, Any]:
        """The changes (what the reports show) and the verdicts of the other pairs; none before the answer."""
        if found is None:
            return {"changes": [], "boundaries": [], "unchanged": []}
        return {
            "changes": [self.change(key, found.verdicts[key]).to_json() for key in found.changes],
            "boundaries": [
                {"probe": key[0], "device": key[1], "says": said}
                for key in found.changes
                if (said := self.boundary(found.verdicts[key]))
            ],
            "unchanged": [
                summaries.unchanged_json(key, v) for key, v in found.verdicts.items() if not v.status.changed
            ],
        }

    def change(self, key: Key, verdict: Verdict) -> BisectedChange:
        """A verdict whose ends differ, as the summary stores it and the reports show it."""
        assert verdict.old and verdict.new and verdict.last_old and verdict.first_new  # the ends differ
        bounds = [verdict.observation(verdict.last_old), verdict.observation(verdict.first_new)]
        probe, device = key
        return BisectedChange(
            probe, device, side(verdict.old), side(verdict.new), str(verdict.last_old), str(verdict.first_new),
            tuple(map(str, verdict.between)), min(seen.runs for seen in bounds if seen), self.commits(verdict),
        )  # fmt: skip

    def boundary(self, verdict: Verdict) -> str | None:
        """What else changes between the last release with OLD's outcome and the first with NEW's: the Python (where
        no Python here installs both), or the packages the cells name (:func:`packages_changed`); None when torch
        alone does."""
        assert verdict.last_old and verdict.first_new
        old, new = self.cells[verdict.last_old], self.cells[verdict.first_new]
        said = []
        if old.python != new.python:
            fix = self._one_python_for(old.torch, new.torch)
            said.append(
                f"the Python changes here too: torch {old.torch} ran on Python {old.python}, {new.torch} on "
                f"{new.python}, so the change may be Python's, not torch's; {fix}"
            )
        packages = packages_changed(old, new, *(self._packages(version) for version in (old.torch, new.torch)))
        if packages:
            said.append(packages)
        return "; ".join(said) or None

    def _packages(self, version: Version) -> Mapping[str, Any]:
        """The installed versions of the packages the release's cell names, as its result recorded them."""
        path = self.seen[version].result
        try:
            packages = results.read(path).environment.get("packages") if path else None
        except (OSError, ValueError):
            return {}
        return packages if isinstance(packages, dict) else {}

    def _one_python_for(self, old: Version, new: Version) -> str:
        """How to run two neighbouring releases on one Python, or why no run can."""
        listing, project = self.listing or self.project.listing, self.project
        needs = library.requires_python(project.matrix.project)
        here = set.intersection(
            *(
                planner.installable_pythons(v, listing, project.interpreters, project.platforms, needs)
                for v in (old, new)
            )
        )
        if here:
            python = max(here, key=Version)
            pins = {entry.version: entry.pythons for entry in project.matrix.torch if entry.pythons}
            held = [(version, pins[version]) for version in (old, new) if version in pins]
            if any(python not in minors for _, minors in held):  # a bisect again holds them: the matrix must change
                said = " and ".join(
                    f"{'torch ' if index == 0 else ''}{version} to {'Python ' if index == 0 else ''}{', '.join(minors)}"
                    for index, (version, minors) in enumerate(held)
                )
                return f"the matrix pins {said}, and both install on Python {python} here: pin both to it, bisect again"
            return f"both install on Python {python} here: bisect --from {old} --to {new} runs both on it"
        wheels = [
            {*planner.python_minors([wheel for wheel in listing.wheels_for(v) if wheel.fits(project.platforms)])}
            for v in (old, new)
        ]
        both = wheels[0] & wheels[1]
        if both:
            python = max(both, key=Version)
            return f"both have wheels for Python {python}: install it (`uv python install {python}`) and bisect again"
        return "no Python has wheels of both, so no run tells torch's change from Python's"

    def commits(self, verdict: Verdict) -> Commits | None:
        """Both builds' git hashes, where the builds of the last with OLD's outcome and the first with NEW's say."""
        assert verdict.last_old and verdict.first_new
        old, new = self.seen[verdict.last_old].git, self.seen[verdict.first_new].git
        return Commits(old, new) if old and new else None


def _result_handed_back(handed: HandBack) -> tuple[results.CellResult | None, str]:
    """The result a child's probe session wrote or found up to date; else None, and why there is none."""
    if handed.result is None:
        return None, handed.message
    try:
        result = results.read(handed.result)
    except (OSError, ValueError) as exc:
        return None, f"its result {handed.result} cannot be read: {exc}"
    if result.finished_at != handed.finished_at:  # another run of the cell stored its own since
        return None, (
            f"its result {handed.result}, finished at {handed.finished_at}, was replaced by another run's, finished "
            f"at {result.finished_at}, before it was read"
        )
    return result, ""


def _step_json(look: Look[Key], seen: _Seen) -> dict[str, Any]:
    return {
        "version": str(look.version),
        "cell": seen.cell.id,
        "python": seen.cell.python,
        "observations": [
            {"probe": probe, "device": device, **(summaries.observation_json(observation) or {})}
            for (probe, device), observation in look.observations.items()
        ],
        "splits": [{"probe": probe, "device": device} for probe, device in look.splits],
        "seconds": round(seen.seconds, 3),
        "how": seen.how,
        "git_version": seen.git,
        "result": str(seen.result) if seen.result else None,
        "log": str(seen.log) if seen.log else None,
    }


def run(project: Project, session: nox.Session, noxfile: Path, command: str | None = None) -> None:
    """Bisect as ``session.posargs`` asks; print each step as it goes, the answer, and write the summary.

    ``command``: the command that started it when it is not nox (``torchmatrix``), for a mistake's usage line.
    """
    request = parse(session.posargs, project.matrix, command)
    if request.alone:
        project = project.with_only(request.alone)
    if request.repeat is not None:
        project = project.with_repeat(request.repeat)
    project = project.with_sources(*sources(request, project))  # a stored record of another source is no look
    project.require_writable(project.machine_dir)
    versions, listing = _candidates(project, session, request, command)
    pinned = {entry.version: entry.pythons for entry in project.matrix.torch if entry.pythons}
    needs = library.requires_python(project.matrix.project)
    spans = planner.held_pythons(versions, listing, project.interpreters, project.platforms, needs, pinned=pinned)
    unpinned = planner.held_pythons(versions, listing, project.interpreters, project.platforms, needs)
    pythons = _pythons_said(spans, pinned=len(spans) > len(unpinned))
    cells, held = held_cells(project, listing, spans, versions)
    job = _Bisection(project, session, noxfile, request, versions, cells, held, listing)
    job.with_tests_as_questions()
    request = job.request
    known = job.known()
    whole = sum(len(found) == len(request.keys) for found in known.values())
    per_change = math.ceil(math.log2(len(versions)))
    most = f"at most {job.budget} cells to build"
    if request.several:
        most = f"to build: the 2 ends and at most {per_change} cells per pair that changed"
    session.log(
        f"bisect {request.describe()}: {len(versions)} releases from {dated(request.old)} to {dated(request.new)} "
        f"({', '.join(map(dated, versions))}); {whole} known already, {most}; {pythons}"
    )
    found = search.search(versions, job.build, request.keys, known, on_look=job.on_look, same=request.criterion.same)
    summary = job.write_summary(found)
    for key, verdict in found.verdicts.items():
        for warning in verdict.warnings:
            where = f"{key_text(key)}: " if request.several else ""
            session.warn(safetext.for_terminal(where + warning, keep_newlines=False))
    bound = search.describe_budget(len(versions), len(found.changes))
    session.log(
        safetext.for_terminal(
            f"built {found.built} of at most {found.budget} cells ({bound}); summary: {summary}", keep_newlines=False
        )
    )
    stale = _stale(job, summary)
    if request.several:
        _end_all(session, job, found, stale)
    else:
        _end_one(session, job, found.verdicts[request.keys[0]], stale)


def _stale(job: _Bisection, summary: Path) -> list[str]:
    """The pairs whose answer in the summary at ``summary`` the report marks stale already
    (:func:`standing.answers_marked_stale`): what its records depend on changed since they ran (by the bisection's
    own runs too), or a run since shows otherwise at an end."""
    written = summaries.read(summary)
    if written is None:
        return []
    stored = results.scan(job.project.results_dir).results
    project = dataclasses.replace(job.project, listing=job.listing) if job.listing else job.project  # its releases
    [marked] = standing.answers_marked_stale(project, [written], stored)
    return [key_text((change.probe, change.device)) for change in marked.changes if change.stale]


def held_cells(
    project: Project, listing: Listing, spans: Sequence[planner.Held], versions: Sequence[Version]
) -> tuple[dict[Version, Cell], dict[Version, str]]:
    """Each release's cell on the Python its span holds, and the releases whose Python that makes another than
    the planner's (what the child nox is told). A release outside every span keeps the cell that says why."""
    python = {version: span.python for span in spans for version in span.versions}
    cells, held = {}, {}
    for version in versions:
        cell = project.plan_release(version, listing)
        if version in python and (cell.outcome or cell.python != python[version]):
            cell, held[version] = project.plan_release(version, listing, python[version]), python[version]
        cells[version] = cell
    return cells, held


def _pythons_said(spans: Sequence[planner.Held], pinned: bool = False) -> str:
    """``on Python 3.10 throughout``, or each Python and its releases where none installs them all, or where the
    matrix's pins of Pythons (``pinned``) hold them apart though one would."""
    if len(spans) <= 1:
        return f"on Python {spans[0].python} throughout" if spans else "no release has a Python here"
    why = "the matrix pins" if pinned else "no Python here installs every release:"
    return f"{why} Python {', then '.join(span.describe() for span in spans)}; an answer at a change of Python says so"


def _candidates(
    project: Project, session: nox.Session, request: BisectRequest, command: str | None = None
) -> tuple[list[Version], Listing]:
    """The releases to bisect over, oldest first, and the listing they come from; both ends among them.

    Each end is first a release the index (or the find-links) has, then older or newer than the other."""
    listing = releases.listing(*sources(request, project), wanted=[request.old, request.new])
    for note in listing.notes:
        session.warn(safetext.for_terminal(note))
    if not listing.known:
        raise TorchmatrixError(f"cannot list the torch releases: {'; '.join(listing.notes)}")
    here = set(listing.versions(project.platforms))
    for flag, end in (("--from", request.old), ("--to", request.new)):
        if end not in here or (end.is_prerelease and not request.pre):
            raise UsageError(f"{flag} {end}: {missing_end(listing, project.platforms, end, request.pre)}")
    in_order(request, command)
    return search.candidates(listing, project.platforms, request.old, request.new, request.pre), listing


def _end_one(session: nox.Session, job: _Bisection, verdict: Verdict, stale: Sequence[str]) -> None:
    lines = answer(verdict, job.request)
    if verdict.status.changed:
        lines.append(commits_line(job.request.keys[0], verdict, job.commits(verdict), every=False))
    if verdict.status in (Status.SAME, Status.UNTESTABLE_END):
        session.error(safetext.for_terminal(" ".join(lines), keep_newlines=False))
    _log(session, lines)
    boundary = job.boundary(verdict) if verdict.status.changed else None
    if boundary:
        session.warn(safetext.for_terminal(boundary, keep_newlines=False))
    if stale:
        session.error(safetext.for_terminal(stale_answers(stale), keep_newlines=False))
    if verdict.both:
        session.error(safetext.for_terminal(ambiguous([verdict]), keep_newlines=False))


def _end_all(session: nox.Session, job: _Bisection, found: Search[Key], stale: Sequence[str]) -> None:
    """The "changed in" table, the commit ranges, the pairs not compared; exit 1 for an unstable end, no change, or
    an answer ``stale`` already."""
    request = job.request
    _stop_at_a_dead_end(session, request, list(found.verdicts.values()))
    changes = [job.change(key, found.verdicts[key]) for key in found.changes]
    print(safetext.for_terminal(changed_in_table(request, changes, len(request.keys))), flush=True)
    for key in found.changes:
        verdict = found.verdicts[key]
        _log(session, [commits_line(key, verdict, job.commits(verdict), every=True)])
        boundary = job.boundary(verdict)
        if boundary:
            session.warn(safetext.for_terminal(f"{key_text(key)}: {boundary}", keep_newlines=False))
        _log(session, [f"    {key_text(key)}: {v} {verdict.why_unresolved(v)}" for v in verdict.between])
    unstable = _not_compared(session, request, found.verdicts)
    if unstable:
        session.error(safetext.for_terminal(" ".join(unstable), keep_newlines=False))
    if stale:
        session.error(safetext.for_terminal(stale_answers(stale), keep_newlines=False))
    if any(found.verdicts[key].both for key in found.changes):
        session.error(safetext.for_terminal(ambiguous([found.verdicts[key] for key in found.changes]),
                                            keep_newlines=False))  # fmt: skip
    if not changes:
        session.error(
            f"no (probe, device) pair changed its outcome between torch {request.old} and {request.new}: "
            f"nothing to bisect; {widen(request.criterion)}"
        )


def _log(session: nox.Session, lines: Sequence[str]) -> None:
    for line in lines:
        session.log(safetext.for_terminal(line, keep_newlines=False))


def _stop_at_a_dead_end(session: nox.Session, request: BisectRequest, verdicts: Sequence[Verdict]) -> None:
    """End the session once, with why, when an end's cell gave nothing (it did not install, no Python fits it)."""
    for end in ([v.old for v in verdicts], [v.new for v in verdicts]):
        seen = [observation for observation in end if observation is not None]  # NEW is unseen if OLD was dead
        if seen and not any(observation.testable or observation.unstable for observation in seen):
            dead = next((v for v in verdicts if v.old and v.old.testable), verdicts[0])
            session.error(safetext.for_terminal(untestable_end(dead, request), keep_newlines=False))


def _not_compared(session: nox.Session, request: BisectRequest, verdicts: Mapping[Key, Verdict]) -> list[str]:
    """Say which pairs an end kept from being compared; the refusals of the unstable ones, for the exit."""
    ends = {key: verdict for key, verdict in verdicts.items() if verdict.status is Status.UNTESTABLE_END}
    unstable = [key for key, verdict in ends.items() if unstable_end(verdict)]
    one_end = [key for key, verdict in ends.items() if key not in unstable and one_end_testable(verdict)]
    _log(session, [f"not compared: {key_text(key)}: {untestable_end(ends[key], request)}" for key in one_end])
    both_ends = len(ends) - len(unstable) - len(one_end)
    if both_ends:
        session.log(f"not compared: {both_ends} pairs untestable at both ends (e.g. a device this machine lacks)")
    return [untestable_end(ends[key], request, key) for key in unstable]
