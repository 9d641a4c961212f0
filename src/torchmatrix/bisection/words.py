"""What bisect says: the answer, the "changed in" table, the commit ranges, why an end cannot be compared."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from tabulate import tabulate

from ..core import Outcome
from ..index.releases import dated
from ..planner import Cell
from ..worker import printed
from . import criteria, summaries
from .criteria import Criterion
from .request import BisectRequest, Key
from .search import Observation, Status, Verdict
from .summaries import BisectedChange, Commits, Side


def key_text(key: Key) -> str:
    return f"{key[0]} on {key[1]}"


def detail(seen: Observation) -> str:
    return seen.detail if seen.testable else f"untestable: {seen.detail}"


def side(seen: Observation) -> Side:
    return Side(str(seen.category), seen.detail)


def widen(criterion: Criterion) -> str:
    """What to try when both ends agree."""
    compared = criterion.metric or criterion.check or criterion.by_output
    return "widen the range" + ("" if compared else ", or compare a metric (--metric)")


def changed_in_table(request: BisectRequest, changes: Sequence[BisectedChange], asked: int) -> str:
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
    where = f"{key_text(key)}: " if every else ""
    old, new = verdict.last_old, verdict.first_new
    if commits is None:
        return f"{where}no commit range: the builds of torch {old} and {new} do not both name a git hash"
    return f"{where}commits from torch {old} ({commits.old}) to {new} ({commits.new}): {commits.url}"


def one_end_testable(verdict: Verdict) -> bool:
    return any(seen is not None and seen.testable for seen in (verdict.old, verdict.new))


def unstable_end(verdict: Verdict) -> bool:
    return any(seen is not None and seen.unstable for seen in (verdict.old, verdict.new))


def file_name_digest(text: str) -> str:
    """Eight hex digits that tell ``text`` from another that reads the same in a file name."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def stale_answers(pairs: Sequence[str]) -> str:
    """Why a bisection ends with exit 1 where its answers for ``pairs`` are stale already, as the report marks them."""
    return (
        f"{', '.join(pairs)}: the answer is stale already: the records it rests on no longer hold (what they depend "
        "on changed since they ran, by the bisection's own runs too, or a run since shows otherwise at an end; the "
        "report says what)"
    )


def ambiguous(verdicts: Sequence[Verdict]) -> str:
    """Why a bisection ends with exit 1 where a release between the answer's ends showed both ends' outcomes."""
    both = ", ".join(dict.fromkeys(str(version) for verdict in verdicts for version in verdict.both))
    return (
        f"torch {both}: ambiguous: what differs between the runs of each hides whether it shows OLD's outcome or "
        "NEW's (each matches both); the answer is the range around it: raise --repeat, or print less of what "
        "differs between runs"
    )


def untestable_end(verdict: Verdict, request: BisectRequest, key: Key | None = None) -> str:
    """Why an end of one pair's bisection cannot be compared: it could not be tested, or its runs disagreed."""
    old, new = verdict.old, verdict.new
    flag, end, seen = ("--from", request.old, old) if old and not old.testable else ("--to", request.new, new)
    if seen is not None and seen.unstable:
        which = f" for {key_text(key)}" if key else ""
        return (
            f"torch {end} ({flag}) is unstable{which}: {seen.detail.removeprefix('unstable: ')} over {seen.runs} runs; "
            "an end must give one answer: raise --repeat to see how often each outcome comes, or compare a metric "
            "with a threshold its noise stays on one side of (--metric NAME --above X)"
        )
    detail = seen.detail if seen else ""
    if detail.endswith(criteria.NAME_ONE):  # another end would hold the same tests: the name is what to change
        # With --all there is no name to change: the tests are those the ends ran.
        return f"torch {end} ({flag}): {detail.removesuffix(': ' + criteria.NAME_ONE) if request.every else detail}"
    if printed.NO_OUTPUT in detail:  # no release holds it: the criterion is what to change, as the detail says
        return f"torch {end} ({flag}) could not be tested: {detail}"
    if detail.startswith("skipped: "):
        return f"torch {end} ({flag}) could not be tested: {detail}; choose another {flag}, or a script that applies"
    # An install that failed may fail for every release (a requirement no index has): then no end helps.
    what = (
        f"make it install (its log says why), or choose another {flag}"
        if detail.startswith(Outcome.INSTALL_ERROR.value)
        else f"choose another {flag}"
    )
    return f"torch {end} ({flag}) could not be tested: {detail}; {what}"


def answer(verdict: Verdict, request: BisectRequest) -> list[str]:
    """What a person reads at the end: the first release with NEW's outcome and the last with OLD's, or why not."""
    old, new = verdict.old, verdict.new
    if verdict.status is Status.UNTESTABLE_END:
        return [untestable_end(verdict, request)]
    assert old is not None and new is not None  # both ends were observed
    label = request.criterion.label
    if verdict.status is Status.SAME and old.refused and new.refused:
        return [
            f"torch {request.old} and {request.new} both refuse it on {request.devices[0]}, as pytest did: "
            f"{old.detail}; {criteria.CORRECT_IT}"
        ]
    if verdict.status is Status.SAME:
        return [
            f"torch {request.old} and {request.new} both show {label(old.category)} on {request.devices[0]}: "
            f"nothing to bisect; {widen(request.criterion)}"
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


def packages_changed(old: Cell, new: Cell, before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """What else changes between two neighbouring releases' cells in the packages they name (the requirements,
    the constraints, the seed, the probes' and the project's): each that their environments hold in another version
    or only one of them holds, with the pins of either that name it; None where none does.

    ``before`` and ``after`` are the installed versions their results recorded (``environment.packages``, read from
    each environment: None for a package it does not hold); a package one of them did not record is not compared.
    """
    installed = [{canonicalize_name(name): version for name, version in side.items()} for side in (before, after)]
    old_set, new_set = installed
    differ = sorted(name for name in old_set.keys() & new_set.keys() if old_set[name] != new_set[name])
    if not differ:
        return None
    changes = []
    for name in differ:
        pins = [_pins_naming(cell, name) for cell in (old, new)]
        why = f" (pinned there: {pins[0] or 'none'}; here: {pins[1] or 'none'})" if pins[0] != pins[1] else ""
        changes.append(f"{name} {_held(new_set[name])} where {old.torch} had {_held(old_set[name])}{why}")
    return f"the packages change here too: torch {new.torch} has {'; '.join(changes)}, so the change may be theirs"


def _pins_naming(cell: Cell, name: str) -> str:
    """The cell's requirements and constraints of package ``name``: ``numpy<2``, '' where none names it."""
    pins = (*cell.requirements, *cell.constraints)
    return " ".join(text for text in pins if canonicalize_name(Requirement(text).name) == name)


def _held(version: Any) -> str:
    return "none" if version is None else str(version)


def _on_runs(verdict: Verdict, version: Version) -> str:
    """``1.12.0 (5 runs)``: a release of the answer, and how many runs of the probe its outcome rests on."""
    seen = verdict.observation(version)
    runs = seen.runs if seen else 1
    return f"{dated(version)} ({runs} run{'s' if runs > 1 else ''})"


def _what_changed(old: Observation, new: Observation) -> list[str]:
    """By output: how the ending changed, and the first line printed that did (or that what came before the end
    kept did)."""
    return printed.what_changed(str(old.category), str(new.category))
