"""Bisect's summaries: one JSON file per question, and the "changed in" answers the reports show from them.

``<output>/bisect/<machine>/<question>.json`` is written by ``nox -s bisect``
after every step (an interrupted bisection keeps what it did) and once more
with its answer. Besides the question (probes, devices, comparison, range,
runs per pair), the candidates, the budget and every step, it holds its
changes: for each (probe, device) whose ends differ, OLD's and NEW's outcome,
the first release with NEW's, the last with OLD's, the releases left between
them, and both builds' git hashes where they are known, which name the commits
between them (:attr:`Commits.url`).

An output folder holds whatever was copied into it, so :func:`scan` reads
summaries as :mod:`torchmatrix.results` reads results: every limit of
:func:`torchmatrix.util.storedjson.read`, each field's type checked, the machine of its
folder, no finish in the future; a file it refuses is named in a warning. A
stored link is never trusted: it is made again from hashes that must be hex.
Only finished summaries answer; of several on one question (machine, probes,
devices, comparison, range, and where the releases came from and how often
each ran: ``all``, ``pre``, ``repeat``, ``index_url``, ``find_links``), the
newest.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import results
from ..index.releases import dated
from ..util import storedjson
from ..util.storedjson import checked, checked_time, checked_version
from . import criteria
from .criteria import Criterion
from .search import Observation, Verdict

SCHEMA = 2
"""2: the changes of every (probe, device) asked. 1: one probe on one device (read as 2)."""
COMPARE_URL = "https://github.com/pytorch/pytorch/compare/{old}...{new}"
_GIT_HASH = re.compile(r"[0-9a-f]{7,40}")


# --- written by `nox -s bisect` as it goes -------------------------------------------------------


def observation_json(seen: Observation | None) -> dict[str, Any] | None:
    """What the summary holds of what one release showed of one pair (None: nothing)."""
    if seen is None:
        return None
    return {"category": seen.category, "detail": seen.detail, "runs": seen.runs, "unstable": seen.unstable}


def unchanged_json(key: tuple[str, str], verdict: Verdict) -> dict[str, Any]:
    """A pair the ends did not tell apart, as the summary holds it."""
    probe, device = key
    return {"probe": probe, "device": device, "status": verdict.status.value, "old": observation_json(verdict.old),
            "new": observation_json(verdict.new)}  # fmt: skip


def verdict_json(verdict: Verdict | None) -> dict[str, Any]:
    """A pair's bisection as the summary holds it: its status, its ends, what lies between ("running" until done)."""
    if verdict is None:
        return {"status": "running"}
    return {
        "status": verdict.status.value,
        "old": observation_json(verdict.old),
        "new": observation_json(verdict.new),
        "last_old": str(verdict.last_old) if verdict.last_old else None,
        "first_new": str(verdict.first_new) if verdict.first_new else None,
        "between": [{"version": str(v), "why": verdict.why_unresolved(v)} for v in verdict.between],
        "warnings": list(verdict.warnings),
    }


def git_hash(value: object) -> str | None:
    """``value`` if it is a git commit hash (what ``torch.version.git_version`` holds), else None."""
    return value if isinstance(value, str) and _GIT_HASH.fullmatch(value) else None


@dataclass(frozen=True)
class Commits:
    """The git hashes of the builds of the last release with OLD's outcome and the first with NEW's."""

    old: str
    new: str

    @property
    def url(self) -> str:
        """The page that lists the commits in the new build and not in the old."""
        return COMPARE_URL.format(old=self.old, new=self.new)


@dataclass(frozen=True)
class Side:
    """What one end showed: the category compared, as a person reads it."""

    category: str
    detail: str

    def shown(self) -> str:
        """The category in a row: by output, one of many lines (how it ended, a digest, what it printed), what it
        printed in a few words (its detail)."""
        return self.detail if "\n" in self.category else self.category


