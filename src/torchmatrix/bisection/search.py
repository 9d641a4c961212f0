"""Find the first torch release whose outcome is NEW's, among ordered candidate releases: for one question or many.

Pure logic: the releases, what is already known about some of them (stored
results, cells the planner knows cannot run), and an oracle that builds and
runs a cell. It works as ``git bisect`` does, over a list instead of a
history: the two ends are observed first, then the release nearest the middle
of the unresolved bracket. A release that cannot be tested, or that shows an
outcome that is neither OLD's nor NEW's, is skipped as ``git bisect skip``
does, and the next release nearest the middle is tried instead. When skipped
releases (or the budget) leave more than one release between the last with
OLD's outcome and the first with NEW's, the answer is that range.

One build of a release answers every question at once (every probe on every
device of its cell), so :func:`search` bisects many questions (keys) in one
pass: each key whose ends differ has its own bracket, every release is built
at most once, and the next release built is, among the middles of the open
brackets, the one that lies inside the most of them. Each build halves at
least one bracket, so ``k`` changes cost at most ``2 + k * ceil(log2(n))``
builds for ``n`` candidates, and never more than ``n``: with one change, the
``ceil(log2(n)) + 2`` of a single bisection.

What is known costs nothing and is used first.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from packaging.version import Version

from ..index.releases import Listing

K = TypeVar("K", bound=Hashable)
"""What a search tells apart: for the sessions, a (probe, device) pair."""
Same = Callable[[str, str], bool]
"""Whether two categories are one outcome: equal texts, unless the criterion says otherwise (by output, where what
varies between runs matches anything, one release may be the same as two that are not)."""


@dataclass(frozen=True)
class Observation:
    """What one release showed: a category to compare (``"pass"``, ``"above 1e-06"``…), or None: untestable."""

    category: str | None
    detail: str = ""
    """For a person: the outcome or value seen, or why the release could not be tested."""
    runs: int = 1
    """How many runs of the probe it rests on (``repeat``)."""
    unstable: bool = False
    """Its runs disagreed: untestable, and no end to bisect from."""
    refused: bool = False
    """pytest refused the command as given (a node id the file does not hold there, an option it does not know): an
    outcome like any (a test a later release's parameters hold), but where both ends refuse it, the name is what to
    change."""

    @property
    def testable(self) -> bool:
        return self.category is not None

    def alike(self, other: Observation, same: Same = operator.eq) -> bool:
        """Whether both were tested and show one outcome."""
        return self.category is not None and other.category is not None and same(self.category, other.category)


_UNSEEN = Observation(None, "the build did not say")


@dataclass(frozen=True)
class Step:
    """One release looked at for one key, in order; ``built`` when a cell had to be built and run for it."""

    version: Version
    observation: Observation
    built: bool


@dataclass(frozen=True)
class Look(Generic[K]):
    """One release looked at in a :func:`search`: what it showed of each key not seen there before."""

    version: Version
    observations: Mapping[K, Observation]
    built: bool
    splits: tuple[K, ...] = ()
    """The keys whose open bracket it was chosen inside (none for the ends)."""


class Status(str, Enum):
    FOUND = "found"
    """The last release with OLD's outcome and the first with NEW's are neighbours."""
    RANGE = "range"
    """Releases between them could not be told apart (untestable, another outcome, or the budget ran out)."""
    SAME = "same"
    """Both ends have the same outcome: there is nothing to bisect."""
    UNTESTABLE_END = "untestable-end"
    """OLD or NEW itself could not be tested."""

    @property
    def changed(self) -> bool:
        """Whether the ends differ, so that the verdict says where."""
        return self in (Status.FOUND, Status.RANGE)


@dataclass(frozen=True)
class Verdict:
    status: Status
    candidates: tuple[Version, ...]
    steps: tuple[Step, ...]
    budget: int
    last_old: Version | None = None
    first_new: Version | None = None
    warnings: tuple[str, ...] = ()
    both: tuple[Version, ...] = ()
    """The releases between that showed OLD's outcome and NEW's alike (by output, their runs' own output hid
    which): no answer can rest on them."""

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
        if version in self.both:
            return (f"gave {seen.detail}, OLD's outcome and NEW's alike: what differs between its runs hides which, "
                    "ambiguous")  # fmt: skip
        return f"gave {seen.detail}, neither OLD's outcome nor NEW's"


@dataclass(frozen=True)
class Search(Generic[K]):
    """Every key's verdict, and the releases looked at to reach them."""

    candidates: tuple[Version, ...]
    looks: tuple[Look[K], ...]
    budget: int
    verdicts: Mapping[K, Verdict]

    @property
    def built(self) -> int:
        return sum(look.built for look in self.looks)

    @property
    def changes(self) -> list[K]:
        """The keys whose ends differ, in the order they were asked about."""
        return [key for key, verdict in self.verdicts.items() if verdict.status.changed]


ManyOracle = Callable[[Version], Mapping[K, Observation]]
"""Build and run the cell of one release, and say what it shows of every key; never raises for a release that
cannot be tested."""


def budget_for(count: int, changes: int = 1) -> int:
    """The most cells a search of ``count`` candidates builds for ``changes`` changes.

    The two ends, then ``ceil(log2(count))`` for each change; never more than the candidates.
    """
    return min(count, 2 + max(changes, 1) * math.ceil(math.log2(count)))


def describe_budget(count: int, changes: int = 1) -> str:
    """How :func:`budget_for` comes to its number, for a person: ``2 ends + 2 × ⌈log₂ 16⌉ = 10``."""
    changes = max(changes, 1)
    formula = f"2 ends + {changes} × ⌈log₂ {count}⌉ = {2 + changes * math.ceil(math.log2(count))}"
    return formula if budget_for(count, changes) < count else f"the {count} candidates; {formula}"


def candidates(listing: Listing, platforms: Collection[str], old: Version, new: Version, pre: bool) -> list[Version]:
    """The releases from ``old`` to ``new`` inclusive with a wheel for ``platforms``, oldest first.

    Pre-releases (and dev releases) only with ``pre``.
    """
    return [
        version
        for version in listing.versions(platforms)
        if old <= version <= new and (pre or not version.is_prerelease)
    ]


def search(
    versions: Sequence[Version],
    run: ManyOracle[K],
    keys: Sequence[K],
    known: Mapping[Version, Mapping[K, Observation]] | None = None,
    *,
    budget: int | None = None,
    on_look: Callable[[Look[K]], None] | None = None,
    same: Same = operator.eq,
) -> Search[K]:
    """Bisect every key of ``keys`` over ``versions`` (oldest first, at least two) in one pass.

    ``known`` observations (by release, then key) are used before any cell is
    built; ``run`` is called at most once per release, and at most ``budget``
    times in all (default: :func:`budget_for` the changes found between the
    ends). ``on_look`` hears each release as soon as it is observed. ``same`` says whether two categories are
    one outcome; a release that shows both ends' outcomes, or neither, is skipped.
    """
    versions = tuple(versions)
    if len(versions) < 2 or any(a >= b for a, b in itertools.pairwise(versions)):
        raise ValueError("bisect needs at least two versions, in increasing order")
    pass_ = _Pass(versions, run, dict(known or {}), on_look, same)
    last = len(versions) - 1
    old = pass_.look(0, keys)
    alive = [key for key in keys if old[key].testable]
    new = pass_.look(last, alive) if alive else {}
    brackets = {
        key: _Bracket(old[key], new[key], 0, last, same)
        for key in alive
        if new[key].testable and not new[key].alike(old[key], same)
    }
    budget = budget_for(len(versions), len(brackets)) if budget is None else budget
    while (chosen := pass_.next_release(brackets, budget)) is not None:
        index, splits = chosen
        seen = pass_.look(index, splits, splits)
        for key in splits:
            brackets[key].narrow(index, seen.get(key))
    verdicts = {key: pass_.verdict(key, budget, brackets.get(key)) for key in keys}
    return Search(versions, tuple(pass_.looks), budget, verdicts)


@dataclass
class _Bracket:
    """One key's open question: OLD's and NEW's observations, and the last index with OLD's, the first with NEW's."""

    old: Observation
    new: Observation
    lo: int
    hi: int
    same: Same = operator.eq

    @property
    def open(self) -> bool:
        return self.hi - self.lo > 1

    def inside(self, index: int) -> bool:
        return self.lo < index < self.hi

    def narrow(self, index: int, seen: Observation | None) -> None:
        if seen is None or not self.inside(index):
            return
        old, new = seen.alike(self.old, self.same), seen.alike(self.new, self.same)
        if old and not new:
            self.lo = index
        elif new and not old:
            self.hi = index
        # Otherwise (untestable, a third outcome, or both ends') it is skipped: the bracket stays, the next pick moves.


@dataclass
class _Pass(Generic[K]):
    """The search's memory: what each release showed of each key, and which releases were built."""

    versions: tuple[Version, ...]
    run: ManyOracle[K]
    known: dict[Version, Mapping[K, Observation]]
    on_look: Callable[[Look[K]], None] | None
    same: Same
    seen: dict[Version, dict[K, Observation]] = field(default_factory=dict)
    built: set[Version] = field(default_factory=set)
    looks: list[Look[K]] = field(default_factory=list)

    def look(self, index: int, keys: Sequence[K], splits: Sequence[K] = ()) -> dict[K, Observation]:
        """Observe ``keys`` at release ``index``: for free if all are known there, else by building it."""
        version = self.versions[index]
        free = self.known.get(version, {})
        seen = self.seen.setdefault(version, {})
        if all(key in free for key in keys):
            shown, built = {key: value for key, value in free.items() if key not in seen}, False
        else:
            answers = self.run(version)
            self.built.add(version)
            shown, built = {key: answers.get(key, _UNSEEN) for key in (*keys, *answers) if key not in seen}, True
        seen.update(shown)
        look = Look(version, shown, built, tuple(splits))
        self.looks.append(look)
        if self.on_look:
            self.on_look(look)
        return seen

    def next_release(self, brackets: Mapping[K, _Bracket], budget: int) -> tuple[int, list[K]] | None:
        """The next release to look at and the keys whose bracket it splits; None when nothing is left to do.

        What is known comes first; then, while the budget lasts, a build. Each
        open bracket's pick is the release nearest its middle not seen for it,
        and the pick that splits the most open brackets wins.
        """
        open_brackets = {key: bracket for key, bracket in brackets.items() if bracket.open}
        phases = ((self._known_for, True), (self._buildable_for, len(self.built) < budget))
        for eligible, allowed in phases:
            middles = (self._middle(bracket, key, eligible) for key, bracket in open_brackets.items())
            picks = {index for index in middles if index is not None}
            if allowed and picks:
                scored = [(index, self._splits(index, open_brackets, eligible)) for index in picks]
                return max(scored, key=lambda pick: _score(pick[0], pick[1], open_brackets))
        return None

    def _known_for(self, index: int, key: K) -> bool:
        """Whether ``key`` is known at release ``index`` and not looked at there yet: a look that costs nothing."""
        version = self.versions[index]
        return key in self.known.get(version, {}) and key not in self.seen.get(version, {})

    def _buildable_for(self, index: int, key: K) -> bool:
        """Whether building release ``index`` would tell something new of ``key``: it was never built."""
        version = self.versions[index]
        return version not in self.built and key not in self.seen.get(version, {})

    @staticmethod
    def _middle(bracket: _Bracket, key: K, eligible: Callable[[int, K], bool]) -> int | None:
        middle = (bracket.lo + bracket.hi) / 2
        inner = [index for index in range(bracket.lo + 1, bracket.hi) if eligible(index, key)]
        return min(inner, key=lambda index: (abs(index - middle), index)) if inner else None

    @staticmethod
    def _splits(index: int, brackets: Mapping[K, _Bracket], eligible: Callable[[int, K], bool]) -> list[K]:
        return [key for key, bracket in brackets.items() if bracket.inside(index) and eligible(index, key)]

    def verdict(self, key: K, budget: int, bracket: _Bracket | None) -> Verdict:
        steps = tuple(
            Step(look.version, look.observations[key], look.built) for look in self.looks if key in look.observations
        )
        known = {version: seen[key] for version, seen in self.known.items() if key in seen}
        versions = self.versions
        old, new = (self.seen.get(versions[end], {}).get(key) for end in (0, -1))

        def verdict(
            status: Status, lo: int | None = None, hi: int | None = None, warnings: Sequence[str] = ()
        ) -> Verdict:
            last_old, first_new = (versions[i] if i is not None else None for i in (lo, hi))
            return Verdict(status, versions, steps, budget, last_old, first_new, tuple(warnings))

        if old is None or new is None or not old.testable or not new.testable:
            return verdict(Status.UNTESTABLE_END)
        if bracket is None:
            return verdict(Status.SAME, warnings=_changes_inside(versions, known, old, self.same))
        status = Status.RANGE if bracket.open else Status.FOUND
        warnings = _not_monotone(versions, known, steps, bracket.lo, bracket.hi, old, new, self.same)
        both = tuple(step.version for step in steps if versions[bracket.lo] < step.version < versions[bracket.hi]
                     and step.observation.alike(old, self.same) and step.observation.alike(new, self.same))  # fmt: skip
        return dataclasses.replace(verdict(status, bracket.lo, bracket.hi, warnings), both=both)


def _score(index: int, splits: Sequence[K], brackets: Mapping[K, _Bracket]) -> tuple[int, int, int]:
    """How good a pick is: the brackets it splits, then how evenly it splits them, then the older release."""
    evenness = sum(min(index - brackets[key].lo, brackets[key].hi - index) for key in splits)
    return (len(splits), evenness, -index)


def _changes_inside(
    versions: Sequence[Version], known: Mapping[Version, Observation], ends: Observation, same: Same
) -> list[str]:
    return [
        f"both ends show {ends.detail}, but {version} showed {seen.detail}: "
        "the outcome changes and changes back in between; bisect a narrower range"
        for version in versions[1:-1]
        if (seen := known.get(version)) is not None and seen.testable and not seen.alike(ends, same)
    ]


def _not_monotone(
    versions: Sequence[Version],
    known: Mapping[Version, Observation],
    steps: Sequence[Step],
    lo: int,
    hi: int,
    old: Observation,
    new: Observation,
    same: Same,
) -> list[str]:
    """Observations that contradict a single change between ``versions[lo]`` and ``versions[hi]``."""
    seen = dict(known)
    seen.update({step.version: step.observation for step in steps})
    warnings = []
    for index, version in enumerate(versions):
        observation = seen.get(version)
        if observation is None:
            continue
        if index < lo and observation.alike(new, same) and not observation.alike(old, same):
            warnings.append(
                f"not monotone: {version} already showed NEW's outcome ({observation.detail}) before "
                f"{versions[lo]} showed OLD's; the outcome changes more than once in this range"
            )
        elif index > hi and observation.alike(old, same) and not observation.alike(new, same):
            warnings.append(
                f"not monotone: {version} showed OLD's outcome ({observation.detail}) again after "
                f"{versions[hi]} showed NEW's; the outcome changes more than once in this range"
            )
    return warnings
