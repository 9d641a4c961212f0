"""What `nox -s bisect -- …` asks: its arguments read into a :class:`BisectRequest`; where its releases come from."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from ..core import DEVICES, Kind, Probe
from ..errors import UsageError, did_you_mean
from ..index.releases import Listing, dated
from ..matrix import Matrix, loader, schema
from ..util.arguments import Parser, repeat_count, typed
from .criteria import Criterion

if TYPE_CHECKING:
    from ..project import Project


ARGUMENTS = (
    "(PROBE | --all) --from OLD --to NEW [--device D] [--check NAME] "
    "[--metric NAME [--above X | --below X] | --by-output] [--pre] [--repeat N] "
    "[--index-url URL] [--find-links DIR]"
)
USAGE = typed(None, "bisect", ARGUMENTS)


SHOWN_PROBES = 6
"""How many of the questions the first line names (``--all`` over tests may ask hundreds)."""


Key = tuple[str, str]
"""A question: (probe, device)."""


@dataclass(frozen=True)
class BisectRequest:
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

    alone: str | None = None
    """The script (or test) to run instead of the matrix's probes, for one the matrix does not list."""
    within: str | None = None
    """The test file, folder or class (or parametrized test) named, whose tests, as its ends ran them, are asked."""

    @property
    def keys(self) -> list[Key]:
        return [(probe, device) for probe in self.probes for device in self.devices]

    @property
    def several(self) -> bool:
        """Whether it asks more than one question and answers with the "changed in" table: ``--all``, or a file's
        tests."""
        return self.every or self.within is not None

    def describe(self) -> str:
        """``autograd_dot on cpu by outcome``."""
        shown = ", ".join(self.probes[:SHOWN_PROBES])
        if len(self.probes) > SHOWN_PROBES:
            shown += f", … {len(self.probes)} in all"
        probes = f"every probe ({shown})" if self.every else shown
        if self.within is not None:
            probes = f"each test of {self.within} ({shown})"
        return f"{probes} on {', '.join(self.devices)} {self.criterion.describe()}"


def parse(argv: Sequence[str], matrix: Matrix, command: str | None = None) -> BisectRequest:
    """Read the session's arguments; a mistake raises :class:`UsageError` naming it, with the usage line of the
    ``command`` that started it (:func:`torchmatrix.util.arguments.typed`: ``torchmatrix bisect …``, or nox's)."""
    parser = arguments_parser(command)
    args = parser.parse(argv)

    names = [probe.name for probe in matrix.probes]
    if (args.probe is None) != args.every:
        parser.error(f"name one PROBE, or --all for every probe of {matrix.file.name}, not both")
    owner, alone = None, None
    if args.probe is not None:
        name, owner, alone = what_to_bisect(parser, args.probe, matrix)
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
    old, new = release(parser, "--from", args.old), release(parser, "--to", args.new)  # in order: see in_order
    for flag, end in (("--from", old), ("--to", new)):
        if end.is_prerelease and not args.pre:
            parser.error(f"{flag} {end} is a pre-release; add --pre to bisect among pre-releases and nightly builds")
    problems = [schema.url_problem(args.index_url)] if args.index_url else []
    problems += [schema.location_problem(link) or _spaced(link) or _absent(link) for link in args.find_links or ()]
    if args.find_links is None:  # the matrix's, which the bisect would list and install from
        problems += [_absent(link, f"{matrix.file.name}'s find_links: entry") for link in matrix.find_links or ()]
    for problem in filter(None, problems):
        parser.error(problem)
    if args.metric is None:
        criterion = Criterion(check=args.check)
    else:
        criterion = Criterion(args.metric, threshold, args.above is not None, args.check)
    if args.by_output:
        criterion = Criterion(by_output=True)
    probes = tuple(names) if args.every else (name,)
    return BisectRequest(
        probes, devices, old, new, criterion, args.pre, args.every, args.repeat,
        args.index_url.rstrip("/") if args.index_url else None,
        tuple(absolute(link) for link in args.find_links) if args.find_links else None,
        alone,
    )  # fmt: skip