@dataclass(frozen=True)
class BisectedChange:
    """Where one (probe, device) changed between the ends of a bisection."""

    probe: str
    device: str
    old: Side
    new: Side
    last_old: str
    first_new: str
    between: tuple[str, ...] = ()
    """The releases between them that could not be told apart; empty when they are neighbours."""
    runs: int = 1
    """How many runs of the probe each release's outcome rests on."""
    commits: Commits | None = None
    stale: bool = False
    """Whether the stored records it rests on are stale now (:func:`marked_stale`): a view's, never stored."""
    why: str = ""
    """What made it stale, where that was said (:func:`marked_stale`): a view's, never stored."""

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("why")
        data["between"] = list(self.between)
        if self.commits:
            data["commits"]["url"] = self.commits.url  # for whoever reads the file; a reader makes it again
        return data

    @classmethod
    def from_json(cls, data: Any, where: str) -> BisectedChange:
        if not isinstance(data, dict):
            raise ValueError(f"{where} is not an object")
        try:
            between = checked(data, "between", list)
            runs = checked(data, "runs", int)
            if runs < 1:
                raise ValueError(f"'runs' is {runs}")
            return cls(
                probe=checked(data, "probe", str),
                device=checked(data, "device", str),
                old=_side(checked(data, "old", dict)),
                new=_side(checked(data, "new", dict)),
                last_old=checked_version(data, "last_old"),
                first_new=checked_version(data, "first_new"),
                between=tuple(_version(item, f"between[{index}]") for index, item in enumerate(between)),
                runs=runs,
                commits=_commits(checked(data, "commits", dict, optional=True)),
            )
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None

    def cells(self) -> list[str]:
        """The row of the "changed in" table (plain text: text from the file still needs escaping)."""
        return [
            self.probe,
            self.device,
            ("↻ stale: " if self.stale else "")
            + f"{self.old.shown()} → {self.new.shown()}"
            + (f" ({self.why})" if self.stale and self.why else ""),
            dated_text(self.first_new),
            dated_text(self.last_old),
            ", ".join(map(dated_text, self.between)),
            str(self.runs),
        ]


COLUMNS = ("probe", "device", "OLD → NEW", "first with NEW's", "last with OLD's", "still open between", "runs")
"""The header of the "changed in" table; each :meth:`BisectedChange.cells` fills one row."""


def marked_stale(
    found: Iterable[Summary], stale: Collection[tuple[str, str, str, str]] | Mapping[tuple[str, str, str, str], str]
) -> list[Summary]:
    """``found``, each change marked stale whose record at either end is (``stale``: machine, torch, probe, device
    of every stale record, or each to what made it so): an answer is worth what the records it rests on are, and
    says of each end that is not what it was, and why (``torch 1.12.0: the variables the pairs see changed: X``)."""
    reasons = stale if isinstance(stale, Mapping) else dict.fromkeys(stale, "")
    marked = []
    for summary in found:
        changes = []
        for change in summary.changes:
            ends = [(end, (summary.machine, end, change.probe, change.device))
                    for end in dict.fromkeys((change.last_old, change.first_new))]  # fmt: skip
            said = [f"torch {dated_text(end)}: {reasons[key]}" for end, key in ends if reasons.get(key)]
            if any(key in reasons for _, key in ends):
                change = dataclasses.replace(change, stale=True, why="; ".join(said))
            changes.append(change)
        marked.append(dataclasses.replace(summary, changes=tuple(changes)))
    return marked


def its_own(summary: Summary, result: results.CellResult) -> bool:
    """Whether ``result`` is of a cell ``summary`` rests on: its machine's, of a release it looked at, in the cell
    it ran that release in (not another Python's cell of that release), where its steps say which."""
    cells = dict(summary.cells)
    return result.machine == summary.machine and cells.get(result.torch, result.cell_id) == result.cell_id


