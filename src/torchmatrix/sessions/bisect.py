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
  to date (:func:`torchmatrix.freshness.stands_for`: same requirements,
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
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version
from tabulate import tabulate

from .. import (
    atomicfile,
    bisection,
    config,
    criteria,
    library,
    plan,
    printed,
    releases,
    results,
    schema,
    summaries,
    terminal,
    variables,
)
from ..arguments import Parser, repeat_count
from ..bisection import Look, Observation, Search, Status, Verdict
from ..core import DEVICES, Kind, Outcome, Probe
from ..criteria import Criterion
from ..errors import TorchmatrixError, UsageError, did_you_mean
from ..matrix import Matrix
from ..plan import Cell
from ..releases import Listing, dated
from ..summaries import Change, Commits, Side
from . import childnox

if TYPE_CHECKING:
    import nox

    from ..project import Project

USAGE = (
    "nox -s bisect -- (PROBE | --all) --from OLD --to NEW [--device D] [--check NAME] "
    "[--metric NAME [--above X | --below X] | --by-output] [--pre] [--repeat N] "
    "[--index-url URL] [--find-links DIR]"
)
SUMMARY_SCHEMA = summaries.SCHEMA
SHOWN_PROBES = 6
"""How many of the questions the first line names (``--all`` over tests may ask hundreds)."""

Key = tuple[str, str]
"""A question: (probe, device)."""


@dataclass(frozen=True)
class Request:
    """What to bisect, as the command line asked."""

    probes: tuple[str, ...]
    devices: tuple[str, ...]
    old: Version
    new: Version
    criterion: Criterion = Criterion()
    pre: bool = False
    every: bool = False
    """``--all``: every probe of the matrix."""
    repeat: int | None = None
    """Runs per pair instead of the matrix's ``repeat:``."""
    index_url: str | None = None
    find_links: tuple[str, ...] | None = None

    @property
    def keys(self) -> list[Key]:
        return [(probe, device) for probe in self.probes for device in self.devices]

    def describe(self) -> str:
        """``autograd_dot on cpu by outcome``."""
        shown = ", ".join(self.probes[:SHOWN_PROBES])
        if len(self.probes) > SHOWN_PROBES:
            shown += f", … {len(self.probes)} in all"
        probes = f"every probe ({shown})" if self.every else shown
        return f"{probes} on {', '.join(self.devices)} {self.criterion.describe()}"

    alone: str | None = None
    """The script (or test) to run instead of the matrix's probes, for one the matrix does not list."""


def parse(argv: Sequence[str], matrix: Matrix) -> Request:
    """Read the session's arguments; a mistake raises :class:`UsageError` naming it."""
    parser = Parser(USAGE, "Find the first torch release in which a probe's outcome is NEW's.")
    parser.add_argument(
        "probe", metavar="PROBE", nargs="?", help="a probe of the matrix, one of its tests, or a script's path"
    )
    parser.add_argument("--all", dest="every", action="store_true", help="every probe and device of the matrix")
    parser.add_argument("--from", dest="old", required=True, metavar="OLD", help="the older release")
    parser.add_argument("--to", dest="new", required=True, metavar="NEW", help="the newer release")
    parser.add_argument("--device", action="append", choices=DEVICES, help="default: cpu; with --all, every one")
    parser.add_argument(
        "--check", metavar="NAME", help="look at the check of this name in metrics.checks (an operator of the sweep)"
    )
    parser.add_argument(
        "--metric",
        metavar="NAME",
        help="compare a metric of the record (of the check, with --check) instead of the outcome: "
        "its side of a threshold, or without one its value",
    )
    side = parser.add_mutually_exclusive_group()
    side.add_argument("--above", type=float, metavar="X", help="NAME > X or not")
    side.add_argument("--below", type=float, metavar="X", help="NAME < X or not")
    parser.add_argument("--by-output", action="store_true", help="compare what the script prints, normalised")
    parser.add_argument("--pre", action="store_true", help="include pre-releases and nightly builds")
    parser.add_argument("--repeat", type=repeat_count, metavar="N", help="run each (probe, device) N times")
    parser.add_argument("--index-url", metavar="URL", help="list and install torch from this index")
    parser.add_argument("--find-links", action="append", metavar="DIR", help="and from this folder or page")
    args = parser.parse_args(list(argv))

    names = [probe.name for probe in matrix.probes]
    if (args.probe is None) != args.every:
        parser.error(f"name one PROBE, or --all for every probe of {matrix.file.name}, not both")
    owner, alone = None, None
    if args.probe is not None:
        name, owner, alone = _what_to_bisect(parser, args.probe, matrix)
    devices = tuple(dict.fromkeys(args.device or (matrix.devices if args.every else ["cpu"])))
    if not args.every and len(devices) > 1:
        parser.error("one --device for one PROBE; --all takes several")
    for device in devices:
        if device not in matrix.devices:
            parser.error(f"{matrix.file.name} does not run on {device} (devices: {', '.join(matrix.devices)})")
        if owner is not None and not owner.runs_on(device):
            parser.error(f"{owner.name} runs on {', '.join(owner.devices or ())} alone, not on {device}")
    for flag, given in (("--metric", args.metric), ("--check", args.check)):
        if given is not None and not given.strip():
            parser.error(f"{flag} needs a name, e.g. {flag} {'max_abs_diff' if flag == '--metric' else 'mul'}")
    threshold = args.above if args.above is not None else args.below
    if args.metric is None and threshold is not None:
        parser.error("--above X and --below X go with --metric NAME")
    if args.by_output and (args.metric or args.check):
        parser.error("--by-output compares what a script prints; --metric and --check its record: choose one")
    if threshold is not None and not math.isfinite(threshold):
        parser.error(f"the threshold must be a finite number, not {threshold}")
    old, new = _release(parser, "--from", args.old), _release(parser, "--to", args.new)
    if old >= new:
        parser.error(f"--from {old} must be older than --to {new}")
    for flag, end in (("--from", old), ("--to", new)):
        if end.is_prerelease and not args.pre:
            parser.error(f"{flag} {end} is a pre-release; add --pre to bisect among pre-releases and nightly builds")
    problems = [schema.url_problem(args.index_url)] if args.index_url else []
    problems += [schema.location_problem(link) for link in args.find_links or ()]
    for problem in filter(None, problems):
        parser.error(problem)
    if args.metric is None:
        criterion = Criterion(check=args.check)
    else:
        criterion = Criterion(args.metric, threshold, args.above is not None, args.check)
    if args.by_output:
        criterion = Criterion(by_output=True)
    probes = tuple(names) if args.every else (name,)
    return Request(
        probes, devices, old, new, criterion, args.pre, args.every, args.repeat,
        args.index_url.rstrip("/") if args.index_url else None,
        tuple(_absolute(link) for link in args.find_links) if args.find_links else None,
        alone,
    )  # fmt: skip


def _what_to_bisect(parser: Parser, given: str, matrix: Matrix) -> tuple[str, Probe, str | None]:
    """The records' name, the probe that makes them, and what to run alone when the matrix does not list it.

    A probe of the matrix or one of its tests is bisected as the matrix runs it; a path to
    a script (or a test's node id) it does not list runs alone in each cell, as
    ``$TORCHMATRIX_PROBES`` would run it.
    """
    owner = next((probe for probe in matrix.probes if probe.covers(given)), None)
    if owner is not None and owner.kind is Kind.PYTEST and given == owner.name and not owner.select:
        example = f"{given}test_x.py::test_name" if given.endswith("/") else f"{given}::test_name"
        parser.error(f"{given} holds tests, a record each: name one (e.g. {example}), or bisect them all with --all")
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


def _absolute(link: str) -> str:
    """A find-links folder as the child nox must get it: absolute (nox runs in the noxfile's folder)."""
    return link if "://" in link else str(Path(link).absolute())


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
    code: int | None = None
    """The child nox's exit status, for a release built."""


@dataclass
class _Bisection:
    project: Project
    session: nox.Session
    noxfile: Path
    request: Request
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
        return bisection.budget_for(len(self.versions), len(self.request.keys))

    @property
    def folder(self) -> Path:
        return self.project.matrix.output / "bisect" / self.project.machine

    @property
    def summary_path(self) -> Path:
        """One file per question: named by its parts for a person to read, and a digest of the whole question.

        The parts: the probe and device (``--all`` as ``_all``, a name no probe's can be, as safe_name strips a
        leading ``_``), what is compared, ``pre`` and the runs per pair, and the ends as listed; the digest covers
        the probe as given, the criterion whole, the index and find-links too. ``--all``'s tests, which it learns
        as it runs, are no part of it: its summary stays where it is.
        """
        request = self.request
        criterion = request.criterion
        if request.every:
            asked = "_all-" + "+".join(request.devices)
        else:
            asked = f"{results.safe_name(request.probes[0])}-{request.devices[0]}"
        parts = [("check", criterion.check), ("metric", criterion.metric), ("output", criterion.by_output or None)]
        readable = "".join(f"-{kind}" + (f"-{results.safe_name(value)}" if value is not True else "")
                           for kind, value in parts if value is not None)  # fmt: skip
        repeat = request.repeat if request.repeat is not None else self.project.matrix.repeat
        readable += ("-pre" if request.pre else "") + (f"-repeat-{repeat}" if repeat > 1 else "")
        index_url, find_links = sources(request, self.project)
        question = {
            "probes": None if request.every else list(request.probes),
            "devices": list(request.devices),
            "compare": criterion.to_json(),
            "pre": request.pre,
            "repeat": repeat,
            "index_url": index_url,
            "find_links": list(find_links),
        }
        old, new = self.versions[0], self.versions[-1]  # as the index lists them: --from 1.9 is 1.9.0's
        digest = _digest(json.dumps(question, sort_keys=True))
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
        """With ``--all``, each test that either end ran becomes a question of its own, in place of its probe.

        A test probe's records are its tests, which only a run of a release names: an end whose stored
        result holds no standing record of them is built first, and that build is the search's look at it.
        """
        tests = {probe.name: probe for probe in self.project.matrix.probes if probe.kind is Kind.PYTEST}
        if not (self.request.every and tests):
            return
        stored = self.project.stored(results.scan(self.project.results_dir).results)
        found: list[str] = []
        for end in (self.request.old, self.request.new):
            if self.cells[end].outcome:
                continue
            result = self.project.up_to_date(self.cells[end], stored, [])
            ran = self._tests_in(result, tests)
            pairs = [(name, device) for name in ran for device in self.request.devices]
            if not ran or self.project.up_to_date(self.cells[end], stored, pairs) is None:
                said = f"{', '.join(tests)}: a question per test; torch {dated(end)} runs first to name them"
                self.session.log(terminal.escape(said, keep_newlines=False))
                result = self.ends_built[end] = self._run_cell(end)
                ran = self._tests_in(result, tests)
            found += ran
        asked = tuple(name for name in self.request.probes if name not in tests)
        self.request = dataclasses.replace(self.request, probes=(*asked, *dict.fromkeys(found)))

    def _tests_in(self, result: results.CellResult | None, tests: Mapping[str, Probe]) -> list[str]:
        """The names of the records of ``tests`` that ``result`` holds: one per test."""
        records = result.records if result else ()
        return [record.probe for record in records if self.project.owner(record.probe) in tests.values()]

    def _ran_without(self, cell: Cell, stored: Mapping[Any, results.CellResult], key: Key) -> results.CellResult | None:
        """The cell's stored result if the test probe of the test ``key`` names ran there as it would now, and
        holds no record of it: the test did not exist in that release, or its module did not import."""
        name, device = key
        owner = self.project.owner(name)
        if owner is None or owner.kind is not Kind.PYTEST:
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
            said = childnox.last_error(seen.log) if seen.log else ""
            code = f"{seen.code}: {said}" if said else str(seen.code)
            why = f"the probe session stored no result (nox exited with {code}; see {seen.log})"
            return {key: Observation(None, why) for key in self.request.keys}
        return {key: self.observe(result, key) for key in self.request.keys}

    def _run_cell(self, version: Version) -> results.CellResult | None:
        """Build and run the release's cell in a child nox; the result file it wrote, None if it wrote none."""
        cell = self.cells[version]
        log = self.folder / "logs" / f"{cell.id}.log"
        number = sum(seen.how == "built" for seen in self.seen.values()) + 1
        self.session.log(
            terminal.escape(
                f"[build {number}/{self.budget}] torch {dated(version)} on Python {cell.python or '-'}: "
                f'nox -s "{cell.session}" … (log: {log})',
                keep_newlines=False,
            )
        )
        started_at, clock = results.now_iso(), time.monotonic()
        code = childnox.run_cells(
            self.project,
            self.session,
            self.noxfile,
            [cell],
            log,
            arguments=self._arguments(),
            settings=self._settings(version),
        )
        path = self.project.result_file(cell)
        try:
            result: results.CellResult | None = results.read(path)
        except (OSError, ValueError):
            result = None
        # Written by this run, or found up to date by the child (it said so, and exited 0): a result of this cell.
        fresh = result is not None and (result.started_at >= started_at or code == 0)
        git = summaries.git_hash(result.environment.get("git_version")) if result and fresh else None
        self.seen[version] = _Seen(cell, "built", time.monotonic() - clock, path, log, git=git, code=code)
        return result if fresh else None

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
            terminal.escape(
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
            return "; ".join((_key_text(key) + ": " if prefix else "") + _detail(seen) for key, seen in shown)
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
        if not request.every:  # what a summary of one probe said before there were others (schema 1)
            verdict = found.verdicts[request.keys[0]] if found else None
            data.update(probe=request.probes[0], device=request.devices[0], **_verdict_json(verdict))
        atomicfile.write_json(self.summary_path, data)
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
            "unchanged": [_unchanged_json(key, v) for key, v in found.verdicts.items() if not v.status.changed],
        }

    def change(self, key: Key, verdict: Verdict) -> Change:
        """A verdict whose ends differ, as the summary stores it and the reports show it."""
        assert verdict.old and verdict.new and verdict.last_old and verdict.first_new  # the ends differ
        bounds = [verdict.observation(verdict.last_old), verdict.observation(verdict.first_new)]
        probe, device = key
        return Change(
            probe, device, _side(verdict.old), _side(verdict.new), str(verdict.last_old), str(verdict.first_new),
            tuple(map(str, verdict.between)), min(seen.runs for seen in bounds if seen), self.commits(verdict),
        )  # fmt: skip

    def boundary(self, verdict: Verdict) -> str | None:
        """What else changes between the last release with OLD's outcome and the first with NEW's: the Python (where
        no Python here installs both), or the pins; None when torch alone does."""
        assert verdict.last_old and verdict.first_new
        old, new = self.cells[verdict.last_old], self.cells[verdict.first_new]
        said = []
        if old.python != new.python:
            fix = self._one_python_for(old.torch, new.torch)
            said.append(
                f"the Python changes here too: torch {old.torch} ran on Python {old.python}, {new.torch} on "
                f"{new.python}, so the change may be Python's, not torch's; {fix}"
            )
        pins = [set(cell.requirements[1:]) for cell in (old, new)]
        if pins[0] != pins[1]:
            gone, added = (", ".join(sorted(a - b)) or "nothing" for a, b in (pins, pins[::-1]))
            said.append(
                f"the pins change here too: torch {new.torch} installs {added} where {old.torch} installed {gone} "
                "(known_pins.yaml and the matrix's pins:), so the change may be theirs"
            )
        return "; ".join(said) or None

    def _one_python_for(self, old: Version, new: Version) -> str:
        """How to run two neighbouring releases on one Python, or why no run can."""
        listing, project = self.listing or self.project.listing, self.project
        needs = library.requires_python(project.matrix.project)
        here = set.intersection(
            *(plan.installable_pythons(v, listing, project.interpreters, project.platforms, needs) for v in (old, new))
        )
        if here:
            python = max(here, key=Version)
            return f"both install on Python {python} here: bisect --from {old} --to {new} runs both on it"
        wheels = [
            {*plan.python_minors([wheel for wheel in listing.wheels_for(v) if wheel.fits(project.platforms)])}
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


def _key_text(key: Key) -> str:
    return f"{key[0]} on {key[1]}"


def _detail(seen: Observation) -> str:
    return seen.detail if seen.testable else f"untestable: {seen.detail}"


def _side(seen: Observation) -> Side:
    return Side(str(seen.category), seen.detail)


def _observation_json(seen: Observation | None) -> dict[str, Any] | None:
    if seen is None:
        return None
    return {"category": seen.category, "detail": seen.detail, "runs": seen.runs, "unstable": seen.unstable}


def _step_json(look: Look[Key], seen: _Seen) -> dict[str, Any]:
    return {
        "version": str(look.version),
        "cell": seen.cell.id,
        "python": seen.cell.python,
        "observations": [
            {"probe": probe, "device": device, **(_observation_json(observation) or {})}
            for (probe, device), observation in look.observations.items()
        ],
        "splits": [{"probe": probe, "device": device} for probe, device in look.splits],
        "seconds": round(seen.seconds, 3),
        "how": seen.how,
        "git_version": seen.git,
        "result": str(seen.result) if seen.result else None,
        "log": str(seen.log) if seen.log else None,
    }


def _unchanged_json(key: Key, verdict: Verdict) -> dict[str, Any]:
    probe, device = key
    return {"probe": probe, "device": device, "status": verdict.status.value, "old": _observation_json(verdict.old),
            "new": _observation_json(verdict.new)}  # fmt: skip


def _verdict_json(verdict: Verdict | None) -> dict[str, Any]:
    if verdict is None:
        return {"status": "running"}
    return {
        "status": verdict.status.value,
        "old": _observation_json(verdict.old),
        "new": _observation_json(verdict.new),
        "last_old": str(verdict.last_old) if verdict.last_old else None,
        "first_new": str(verdict.first_new) if verdict.first_new else None,
        "between": [{"version": str(v), "why": verdict.why_unresolved(v)} for v in verdict.between],
        "warnings": list(verdict.warnings),
    }


def run(project: Project, session: nox.Session, noxfile: Path) -> None:
    """Bisect as ``session.posargs`` asks; print each step as it goes, the answer, and write the summary."""
    request = parse(session.posargs, project.matrix)
    if request.alone:
        project = project.running_alone(request.alone)
    if request.repeat is not None:
        project = project.with_repeat(request.repeat)
    project.require_writable(project.machine_dir)
    versions, listing = _candidates(project, session, request)
    spans = plan.held_pythons(
        versions, listing, project.interpreters, project.platforms, library.requires_python(project.matrix.project)
    )
    cells, held = held_cells(project, listing, spans, versions)
    job = _Bisection(project, session, noxfile, request, versions, cells, held, listing)
    job.with_tests_as_questions()
    request = job.request
    known = job.known()
    whole = sum(len(found) == len(request.keys) for found in known.values())
    per_change = math.ceil(math.log2(len(versions)))
    most = f"at most {job.budget} cells to build"
    if request.every:
        most = f"to build: the 2 ends and at most {per_change} cells per pair that changed"
    session.log(
        f"bisect {request.describe()}: {len(versions)} releases from {dated(request.old)} to {dated(request.new)} "
        f"({', '.join(map(dated, versions))}); {whole} known already, {most}; {_pythons_said(spans)}"
    )
    found = bisection.search(versions, job.build, request.keys, known, on_look=job.on_look)
    summary = job.write_summary(found)
    for key, verdict in found.verdicts.items():
        for warning in verdict.warnings:
            where = f"{_key_text(key)}: " if request.every else ""
            session.warn(terminal.escape(where + warning, keep_newlines=False))
    bound = bisection.describe_budget(len(versions), len(found.changes))
    session.log(
        terminal.escape(
            f"built {found.built} of at most {found.budget} cells ({bound}); summary: {summary}", keep_newlines=False
        )
    )
    if request.every:
        _end_all(session, job, found)
    else:
        _end_one(session, job, found.verdicts[request.keys[0]])


def held_cells(
    project: Project, listing: Listing, spans: Sequence[plan.Held], versions: Sequence[Version]
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


def _pythons_said(spans: Sequence[plan.Held]) -> str:
    """``on Python 3.10 throughout``, or each Python and its releases where none installs them all."""
    if len(spans) <= 1:
        return f"on Python {spans[0].python} throughout" if spans else "no release has a Python here"
    return (
        f"no Python here installs every release: Python {', then '.join(span.describe() for span in spans)}; "
        "an answer at a change of Python says so"
    )


def _candidates(project: Project, session: nox.Session, request: Request) -> tuple[list[Version], Listing]:
    """The releases to bisect over, oldest first, and the listing they come from; both ends among them."""
    listing = releases.listing(*sources(request, project), wanted=[request.old, request.new])
    for note in listing.notes:
        session.warn(terminal.escape(note))
    if not listing.known:
        raise TorchmatrixError(f"cannot list the torch releases: {'; '.join(listing.notes)}")
    versions = bisection.candidates(listing, project.platforms, request.old, request.new, request.pre)
    for flag, end in (("--from", request.old), ("--to", request.new)):
        if end not in versions:
            raise UsageError(f"{flag} {end}: {missing_end(listing, project.platforms, end, request.pre)}")
    return versions, listing


def sources(request: Request, project: Project) -> tuple[str, tuple[str, ...]]:
    """The index and find-links the candidates come from and the cells install from: those asked, or the matrix's."""
    find_links = request.find_links if request.find_links is not None else project.find_links
    return request.index_url or project.matrix.index_url, find_links


def missing_end(listing: Listing, platforms: Sequence[str], end: Version, pre: bool) -> str:
    """Why an end is no candidate: the releases around it, and the oldest and newest there are.

    An index of nightly builds keeps only the latest: an old nightly is gone from it, not mistyped.
    """
    here = [version for version in listing.versions(platforms) if pre or not version.is_prerelease]
    if not here or end in listing.versions():
        return listing.missing(end, platforms)
    below, above = [v for v in here if v < end], [v for v in here if v > end]
    around = f"; the releases around it are {dated(below[-1])} and {dated(above[0])}" if below and above else ""
    dropped = "; an index of nightly builds keeps only the latest ones" if end.is_devrelease and not below else ""
    return (
        f"the index lists no torch {end}{around}; the oldest it has for this platform is {dated(here[0])}, "
        f"the newest {dated(here[-1])}{dropped}"
    )


def _end_one(session: nox.Session, job: _Bisection, verdict: Verdict) -> None:
    lines = answer(verdict, job.request)
    if verdict.status.changed:
        lines.append(commits_line(job.request.keys[0], verdict, job.commits(verdict), every=False))
    if verdict.status in (Status.SAME, Status.UNTESTABLE_END):
        session.error(terminal.escape(" ".join(lines), keep_newlines=False))
    _log(session, lines)
    boundary = job.boundary(verdict) if verdict.status.changed else None
    if boundary:
        session.warn(terminal.escape(boundary, keep_newlines=False))


def _end_all(session: nox.Session, job: _Bisection, found: Search[Key]) -> None:
    """The "changed in" table, the commit ranges, the pairs not compared; exit 1 for an unstable end, or no change."""
    request = job.request
    _stop_at_a_dead_end(session, request, list(found.verdicts.values()))
    changes = [job.change(key, found.verdicts[key]) for key in found.changes]
    print(terminal.escape(changed_in_table(request, changes, len(request.keys))), flush=True)
    for key in found.changes:
        verdict = found.verdicts[key]
        _log(session, [commits_line(key, verdict, job.commits(verdict), every=True)])
        boundary = job.boundary(verdict)
        if boundary:
            session.warn(terminal.escape(f"{_key_text(key)}: {boundary}", keep_newlines=False))
        _log(session, [f"    {_key_text(key)}: {v} {verdict.why_unresolved(v)}" for v in verdict.between])
    unstable = _not_compared(session, request, found.verdicts)
    if unstable:
        session.error(terminal.escape(" ".join(unstable), keep_newlines=False))
    if not changes:
        session.error(
            f"no (probe, device) pair changed its outcome between torch {request.old} and {request.new}: "
            f"nothing to bisect; {_widen(request.criterion)}"
        )


def _log(session: nox.Session, lines: Sequence[str]) -> None:
    for line in lines:
        session.log(terminal.escape(line, keep_newlines=False))


def _stop_at_a_dead_end(session: nox.Session, request: Request, verdicts: Sequence[Verdict]) -> None:
    """End the session once, with why, when an end's cell gave nothing (it did not install, no Python fits it)."""
    for end in ([v.old for v in verdicts], [v.new for v in verdicts]):
        seen = [observation for observation in end if observation is not None]  # NEW is unseen if OLD was dead
        if seen and not any(observation.testable or observation.unstable for observation in seen):
            dead = next((v for v in verdicts if v.old and v.old.testable), verdicts[0])
            session.error(terminal.escape(untestable_end(dead, request), keep_newlines=False))


def _not_compared(session: nox.Session, request: Request, verdicts: Mapping[Key, Verdict]) -> list[str]:
    """Say which pairs an end kept from being compared; the refusals of the unstable ones, for the exit."""
    ends = {key: verdict for key, verdict in verdicts.items() if verdict.status is Status.UNTESTABLE_END}
    unstable = [key for key, verdict in ends.items() if _unstable_end(verdict)]
    one_end = [key for key, verdict in ends.items() if key not in unstable and _one_end_testable(verdict)]
    _log(session, [f"not compared: {_key_text(key)}: {untestable_end(ends[key], request)}" for key in one_end])
    both_ends = len(ends) - len(unstable) - len(one_end)
    if both_ends:
        session.log(f"not compared: {both_ends} pairs untestable at both ends (e.g. a device this machine lacks)")
    return [untestable_end(ends[key], request, key) for key in unstable]


def _widen(criterion: Criterion) -> str:
    """What to try when both ends agree."""
    compared = criterion.metric or criterion.check or criterion.by_output
    return "widen the range" + ("" if compared else ", or compare a metric (--metric)")


def changed_in_table(request: Request, changes: Sequence[Change], asked: int) -> str:
    """The "changed in" table for the terminal, under a line saying what it answers."""
    title = (
        f"changed in, torch {dated(request.old)} to {dated(request.new)} {request.criterion.describe()}: "
        f"{len(changes)} of {asked} (probe, device) pairs"
    )
    if not changes:
        return title
    return (
        title
        + "\n"
        + tabulate([change.cells() for change in changes], headers=summaries.COLUMNS, disable_numparse=True)
    )


def commits_line(key: Key, verdict: Verdict, commits: Commits | None, *, every: bool) -> str:
    """Both git hashes and the link to the commits between them, or why there is none."""
    where = f"{_key_text(key)}: " if every else ""
    old, new = verdict.last_old, verdict.first_new
    if commits is None:
        return f"{where}no commit range: the builds of torch {old} and {new} do not both name a git hash"
    return f"{where}commits from torch {old} ({commits.old}) to {new} ({commits.new}): {commits.url}"


def _one_end_testable(verdict: Verdict) -> bool:
    return any(seen is not None and seen.testable for seen in (verdict.old, verdict.new))


def _unstable_end(verdict: Verdict) -> bool:
    return any(seen is not None and seen.unstable for seen in (verdict.old, verdict.new))


def _digest(text: str) -> str:
    """Eight hex digits that tell ``text`` from another that reads the same in a file name."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def untestable_end(verdict: Verdict, request: Request, key: Key | None = None) -> str:
    """Why an end of one pair's bisection cannot be compared: it could not be tested, or its runs disagreed."""
    old, new = verdict.old, verdict.new
    flag, end, seen = ("--from", request.old, old) if old and not old.testable else ("--to", request.new, new)
    if seen is not None and seen.unstable:
        which = f" for {_key_text(key)}" if key else ""
        return (
            f"torch {end} ({flag}) is unstable{which}: {seen.detail.removeprefix('unstable: ')} over {seen.runs} runs; "
            "an end must give one answer: raise --repeat to see how often each outcome comes, or compare a metric "
            "with a threshold its noise stays on one side of (--metric NAME --above X)"
        )
    detail = seen.detail if seen else ""
    if detail.endswith(criteria.NAME_ONE):  # another end would hold the same tests: the name is what to change
        return f"torch {end} ({flag}): {detail}"
    if detail.startswith("skipped: "):
        return f"torch {end} ({flag}) could not be tested: {detail}; choose another {flag}, or a script that applies"
    # An install that failed may fail for every release (a requirement no index has): then no end helps.
    what = (
        f"make it install (its log says why), or choose another {flag}"
        if detail.startswith(Outcome.INSTALL_ERROR.value)
        else f"choose another {flag}"
    )
    return f"torch {end} ({flag}) could not be tested: {detail}; {what}"


def answer(verdict: Verdict, request: Request) -> list[str]:
    """What a person reads at the end: the first release with NEW's outcome and the last with OLD's, or why not."""
    old, new = verdict.old, verdict.new
    if verdict.status is Status.UNTESTABLE_END:
        return [untestable_end(verdict, request)]
    assert old is not None and new is not None  # both ends were observed
    label = request.criterion.label
    if verdict.status is Status.SAME:
        return [
            f"torch {request.old} and {request.new} both show {label(old.category)} on {request.devices[0]}: "
            f"nothing to bisect; {_widen(request.criterion)}"
        ]
    assert verdict.last_old is not None and verdict.first_new is not None
    first = f"first release with NEW's outcome ({label(new.category)}): "
    last = f"last release with OLD's outcome ({label(old.category)}): torch {_on_runs(verdict, verdict.last_old)}"
    changed = _what_changed(old, new) if request.criterion.by_output else []
    if verdict.status is Status.FOUND:
        return [first + f"torch {_on_runs(verdict, verdict.first_new)}", last, *changed]
    between = verdict.between
    span = ", ".join(map(dated, (*between, verdict.first_new)))
    return [
        first + f"one of {span}: the answer is bounded by releases that could not be told apart",
        *[f"    {version}: {verdict.why_unresolved(version)}" for version in between],
        last,
        *changed,
    ]


def _on_runs(verdict: Verdict, version: Version) -> str:
    """``1.12.0 (5 runs)``: a release of the answer, and how many runs of the probe its outcome rests on."""
    seen = verdict.observation(version)
    runs = seen.runs if seen else 1
    return f"{dated(version)} ({runs} run{'s' if runs > 1 else ''})"


def _what_changed(old: Observation, new: Observation) -> list[str]:
    """By output: how the ending changed, and the first line printed that did (or that what came before the end
    kept did)."""
    return printed.what_changed(str(old.category), str(new.category))
