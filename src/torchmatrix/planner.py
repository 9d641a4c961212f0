"""Turn a matrix into cells: for each torch release, the interpreter and the requirements.

A pure function of its inputs (the matrix, the wheel listing, the interpreters
found, the platform tags), so it is tested without a network or a Python zoo.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from .core import Constraint, Outcome, PinSource
from .index.releases import Listing, Wheel
from .interpreters import Interpreter
from .matrix import Matrix, PinRule, TorchEntry

KNOWN_PINS_FILE = Path(__file__).with_name("known_pins.yaml")
NEWEST_PYTHON_FILE = Path(__file__).with_name("newest_python.yaml")
"""The newest Python each torch release is fully supported on, torch.compile included, with its sources."""


@dataclass(frozen=True)
class NewestPython:
    """Releases in ``torch`` are fully supported up to Python ``python``: the planner's choice where it can."""

    torch: SpecifierSet
    python: str
    source: str

    def caps(self, version: Version) -> bool:
        return self.torch.contains(version, prereleases=True)

    @property
    def until(self) -> Version | None:
        """The first release it no longer covers (its ``<`` bound); None where it has none."""
        return self._bound("<", min)

    @property
    def since(self) -> Version | None:
        """The first release it covers (its ``>=`` bound); None where it has none."""
        return self._bound(">=", max)

    def _bound(self, operator: str, pick: Callable[[list[Version]], Version]) -> Version | None:
        bounds = [Version(spec.version) for spec in self.torch if spec.operator == operator]
        return pick(bounds) if bounds else None


def cap_of(version: Version, caps: Sequence[NewestPython]) -> NewestPython | None:
    """The row of ``caps`` (oldest first) that covers ``version``; for a release newer than every row, the newest
    row: what is known of the newest release is assumed of a newer one until the table says otherwise (a Python
    its torch.compile refuses is likelier than not the newest one it has a wheel for). None for an older one."""
    found = next((cap for cap in caps if cap.caps(version)), None)
    if found is None and caps and caps[-1].until is not None and version >= caps[-1].until:
        return caps[-1]
    return found


def assumed_support(version: Version, caps: Sequence[NewestPython] | None = None) -> str:
    """What the plan assumes of ``version`` when it is newer than the table (:func:`cap_of`); '' when the table
    covers it or it is older than every row."""
    table = load_newest_pythons() if caps is None else caps
    cap = cap_of(version, table)
    if cap is None or cap.caps(version):
        return ""
    return (
        f"torch {version} is newer than {NEWEST_PYTHON_FILE.name}, the table of the newest Python each release is "
        f"fully supported on (it ends before {cap.until}): assumed, as of the releases from {cap.since}, to be fully "
        f"supported up to Python {cap.python}; pin a Python in the matrix to choose another"
    )


@functools.cache
def load_newest_pythons(file: Path = NEWEST_PYTHON_FILE) -> tuple[NewestPython, ...]:
    """Read the table of :data:`NEWEST_PYTHON_FILE`: a list of ``{torch, python, source}``."""
    entries = yaml.safe_load(file.read_text(encoding="utf-8")) or []
    return tuple(NewestPython(SpecifierSet(e["torch"]), str(e["python"]), str(e["source"])) for e in entries)


@dataclass(frozen=True)
class Cell:
    """One torch release with one Python: a nox session, an environment, a result file.

    Its one id is :attr:`id` (``torch-1.12.1-py3.10``), which names its result file; :attr:`session` is the
    name of its nox session (``probe(1.12.1)``), whose :attr:`parameter` is the part in parentheses.
    """

    torch: Version
    python_request: str | None
    """The Python the matrix pins for this cell; None when the planner chose."""
    interpreter: Interpreter | None
    requirements: tuple[str, ...]
    parameter: str
    """What its nox session is parametrized by: ``1.12.1``, or ``1.12.1-py3.10`` where a release has two Pythons."""
    outcome: Outcome | None = None
    """Set when the cell cannot run at all (no-wheel, no-interpreter)."""
    # A cell with neither an interpreter nor an outcome cannot be planned on this run (the listing of the
    # index is unknown, and the matrix pins no Python): its hint says why; it runs nothing and stores nothing.
    hint: str = ""
    constrained_by: tuple[Constraint, ...] = ()
    """Bounds on the versions of packages the cell installs (the known pins, the matrix's ``constrain:``), each with
    the rule that gives it: each applies where the cell has that package, and adds none."""

    @property
    def constraints(self) -> tuple[str, ...]:
        """Its constraints as the installer reads them, and its identity holds them: ``("numpy<2",)``."""
        return tuple(given.text for given in self.constrained_by)

    @property
    def seed(self) -> tuple[str, ...]:
        """What its environment is seeded with, as ``python -m venv`` seeds one: ``("pip==23.2.1", ...)``."""
        return self.interpreter.seed if self.interpreter else ()

    @property
    def python(self) -> str | None:
        return self.interpreter.minor if self.interpreter else self.python_request

    @property
    def session(self) -> str:
        """The nox session that runs the cell: ``probe(1.12.1)``."""
        return session_of(self.parameter)

    @property
    def id(self) -> str:
        """The cell's id, which names its result file and its records' cell: ``torch-1.12.1-py3.10``."""
        return cell_id(self.torch, self.python)