def contradicted(summary: Summary, stored: Iterable[results.CellResult]) -> dict[tuple[str, str, str, str], str]:
    """The ends of ``summary``'s changes whose records are no longer what the answer rests on: none stored any
    more, or one stored that now shows, by its comparison, other than the answer says that end showed (run again
    since, from other files or by another bisection; untestable now), as (machine, torch, probe, device), which
    :func:`marked_stale` takes."""
    ends = {(change.probe, change.device, end): side.category for change in summary.changes
            for end, side in ((change.last_old, change.old), (change.first_new, change.new))}  # fmt: skip
    mine = [result for result in stored if its_own(summary, result)]
    found = {}
    for (probe, device, end), category in ends.items():
        seen = [criteria.observe(result, probe, device, summary.compare).category
                for result in mine if result.torch == end]  # fmt: skip
        if not seen:
            found[(summary.machine, end, probe, device)] = "its record is no longer stored"
        elif any(each is None or not summary.compare.same(each, category) for each in seen):
            label = summary.compare.label if summary.compare.by_output else str
            shown = ", ".join(sorted({label(each) if each is not None else "nothing to compare" for each in seen}))
            said = f"its record, run again since, shows {shown}, not {label(category)}"
            found[(summary.machine, end, probe, device)] = said
    return found


def dated_text(version: str) -> str:
    """A stored version as :func:`releases.dated` shows it (it was checked to be one)."""
    return dated(results.version_of(version))


def _version(item: Any, where: str) -> str:
    return str(checked_version({where: item}, where))


def _side(data: dict[str, Any]) -> Side:
    return Side(checked(data, "category", str), checked(data, "detail", str))


def _commits(data: dict[str, Any] | None) -> Commits | None:
    if data is None:
        return None
    old, new = (checked(data, key, str) for key in ("old", "new"))
    if not (git_hash(old) and git_hash(new)):
        raise ValueError("'commits' holds something other than two git hashes")
    return Commits(old, new)


ASKED = ("all", "pre", "repeat", "index_url", "find_links")
"""The parts of a question besides the probes, devices, comparison and range."""


@dataclass(frozen=True)
class Summary:
    """A finished bisection, as the reports show it."""

    machine: str
    probes: tuple[str, ...]
    devices: tuple[str, ...]
    compare: Criterion
    old: str
    new: str
    candidates: int
    built: int
    budget: int
    changes: tuple[BisectedChange, ...]
    finished_at: str
    path: Path | None = None
    asked: str = ""
    """The rest of the question, as stored: --all, --pre, the runs per pair, the index and find-links."""
    repeat: int | None = None
    """The runs per pair its records were made with; None in a summary that did not say (the matrix's, then)."""
    index_url: str | None = None
    """The index its releases were installed from; None in a summary that did not say (the matrix's, then)."""
    find_links: tuple[str, ...] | None = None
    """The find-links folders its releases were installed from; None in a summary that did not say."""
    cells: tuple[tuple[str, str], ...] = ()
    """The cell each release it looked at ran in (``torch-1.12.1-py3.10``), by release, as its steps say."""

    @property
    def question(self) -> tuple[str, tuple[str, ...], tuple[str, ...], Criterion, str, str, str]:
        """What two summaries must share to answer the same question (the newer one answers it)."""
        return (self.machine, self.probes, self.devices, self.compare, self.old, self.new, self.asked)

    def describe(self) -> str:
        """``autograd_dot, batched_matmul on cpu by outcome, torch 1.11.0 to 1.12.1 (linux-x86_64; 3 of …)``."""
        return (
            f"{', '.join(self.probes)} on {', '.join(self.devices)} {self.compare.describe()}, "
            f"torch {dated_text(self.old)} to {dated_text(self.new)} ({self.machine}, finished {self.finished_at}; "
            f"{self.candidates} releases, {self.built} built of at most {self.budget})"
        )

    @classmethod
    def from_json(cls, data: Any) -> Summary | None:
        """The summary in ``data``, or None for one not finished yet; ValueError where it does not fit."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("schema") == 1 and type(data["schema"]) is int:
            data = _from_schema_1(data)
        schema = data.get("schema")
        if type(schema) is not int or schema != SCHEMA:
            raise ValueError(f"schema {schema!r} is not {SCHEMA} (a bisect summary)")
        data = storedjson.unsealed(data)
        try:
            if checked(data, "finished_at", str, optional=True) is None:
                return None
            changes = checked(data, "changes", list)
            return cls(
                machine=checked(data, "machine", str),
                probes=_texts(data, "probes"),
                devices=_texts(data, "devices"),
                compare=Criterion.from_json(checked(data, "compare", dict)),
                old=checked_version(data, "from"),
                new=checked_version(data, "to"),
                candidates=len(checked(data, "candidates", list)),
                built=checked(data, "built", int),
                budget=checked(data, "budget", int),
                changes=tuple(BisectedChange.from_json(item, f"changes[{i}]") for i, item in enumerate(changes)),
                finished_at=checked_time(data, "finished_at"),
                asked=json.dumps({key: data.get(key) for key in ASKED}, sort_keys=True),
                repeat=_said(data, "repeat", int),
                index_url=_said(data, "index_url", str),
                find_links=_find_links(data),
                cells=_cells(data),
            )
        except ValueError as exc:
            raise ValueError(f"does not fit bisect summary schema {SCHEMA}: {exc}") from None


def _said(data: dict[str, Any], key: str, kind: type) -> Any:
    """``data[key]`` if it is of ``kind``; None where the summary does not say (one written before it did)."""
    value = checked({key: data.get(key)}, key, kind, optional=True)
    if kind is int and value is not None and value < 1:
        raise ValueError(f"{key!r} is {value}")
    return value


def _find_links(data: dict[str, Any]) -> tuple[str, ...] | None:
    given = _said(data, "find_links", list)
    if given is not None and not all(isinstance(item, str) for item in given):
        raise ValueError("'find_links' is not a list of locations")
    return None if given is None else tuple(given)


def _cells(data: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Each release a summary's steps looked at, with the cell it ran in; none where its steps do not say."""
    steps = data.get("steps")
    return tuple(
        (step["version"], step["cell"]) for step in (steps if isinstance(steps, list) else [])
        if isinstance(step, dict) and isinstance(step.get("version"), str) and isinstance(step.get("cell"), str)
    )  # fmt: skip


