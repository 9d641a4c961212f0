"""SUPPORTED.md: the table a library pastes into its docs, "supported torch versions".

One row per torch release, newest first: the Python its cell ran on, then,
per device (per machine and device, when results of several machines are
merged), how its probes went: ``✓ all 4 pass``, or the worst outcome with
what did not pass (``✗ 3 of 4 pass; fail: test_far_tail``), every outcome a
record can have (``unstable``, ``stale``) included; tests that did not run
(skipped, a device the build lacks) are counted apart and named
(``2 of 6 skipped (unavailable): test_cuda, test_mps``), never left out. Beside
tests, a probe that is none (a script, a ``run(device)`` module) is named with
its outcome (``✓ repro.py: pass``), never counted as a test. A matrix whose
probes are the library's tests gives a row per release that says whether
the library works there. Names lose the part every probe shares
(``tests/test_log_cdf.py::``), so that the cells stay short.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Sequence

from ..core import Outcome
from . import escape
from .model import Column, Entry, Report, Row, Table, collectors, is_test, per_run

TITLE = "Supported torch versions"
WORST_FIRST = (Outcome.CRASH, Outcome.TIMEOUT, Outcome.ERROR, Outcome.FAIL)
PASSING = (Outcome.PASS, Outcome.WITHIN_TOLERANCE)


def render(report: Report) -> str:
    rows = sorted({row for table in report.tables for row in table.rows}, key=Row.sort_key, reverse=True)
    machines = len(report.machines) > 1
    labels = [column.label if machines else column.device for column in report.columns]
    header = ["torch", "Python", *map(escape.markdown, labels)]
    lines = [f"## {TITLE}", "", _line(header), _line([":--", ":--", *[":--"] * len(report.columns)])]
    ran = [table.probe for table in report.tables if any(e.record for e in table.entries.values())]
    shorten = shortener([probe for probe in ran if is_test(probe)] or ran)  # what the tests share, where there are
    uncollected = collectors(table.probe for table in report.tables)
    for row in rows:
        pythons = report.python_text(row) or "-"
        cells = [
            cell_text(entries(report.tables, row, column), shorten, uncollected=uncollected)
            for column in report.columns
        ]
        lines.append(_line([escape.markdown(row.torch), escape.markdown(pythons), *cells]))
    if report.results:
        lines += ["", escape.markdown(f"Each cell: how the tests went on that device. {_provenance(report)}")]
    # What a release was installed under besides torch, where the one beside it was not: each note names its release.
    lines += [f"\n{escape.markdown(report.notes[number - 1])}" for number in report.row_notes.values()]
    return "\n".join(lines) + "\n"


def entries(tables: Sequence[Table], row: Row, column: Column) -> list[tuple[str, Entry]]:
    """(probe, entry) of each of ``tables`` that has one at (``row``, ``column``)."""
    found = ((table.probe, table.entries.get((row, column))) for table in tables)
    return [(probe, entry) for probe, entry in found if entry is not None]


SHOWN_NAMES = 5
"""A cell names this many tests of a kind, then says how many more."""


def cut(names: Sequence[str]) -> tuple[Sequence[str], Sequence[str]]:
    """The names a cell shows, and those it only counts: the first :data:`SHOWN_NAMES`, where there are more."""
    if len(names) <= SHOWN_NAMES + 1:  # "and 1 more" is no shorter than the name
        return names, ()
    return names[:SHOWN_NAMES], names[SHOWN_NAMES:]


def listed(names: Sequence[str]) -> str:
    """Names as a cell lists them: every one, or the first few and how many more (:func:`cut`)."""
    shown, more = cut(names)
    return ", ".join(shown) + (f" and {len(more)} more" if more else "")


def cell_text(
    entries: Sequence[tuple[str, Entry]],
    shorten: int,
    quote: Callable[[str], str] = escape.markdown,
    uncollected: Collection[str] = (),
    join: Callable[[Sequence[str]], str] = listed,
) -> str:
    """How the probes of one row and column went: ``✓ all 4 pass``, ``✗ 3 of 4 pass; fail: test_far_tail``, ….

    ``shorten``: the characters every name loses in front (:func:`shortener`); ``quote`` escapes a name;
    ``uncollected``: the names of files that did not collect somewhere (:func:`.model.collectors`), shown as such
    with why, those of one cause together (``E tests/test_b.py, tests/test_c.py: not collected (error:
    ModuleNotFoundError: No module named 'scipy')``), never counted as tests, nor is a probe that is no test
    where there are tests (``✓ repro.py: pass``); ``join`` lists the names
    of one kind, quoted (:func:`listed`: a long list is cut short). The text around the names holds no
    markup of any format: it needs no escaping.
    """
    if not entries:
        return ""
    if all(entry.record is None for _, entry in entries):  # the cell did not run: its outcome says why
        return entries[0][1].mark.value
    files: dict[tuple[Outcome, str], list[str]] = {}
    after: list[str] = []
    for probe, entry in entries:
        if probe in uncollected and entry.record is not None and entry.record.metrics.get(AFTER_TESTS) is True:
            after.append(f"{entry.mark.symbol} {quote(probe)}: pytest's run failed after its tests ({entry.mark.value}"
                         f": {quote(collect_error(entry.record.message))})")  # fmt: skip
        elif probe in uncollected and entry.record is not None:
            files.setdefault((entry.mark, collect_error(entry.record.message)), []).append(probe)
    tested = [(probe, entry) for probe, entry in entries if probe not in uncollected]
    mixed = any(is_test(probe) for probe, _ in tested)
    others = [(probe, entry) for probe, entry in tested if mixed and not is_test(probe)]
    tested = [(probe, entry) for probe, entry in tested if not mixed or is_test(probe)]
    each = [f"{entry.mark.symbol} {quote(probe)}: {entry.mark.value}" for probe, entry in others if entry.record]
    said = [
        f"{mark.symbol} {join([quote(probe) for probe in probes])}: not collected ({mark.value}"
        + (f": {quote(cause)})" if cause else ")")
        for (mark, cause), probes in files.items()
    ]
    shown = _tests_text(tested, shorten, quote, join) if any(entry.record for _, entry in tested) else ""
    return "; ".join(filter(None, [shown, *each, *said, *after]))


AFTER_TESTS = "after_tests"
"""The metric of a record of a file whose pytest run failed though none of its tests did (its records' worker
names it so): shown as such, not as a file that did not collect."""


CAUSE_LIMIT = 120
"""How much of why a file did not collect a cell shows; the file's own table has all of its first line."""
_PYTEST_MARK = re.compile(r"^E\s+")
"""How pytest marks the exception's line in its report (``E   ModuleNotFoundError: …``)."""