def session_of(parameter: str) -> str:
    """The name of the probe session parametrized by ``parameter``: ``probe(1.12.1)``."""
    return f"probe({parameter})"


def cell_id(torch: Version, python: str | None) -> str:
    """The id of torch release ``torch`` on Python ``python`` (``"3.10"``): ``torch-1.12.1-py3.10``."""
    return f"torch-{torch}" + (f"-py{python}" if python else "")


def plan(
    matrix: Matrix,
    listing: Listing,
    interpreters: Sequence[Interpreter],
    platforms: Sequence[str],
    known_pins: Sequence[PinRule] = (),
    requires_python: SpecifierSet | None = None,
    newest_pythons: Sequence[NewestPython] | None = None,
) -> tuple[Cell, ...]:
    """One cell per (torch entry, pinned Python), or one per entry with the Python chosen.

    ``requires_python`` is the matrix's project's (:func:`torchmatrix.environment.library.requires_python`): a Python
    it excludes is never chosen, and a cell left with none cannot install the project. ``newest_pythons``
    (default: :data:`NEWEST_PYTHON_FILE`'s) caps the Python chosen for a release, where one here fits under it.
    """
    caps = load_newest_pythons() if newest_pythons is None else newest_pythons
    needs = _Needs(matrix.project.name if matrix.project else "the project", requires_python)
    cells: list[Cell] = []
    for entry in matrix.torch:
        requirements, constraints = _requirements(entry, known_pins, matrix.pins, matrix.requires)
        requests: Sequence[str | None] = entry.pythons or (None,)
        for request in requests:
            parameter = str(entry.version) + (f"-py{request}" if len(requests) > 1 else "")
            pool = interpreters if request else _capped_first(entry.version, interpreters, caps)
            pins = (requirements, constraints)
            cells.append(_cell(entry.version, request, parameter, pins, listing, pool, platforms, needs))
    return tuple(cells)


@dataclass(frozen=True)
class Held:
    """Releases a bisect runs on one Python: consecutive candidates, every one with a wheel for it here."""

    python: str
    versions: tuple[Version, ...]

    def describe(self) -> str:
        """``3.10 for 1.11.0–1.12.1``."""
        first, last = self.versions[0], self.versions[-1]
        return f"{self.python} for {first}" + (f"–{last}" if last != first else "")


def held_pythons(
    versions: Sequence[Version],
    listing: Listing,
    interpreters: Sequence[Interpreter],
    platforms: Sequence[str],
    requires_python: SpecifierSet | None = None,
    newest_pythons: Sequence[NewestPython] | None = None,
    pinned: Mapping[Version, Sequence[str]] | None = None,
) -> tuple[Held, ...]:
    """The Python each of ``versions`` (oldest first) runs on in a bisect, so that torch is all that changes.

    A release the matrix pins Pythons for (``pinned``) runs on one of those alone.

    One Python for all where one found here installs every release (that has a wheel for this platform and
    a Python here at all; the others' cells say why they cannot run): the newest, among those under every
    release's newest fully supported Python (``newest_pythons``) where there are some. Where none installs
    them all, the fewest changes of Python: each run of releases keeps one for as long as one fits them all.
    """
    caps = load_newest_pythons() if newest_pythons is None else newest_pythons
    needs = _Needs("the project", requires_python)
    held: list[Held] = []
    members: list[Version] = []
    common: set[str] = set()
    for version in versions:
        fits = _installable_minors(version, listing, interpreters, platforms, needs)
        if pinned and pinned.get(version):
            fits &= set(pinned[version])
        if not fits:
            continue
        if members and common & fits:
            members.append(version)
            common &= fits
            continue
        if members:
            held.append(Held(_preferred(common, members, caps), tuple(members)))
        members, common = [version], set(fits)
    if members:
        held.append(Held(_preferred(common, members, caps), tuple(members)))
    return tuple(held)


