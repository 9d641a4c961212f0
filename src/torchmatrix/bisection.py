"""Find the first torch release whose outcome is NEW's, among ordered candidate releases.

Pure logic: the releases, what is already known about some of them (stored
results, cells the planner knows cannot run), and an oracle that builds and
runs a cell. It works as ``git bisect`` does, over a list instead of a
history: the two ends are observed first, then the release nearest the middle
of the unresolved bracket. A release that cannot be tested, or that shows an
outcome that is neither OLD's nor NEW's, is skipped as ``git bisect skip``
does, and the next release nearest the middle is tried instead. When skipped
releases (or the budget) leave more than one release between the last with
OLD's outcome and the first with NEW's, the answer is that range.

What is known costs nothing and is used first; at most
``ceil(log2(n)) + 2`` cells are built for ``n`` candidates, which is enough to
close the bracket when nothing is skipped.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from packaging.version import Version

from .releases import Listing


@dataclass(frozen=True)
class Observation:
    """What one release showed: a category to compare (``"pass"``, ``"above 1e-06"``…), or None: untestable."""

    category: str | None
    detail: str = ""
    """For a person: the outcome or value seen, or why the release could not be tested."""

    @property
    def testable(self) -> bool:
        return self.category is not None


@dataclass(frozen=True)
class Step:
    """One release looked at, in order; ``built`` when a cell had to be built and run for it."""

    version: Version
    observation: Observation
    built: bool


class Status(str, Enum):
    FOUND = "found"
    """The last release with OLD's outcome and the first with NEW's are neighbours."""
    RANGE = "range"
    """Releases between them could not be told apart (untestable, another outcome, or the budget ran out)."""
    SAME = "same"
    """Both ends have the same outcome: there is nothing to bisect."""
    UNTESTABLE_END = "untestable-end"
    """OLD or NEW itself could not be tested."""


@dataclass(frozen=True)
class Verdict:
    status: Status
    candidates: tuple[Version, ...]
    steps: tuple[Step, ...]
    budget: int
    last_old: Version | None = None
    first_new: Version | None = None
    warnings: tuple[str, ...] = ()

    @property
    def built(self) -> int:
        return sum(step.built for step in self.steps)

    @property
    def old(self) -> Observation | None:
        """What OLD (the first candidate) showed, if it was looked at."""
        return self.observation(self.candidates[0])

    @property
    def new(self) -> Observation | None:
        return self.observation(self.candidates[-1])

    @property
    def between(self) -> tuple[Version, ...]:
        """The releases strictly between the last with OLD's outcome and the first with NEW's."""
        if self.last_old is None or self.first_new is None:
            return ()
        return tuple(version for version in self.candidates if self.last_old < version < self.first_new)

    def observation(self, version: Version) -> Observation | None:
        return next((step.observation for step in self.steps if step.version == version), None)

    def why_unresolved(self, version: Version) -> str:
        """Why a release of :attr:`between` does not narrow the answer."""
        seen = self.observation(version)
        if seen is None:
            return f"not tested: the budget of {self.budget} cells was spent"
        if not seen.testable:
            return f"could not be tested: {seen.detail}"
        return f"gave {seen.detail}, neither OLD's outcome nor NEW's"


Oracle = Callable[[Version], Observation]
"""Build and run the cell of one release; never raises for a release that cannot be tested."""


def budget_for(count: int) -> int:
    """The most cells a bisection of ``count`` candidates builds: ceil(log2(count)) + 2."""
    return math.ceil(math.log2(count)) + 2


def candidates(listing: Listing, platforms: Collection[str], old: Version, new: Version, pre: bool) -> list[Version]:
    """The releases from ``old`` to ``new`` inclusive with a wheel for ``platforms``, oldest first.

    Pre-releases (and dev releases) only with ``pre``.
    """
    return [
        version
        for version in listing.versions(platforms)
        if old <= version <= new and (pre or not version.is_prerelease)
    ]


def bisect(
    versions: Sequence[Version],
    run: Oracle,
    known: Mapping[Version, Observation] | None = None,
    *,
    budget: int | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> Verdict:
    """Bisect ``versions`` (oldest first, at least two) between the outcome of the first and of the last.

    ``known`` observations are used before any cell is built; ``run`` is called
    at most ``budget`` times (default :func:`budget_for`). ``on_step`` hears
    each step as soon as it is observed.
    """
    versions = tuple(versions)
    if len(versions) < 2 or any(a >= b for a, b in itertools.pairwise(versions)):
        raise ValueError("bisect needs at least two versions, in increasing order")
    known = dict(known or {})
    budget = budget_for(len(versions)) if budget is None else budget
    steps: list[Step] = []

    def observe(index: int) -> Observation:
        version = versions[index]
        if version in known:
            step = Step(version, known[version], built=False)
        else:
            step = Step(version, run(version), built=True)
        steps.append(step)
        if on_step:
            on_step(step)
        return step.observation

    def verdict(status: Status, lo: int | None = None, hi: int | None = None, warnings: Sequence[str] = ()) -> Verdict:
        return Verdict(
            status,
            versions,
            tuple(steps),
            budget,
            versions[lo] if lo is not None else None,
            versions[hi] if hi is not None else None,
            tuple(warnings),
        )

    last = len(versions) - 1
    old = observe(0)
    if not old.testable:
        return verdict(Status.UNTESTABLE_END)
    new = observe(last)
    if not new.testable:
        return verdict(Status.UNTESTABLE_END)
    if old.category == new.category:
        return verdict(Status.SAME, warnings=_changes_inside(versions, known, old))

    lo, hi = 0, last
    tried = {0, last}
    while True:
        untried = [index for index in range(lo + 1, hi) if index not in tried]
        free = [index for index in untried if versions[index] in known]
        built = sum(step.built for step in steps)
        if not free and (not untried or built >= budget):
            break
        middle = (lo + hi) / 2
        index = min(free or untried, key=lambda candidate: (abs(candidate - middle), candidate))
        tried.add(index)
        seen = observe(index)
        if seen.category == old.category:
            lo = index
        elif seen.category == new.category:
            hi = index
        # Otherwise (untestable, or a third outcome) it is skipped: the bracket stays, the next pick moves.

    status = Status.FOUND if hi == lo + 1 else Status.RANGE
    return verdict(status, lo, hi, _not_monotone(versions, known, steps, lo, hi, old, new))


def _changes_inside(versions: Sequence[Version], known: Mapping[Version, Observation], ends: Observation) -> list[str]:
    return [
        f"both ends show {ends.detail}, but {version} showed {seen.detail}: "
        "the outcome changes and changes back in between; bisect a narrower range"
        for version in versions[1:-1]
        if (seen := known.get(version)) is not None and seen.testable and seen.category != ends.category
    ]


def _not_monotone(
    versions: Sequence[Version],
    known: Mapping[Version, Observation],
    steps: Sequence[Step],
    lo: int,
    hi: int,
    old: Observation,
    new: Observation,
) -> list[str]:
    """Observations that contradict a single change between ``versions[lo]`` and ``versions[hi]``."""
    seen = dict(known)
    seen.update({step.version: step.observation for step in steps})
    warnings = []
    for index, version in enumerate(versions):
        observation = seen.get(version)
        if observation is None:
            continue
        if index < lo and observation.category == new.category:
            warnings.append(
                f"not monotone: {version} already showed NEW's outcome ({observation.detail}) before "
                f"{versions[lo]} showed OLD's; the outcome changes more than once in this range"
            )
        elif index > hi and observation.category == old.category:
            warnings.append(
                f"not monotone: {version} showed OLD's outcome ({observation.detail}) again after "
                f"{versions[hi]} showed NEW's; the outcome changes more than once in this range"
            )
    return warnings