def collect_error(message: str) -> str:
    """Why a file did not collect, in a line: the first of its record's message, less what differs from run to run."""
    line = next((line.strip() for line in message.splitlines() if line.strip()), "")
    line = per_run(_PYTEST_MARK.sub("", line))
    return line if len(line) <= CAUSE_LIMIT else line[: CAUSE_LIMIT - 1] + "…"


def _tests_text(
    entries: Sequence[tuple[str, Entry]],
    shorten: int,
    quote: Callable[[str], str],
    join: Callable[[Sequence[str]], str],
) -> str:
    ran = [(probe, entry.mark) for probe, entry in entries if entry.mark is not Outcome.UNAVAILABLE]
    skipped = [probe for probe, entry in entries if entry.mark is Outcome.UNAVAILABLE]
    if not ran:
        return f"{Outcome.UNAVAILABLE.symbol} unavailable" + (f": all {len(skipped)}" if len(skipped) > 1 else "")
    passed = sum(mark in PASSING for _, mark in ran)
    if passed == len(ran):
        shown = f"{Outcome.PASS.symbol} all {len(ran)} pass" if len(ran) > 1 else f"{Outcome.PASS.symbol} pass"
    else:
        order = [*WORST_FIRST, *(mark for mark in Outcome if mark not in WORST_FIRST)]
        marks = [mark for mark in order if mark not in PASSING and any(seen is mark for _, seen in ran)]
        failures = [
            f"{mark.value}: " + join([quote(probe[shorten:]) for probe, seen in ran if seen is mark]) for mark in marks
        ]
        shown = f"{marks[0].symbol} {passed} of {len(ran)} pass; " + "; ".join(failures)
    if skipped:  # a test that did not run is no pass: how many of all there are, and which
        names = join([quote(probe[shorten:]) for probe in skipped])
        shown += f"; {len(skipped)} of {len(entries)} skipped ({Outcome.UNAVAILABLE.value}): {names}"
    return shown


def shortener(names: Sequence[str]) -> int:
    """How many leading characters every name shares up to its last ``::`` or ``/`` (0 when one name stands alone)."""
    if len(names) < 2:
        return 0
    common = os.path.commonprefix(list(names))
    return max(common.rfind("::") + 2 if "::" in common else 0, common.rfind("/") + 1)


def _provenance(report: Report) -> str:
    return f"Measured by torchmatrix on {', '.join(report.machines)}; the newest result finished {report.updated}."


def _line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