def installable_pythons(
    version: Version,
    listing: Listing,
    interpreters: Sequence[Interpreter],
    platforms: Sequence[str],
    requires_python: SpecifierSet | None = None,
) -> set[str]:
    """The Pythons found here (``"3.10"``) that install one of the release's wheels for this platform."""
    return _installable_minors(version, listing, interpreters, platforms, _Needs("the project", requires_python))


def _installable_minors(
    version: Version, listing: Listing, interpreters: Sequence[Interpreter], platforms: Sequence[str], needs: _Needs
) -> set[str]:
    installable = _all_tags([wheel for wheel in listing.wheels_for(version) if wheel.fits(platforms)])
    return {
        python.minor
        for python in interpreters
        if needs.admits(python.version) and not python.tags(platforms).isdisjoint(installable)
    }


def _preferred(common: set[str], versions: Sequence[Version], caps: Sequence[NewestPython]) -> str:
    """The newest of ``common`` under every release's cap, or the newest of them where none is."""
    capped = (cap_of(version, caps) for version in versions)
    limits = [Version(cap.python) for cap in capped if cap is not None]
    newest_first = sorted(common, key=Version, reverse=True)
    under = [minor for minor in newest_first if all(Version(minor) <= limit for limit in limits)]
    return (under or newest_first)[0]


def _capped_first(
    version: Version, interpreters: Sequence[Interpreter], caps: Sequence[NewestPython]
) -> list[Interpreter]:
    """``interpreters`` (newest first) with those above the release's newest fully supported Python last."""
    row = cap_of(version, caps)
    if row is None:
        return list(interpreters)
    under = [python for python in interpreters if Version(python.minor) <= Version(row.python)]
    return under + [python for python in interpreters if python not in under]


@dataclass(frozen=True)
class _Needs:
    """The Pythons the matrix's project installs on (its ``requires-python``); any, without one."""

    project: str
    specifier: SpecifierSet | None

    def admits(self, version: Sequence[int]) -> bool:
        return self.specifier is None or self.specifier.contains(".".join(map(str, version)), prereleases=True)

    def admits_minor(self, minor: str) -> bool:
        """Whether some release of Python ``minor`` (``"3.9"``) is admitted: its first or a late one."""
        return any(self.admits((*map(int, minor.split(".")), patch)) for patch in (0, 99))

    def refusal(self, python: str) -> str:
        return f"cannot install: {self.project} needs Python {self.specifier} (its requires-python), not {python}"


def _requirements(
    entry: TorchEntry, known: Sequence[PinRule], own: Sequence[PinRule], requires: Sequence[Requirement]
) -> tuple[tuple[str, ...], tuple[Constraint, ...]]:
    """The release's requirements, and its constraints with the rule that gives each.

    Requirements: ``torch==X`` first, then what every cell needs (``requires:``), the matrix's pins that apply,
    then the entry's; a later one of a package replaces an earlier one. Constraints: the known pins that apply
    (a known pin never adds a package, whatever its rule says), then the matrix's; a package the matrix pins
    itself (its ``pins:`` or the entry's) is bounded by the matrix's words alone.
    """
    version = entry.version
    applying = [rule for rule in own if rule.applies_to(version)]
    ours = {name for rule in applying for name in _named(rule)}
    constrained = {name: given for rule in known if rule.applies_to(version)
                   for name, given in _given(rule, PinSource.KNOWN, _named(rule)).items()
                   if name not in ours}  # fmt: skip
    required = _by_name(requires)
    for rule in applying:
        required.update(_by_name(rule.require))
        constrained.update(_given(rule, PinSource.MATRIX, _by_name(rule.constrain)))
    entry_pins = _by_name(entry.pins)
    required.update(entry_pins)
    constraints = tuple(given for name, given in constrained.items() if name not in entry_pins)
    return (f"torch=={version}", *required.values()), constraints


def _given(rule: PinRule, source: PinSource, bounds: Mapping[str, str]) -> dict[str, Constraint]:
    """Each of ``bounds`` (by package) as a constraint that ``rule``, of ``source``, gives."""
    return {name: Constraint(text, source, str(rule.torch), rule.reason) for name, text in bounds.items()}