def in_order(request: BisectRequest, command: str | None = None) -> None:
    """Refuse ends the wrong way round, with the usage line: once both are known releases (a mistyped ``--from``
    newer than ``--to`` is said to be no release, not to be newer)."""
    if request.old >= request.new:
        arguments_parser(command).error(f"--from {request.old} must be older than --to {request.new}")


def arguments_parser(command: str | None = None) -> Parser:
    """The parser of the session's arguments, whose usage line is the ``command``'s that starts it (nox's: None)."""
    parser = Parser(
        typed(command, "bisect", ARGUMENTS), "Find the first torch release in which a probe's outcome is NEW's."
    )
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
    return parser


def what_to_bisect(parser: Parser, given: str, matrix: Matrix) -> tuple[str, Probe, str | None]:
    """The records' name, the probe that makes them, and what to run alone when the matrix does not list it.

    A probe of the matrix or one of its tests is bisected as the matrix runs it; a path to a
    script or a test file, or a test's node id, relative or absolute, is named as its records
    are (by its path from the matrix's :attr:`Matrix.probes_from`, ``..`` and all), so it is
    the matrix's where the matrix runs it, and otherwise runs alone in each cell, as
    ``$TORCHMATRIX_PROBES`` would run it. A file, folder or class of tests asks each of its tests.
    """
    owner = next((probe for probe in matrix.probes if probe.covers(given)), None)
    if owner is not None:
        return given, owner, None
    target, separator, test = given.partition("::")
    path = Path(target)
    if path.suffix == ".py" and path.is_file():
        entry = str(path.resolve()) + separator + test
        try:
            (alone,) = loader.given_probes(
                [entry], matrix.probes_from, matrix.named_probes, matrix.devices, matrix.probes
            )
        except UsageError as error:
            parser.error(str(error))
        listed = next((probe for probe in matrix.probes if _runs(probe, alone)), None)
        if listed is not None:
            return (alone.name if alone.kind is Kind.PYTEST else listed.name), listed, None
        return alone.name, alone, entry
    near = [probe.name for probe in matrix.probes] + loader.nearby(target, matrix.workdir or Path.cwd())
    hint = did_you_mean(given, near, f"{loader.runs_text(matrix.probes)}; or give a script's path")
    parser.error(f"{given!r} is not a probe of {matrix.file.name}, one of its tests, nor a script here; {hint}")


def _runs(listed: Probe, alone: Probe) -> bool:
    """Whether the matrix's probe ``listed`` makes the records of ``alone``: the same script, or tests that hold
    its file (and so name its records as it does)."""
    if listed.kind is not Kind.PYTEST or alone.kind is not Kind.PYTEST:
        return listed.path == alone.path and listed.kind is alone.kind
    return (listed.path == alone.path or listed.path in alone.path.parents) and listed.covers(alone.name)


def release(parser: Parser, flag: str, text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        parser.error(f"{flag} {text!r} is not a torch release (e.g. 1.12.1)")


def absolute(link: str) -> str:
    """A find-links folder as the child nox must get it: absolute (nox runs in the noxfile's folder)."""
    return link if "://" in link else str(Path(link).absolute())


def _absent(link: str, given: str = "--find-links") -> str:
    """Why the find-links folder ``link``, ``given`` so, cannot be listed (:func:`schema.folder_problem`)."""
    problem = schema.folder_problem(link)
    return f"{given} {problem}" if problem else ""


def _spaced(link: str) -> str:
    """Why ``link`` cannot be handed to the probe sessions, whose TORCHMATRIX_FIND_LINKS is split at spaces as
    pip's PIP_FIND_LINKS is; '' when it can."""
    if not any(character.isspace() for character in link):
        return ""
    return (
        f"--find-links {link!r} holds a space, and the probe sessions that install from it read their find-links "
        "split at spaces; use a path without one (a link to the folder), or a file:// URL with %20 for each space"
    )


def sources(request: BisectRequest, project: Project) -> tuple[str, tuple[str, ...]]:
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
