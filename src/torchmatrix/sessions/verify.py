"""The body of `nox -s verify`: check the stored results against the matrix's expectations.

By default it only reads: the results of every machine in the results folder
(one folder can hold a laptop's, a CUDA box's and CI runners' results, and an
expectation that fails on any of them is a finding). ``--machine NAME`` keeps
one machine's results. ``--run`` first runs, on this machine, the matrix's
cells that an expectation covers and that have no up-to-date result here,
through a child `nox -s "probe(…)"` (same environments, same result files).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import expectations, freshness, results
from ..bisection import criteria
from ..errors import UsageError, did_you_mean
from ..matrix import Expectation
from ..planner import Cell
from ..results import CellResult
from ..util import safetext
from ..util.arguments import Parser, typed, with_usage
from . import childnox
from .handback import HandBack

if TYPE_CHECKING:
    import nox

    from ..project import Project

ARGUMENTS = "[--run] [--machine NAME ...]"
USAGE = f"nox -s verify [-- {ARGUMENTS}]"


@dataclass(frozen=True)
class VerifyRequest:
    run: bool = False
    machines: tuple[str, ...] = ()
    """Only these machines' results; empty: every machine's."""


def parse(argv: Sequence[str], command: str | None = None) -> VerifyRequest:
    """Read the session's arguments; a mistake raises :class:`UsageError`."""
    args = arguments_parser(command).parse(argv)
    return VerifyRequest(args.run, tuple(args.machine))


def usage(command: str | None = None) -> str:
    """How a person starts the session: from the ``command`` that starts it, or nox's (None)."""
    return USAGE if command is None else typed(command, "verify", ARGUMENTS)


def arguments_parser(command: str | None = None) -> Parser:
    """The parser of the session's arguments, whose usage line is the ``command``'s that starts it (nox's: None)."""
    parser = Parser(usage(command), "Check stored results against the expectations of the matrix (its expect: key).")
    parser.add_argument("--run", action="store_true", help="first run the covered cells without an up-to-date result")
    parser.add_argument(
        "--machine", action="append", default=[], metavar="NAME", help="only this machine's results (repeatable)"
    )
    return parser


def stale_cells(project: Project, found: Sequence[CellResult]) -> list[Cell]:
    """The matrix's cells an expectation covers whose stored result here is missing or out of date.

    Where no record answers to an expectation's name, the records of the probe that holds it stand for it: when
    they are up to date, its tests were collected as they are now, and running the cell again would not make one
    of that name (:func:`misnamed` says so).
    """
    stored = project.stored(found)
    stale = []
    for cell in project.cells:
        if cell.outcome:
            continue  # it cannot run here (no wheel, no interpreter): running it again would change nothing
        expect = [e for e in project.matrix.expect if expectations.applies(e, cell.torch, cell.python, project.machine)]
        result = stored.get((cell.torch, cell.python_request))
        pairs = {pair for e in expect for pair in _records_read(project, result, e)}
        if pairs and project.up_to_date(cell, stored, pairs) is None:
            stale.append(cell)
    return stale


def misnamed(project: Project, found: Sequence[CellResult]) -> list[str]:
    """An expectation whose name no record answers to in an up-to-date result here, though the probe that holds it
    made records there: a test its file does not hold (a typo), with the closest test it does hold."""
    stored = project.stored(found)
    said = []
    for e in project.matrix.expect:
        for cell in project.cells:
            result = stored.get((cell.torch, cell.python_request))
            if result is None or not expectations.applies(e, cell.torch, cell.python, project.machine):
                continue
            held = _holders_records(project, result, e)
            if _records_named(result, e.probe, e.device) or not held or project.up_to_date(cell, stored, held) is None:
                continue
            names = sorted(name for name, _ in held)
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            hint = did_you_mean(e.probe, names, f"it holds {', '.join(names[:3])}{more}", _after_file)
            said.append(f"{e.where}: {cell.session} holds no test {e.probe!r} on {e.device}; {hint}")
            break  # one cell's word is enough: each holds the tests its file does
    return said


def _records_read(project: Project, result: CellResult | None, expectation: Expectation) -> set[tuple[str, str]]:
    """The records whose standing decides whether the cell holds an up-to-date answer to ``expectation``: those named
    (:func:`_records_named`), else those of the probe that holds the name, else the name itself."""
    named = _records_named(result, expectation.probe, expectation.device)
    return named or _holders_records(project, result, expectation) or {(expectation.probe, expectation.device)}


def _after_file(test: str) -> str:
    """A test id without its file's path, which every test of the file shares: ``TestDot::test_grad``."""
    return test.partition("::")[2]