def _texts(data: dict[str, Any], key: str) -> tuple[str, ...]:
    items = checked(data, key, list)
    if not items or not all(isinstance(item, str) for item in items):
        raise ValueError(f"{key!r} is not a list of names")
    return tuple(items)


def _from_schema_1(data: dict[str, Any]) -> dict[str, Any]:
    """A summary of one probe on one device, as schema 2 says it: its answer, if it had one, as its change."""
    upgraded = {**data, "schema": SCHEMA, "probes": [data.get("probe")], "devices": [data.get("device")]}
    if data.get("status") not in ("found", "range"):
        return {**upgraded, "changes": []}
    change = {key: data.get(key) for key in ("probe", "device", "last_old", "first_new")}
    for side in ("old", "new"):
        seen = data.get(side)
        change[side] = (
            {"category": seen.get("category"), "detail": seen.get("detail")} if isinstance(seen, dict) else seen
        )
    between = data.get("between")
    if isinstance(between, list):  # schema 1 said why each could not be told apart: {version, why}
        between = [item.get("version") if isinstance(item, dict) else item for item in between]
    return {**upgraded, "changes": [{**change, "between": between, "runs": 1, "commits": None}]}


def read(path: Path) -> Summary | None:
    """The summary in ``path`` (None if unfinished); raises OSError or ValueError naming what is wrong."""
    summary = Summary.from_json(storedjson.read(path))
    if summary is None:
        return None
    results.check_origin(summary.machine, summary.finished_at, path)
    return dataclasses.replace(summary, path=path)


def scan(folder: Path) -> tuple[list[Summary], list[str]]:
    """Every finished summary under ``folder`` (``<output>/bisect``), newest per question; a warning per refusal."""
    found, warnings = storedjson.read_each(folder, read)
    return newest(summary for summary in found if summary is not None), warnings


def newest(found: Iterable[Summary]) -> list[Summary]:
    """One summary per question, the one finished last; ordered by machine, then range, then probes."""
    chosen: dict[tuple[Any, ...], Summary] = {}
    for summary in found:
        other = chosen.get(summary.question)
        if other is None or storedjson.moment(summary.finished_at) > storedjson.moment(other.finished_at):
            chosen[summary.question] = summary
    return sorted(
        chosen.values(),
        key=lambda s: (s.machine, results.version_of(s.old), results.version_of(s.new), s.probes, s.devices),
    )