def _by_name(requirements: Sequence[Requirement]) -> dict[str, str]:
    return {canonicalize_name(req.name): str(req) for req in requirements}


def _named(rule: PinRule) -> dict[str, str]:
    """Everything ``rule`` says, by package: what it requires and what it constrains."""
    return _by_name((*rule.require, *rule.constrain))


def _cell(
    version: Version,
    request: str | None,
    parameter: str,
    pins: tuple[tuple[str, ...], tuple[Constraint, ...]],
    listing: Listing,
    interpreters: Sequence[Interpreter],
    platforms: Sequence[str],
    needs: _Needs = _Needs("the project", None),
) -> Cell:
    requirements, constraints = pins

    def cell(interpreter: Interpreter | None, outcome: Outcome | None = None, hint: str = "") -> Cell:
        return Cell(version, request, interpreter, requirements, parameter, outcome, hint, constraints)

    pool = [python for python in interpreters if request is None or python.minor == request]
    if request and not needs.admits_minor(request):
        return cell(pool[0] if pool else None, Outcome.INSTALL_ERROR, needs.refusal(request))
    if request and not pool:
        return cell(None, Outcome.NO_INTERPRETER, f"Python {request} is pinned but not found; {_install_hint(request)}")
    admitted = [python for python in pool if needs.admits(python.version)]
    if pool and not admitted:
        return cell(pool[0], Outcome.INSTALL_ERROR, needs.refusal(_minors(pool)))
    pool = admitted
    if not listing.known:
        if request:  # the matrix chose: nothing to rule out, the installer will speak
            return cell(pool[0])
        # No interpreter and no outcome: a guess would file its result under a Python it never chose.
        return cell(None, None, _unknown_python_hint(version, listing))
    wheels = listing.wheels_for(version)
    if not wheels:
        return cell(None, Outcome.NO_WHEEL, listing.missing(version))
    here = [wheel for wheel in wheels if wheel.fits(platforms)]
    if not here:
        return cell(None, Outcome.NO_WHEEL, f"torch {version} has wheels only for {_platforms(wheels)}")
    installable = _all_tags(here)
    for python in pool:
        if not python.tags(platforms).isdisjoint(installable):
            return cell(python)
    minors = python_minors(here)
    if minors and not any(needs.admits_minor(minor) for minor in minors):
        return cell(None, Outcome.INSTALL_ERROR, needs.refusal(f"{_pythons_of(here)}, those torch {version} has"))
    pythons = _pythons_of(here)
    if request:
        return cell(None, Outcome.NO_WHEEL, f"torch {version} has no wheel for Python {request} here; it has {pythons}")
    found = _minors(interpreters) or "none"
    return cell(
        None,
        Outcome.NO_INTERPRETER,
        f"torch {version} needs Python {pythons}; found {found}; {_install_hint(_newest_python(here))}",
    )


def _minors(interpreters: Sequence[Interpreter]) -> str:
    """``3.13, 3.12``: newest first, whatever order the planner tried them in."""
    return ", ".join(python.minor for python in sorted(interpreters, key=lambda python: python.version, reverse=True))


def _all_tags(wheels: Sequence[Wheel]) -> set[Tag]:
    return {tag for wheel in wheels for tag in wheel.tags}


def python_minors(wheels: Sequence[Wheel]) -> list[str]:
    minors = {tag.interpreter[2:] for tag in _all_tags(wheels) if tag.interpreter.startswith("cp")}
    return sorted((f"{m[0]}.{m[1:]}" for m in minors if m.isdigit()), key=lambda text: Version(text))


def _pythons_of(wheels: Sequence[Wheel]) -> str:
    minors = python_minors(wheels)
    return f"{minors[0]}–{minors[-1]}" if len(minors) > 1 else (minors[0] if minors else "(none)")


def _newest_python(wheels: Sequence[Wheel]) -> str:
    minors = python_minors(wheels)
    return minors[-1] if minors else "3"


def _platforms(wheels: Sequence[Wheel]) -> str:
    return ", ".join(sorted({tag.platform for tag in _all_tags(wheels)}))


def _unknown_python_hint(version: Version, listing: Listing) -> str:
    why = "; ".join(listing.notes) or "the index could not be read"
    return (
        f"cannot choose a Python for torch {version}: {why}; "
        f'run once with a network, or pin one in the matrix: `- {{version: {version}, python: ["3.X"]}}`'
    )


def _install_hint(python: str) -> str:
    return f"install one, e.g. `uv python install {python}` or `pyenv install {python}`"