def _records_named(result: CellResult | None, name: str, device: str) -> set[tuple[str, str]]:
    """The records an expectation of ``name`` reads in ``result``: its own, the module's that kept its test from
    being collected, or the tests it names (a file's, a parametrized test's cases); none where there are none."""
    own = criteria.record_of(result, name, device) if result else None
    if own is not None:
        return {(own.probe, device)}
    under = criteria.records_under(result, name, device) if result else []
    return {(record.probe, device) for record in under}


def _holders_records(project: Project, result: CellResult | None, expectation: Expectation) -> set[tuple[str, str]]:
    """The records in ``result`` on the expectation's device of the matrix's probe that holds what it names."""
    holders = [probe for probe in project.matrix.probes if probe.covers(expectation.probe)]
    return {
        (record.probe, record.device)
        for record in (result.records if result else ())
        if record.device == expectation.device and any(probe.covers(record.probe) for probe in holders)
    }


def _named_nothing(
    project: Project,
    cells: Sequence[Cell],
    found: Sequence[CellResult],
    handed: Mapping[str, HandBack],
    command: str | None = None,
) -> str:
    """Why cells just run still stand for no expectation: a name none of their records answers to, or no result
    (with what their probe sessions handed back); ``command``: the one that started the session (nox's: None)."""
    stored = project.stored(found)
    missing = []
    for cell in cells:
        result = stored.get((cell.torch, cell.python_request))
        for e in project.matrix.expect:
            if result is None or not expectations.applies(e, cell.torch, cell.python, project.machine):
                continue
            if not _records_named(result, e.probe, e.device):
                missing.append(f"{e.probe} on {e.device} ({e.where})")
    names = " ".join(cell.session for cell in cells)
    if missing:
        return (
            f"ran {names}: no record of theirs answers to {', '.join(dict.fromkeys(missing))}; name a probe, test "
            f"or file they run (see `{typed(command, 'report')}`); running them again changes nothing"
        )
    said = [f"{cell.session}: {back.message}" for cell in cells if (back := handed.get(cell.session)) and back.message]
    return f"ran {names}, and they stored no up-to-date result on {project.machine}" + "".join(
        f"; {line}" for line in said
    )


def run(project: Project, session: nox.Session, noxfile: Path, command: str | None = None) -> None:
    """Verify as ``session.posargs`` asks; one line per violation, and exit 1 unless every expectation holds
    (``command``: the one that starts the session, which its messages name; nox's: None)."""
    request = parse(session.posargs, command)
    project.refuse_unlisted(command)
    if not project.matrix.expect:
        raise UsageError(
            with_usage(f"{project.matrix.file} has no expect: entries, so there is nothing to verify", usage(command))
            + "\n  hint: see README, 'Verify an upgrade fix'"
        )
    scan = results.scan(project.results_dir)
    stale = stale_cells(project, scan.results)
    handed: dict[str, HandBack] = {}
    if request.run and stale:
        project.require_writable(project.machine_dir)
        sessions = [cell.session for cell in stale]
        session.log(f"running {len(stale)} cells without an up-to-date result here: {' '.join(sessions)}")
        handed = childnox.run_cells(project, session, noxfile, stale)
        scan = results.scan(project.results_dir)
        stale = stale_cells(project, scan.results)
    results.warn_skipped(scan, session.warn)
    chosen = [result for result in scan.results if not request.machines or result.machine in request.machines]
    machines = ", ".join(sorted({result.machine for result in chosen})) or "none"
    said = (
        f"verify {len(project.matrix.expect)} expectations of {project.matrix.file} against "
        f"{len(results.latest(chosen))} stored cells (machines: {machines})"
    )
    session.log(safetext.for_terminal(said, keep_newlines=False))
    for line in misnamed(project, scan.results):  # before any --run: running again would not make the test
        session.warn(safetext.for_terminal(line, keep_newlines=False))
    if stale:
        names = " ".join(cell.session for cell in stale)
        if request.run:  # they ran, and still hold no record of what an expectation names: running again won't
            named_nothing = _named_nothing(project, stale, scan.results, handed, command)
            session.warn(safetext.for_terminal(named_nothing, keep_newlines=False))
        else:
            session.warn(
                f"no up-to-date result on {project.machine} for {names}; `{typed(command, 'verify', '--run')}` runs "
                "them first"
            )
    checks = expectations.check(project.matrix.expect, freshness.marked_stale(results.latest(chosen), project))
    for line in expectations.report(checks):
        print(safetext.for_terminal(line, keep_newlines=False), flush=True)
    tally = expectations.tally(checks)
    if not expectations.all_hold(checks):
        session.error(tally)
    session.log(tally)
