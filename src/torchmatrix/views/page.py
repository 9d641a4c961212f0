"""The report as one self-contained HTML page: colour-coded tables, charts, details on click, filters.

Nothing is fetched when the page is viewed: styles, script, data and pictures
are inline, and a Content-Security-Policy lets through only that one style and
that one script (by their hashes), so nothing from a result file can run or
reach the network. Every text from a result file is escaped here, and the
script shows details with ``textContent`` only. The style and the script are
files of their own, in ``assets/``; what the script removes from a text comes
with the data, from :func:`torchmatrix.util.safetext.page_patterns`.

The address's fragment holds what the filters hide and which cell is open
(``#hide=device:mps,probe:autograd_dot&cell=3``), so a view can be linked.

A probe with more checks across releases than one reads on a page (the
operator sweep's thousand operators) gets a page of its own beside it
(:func:`pages`), linked from its section: the report's page stays light to
open and to link.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
from collections.abc import Collection, Mapping, Sequence
from importlib import resources
from typing import Any

from ..bisection.summaries import Summary
from ..core import Outcome
from ..results import safe_name
from ..util import safetext
from . import bisected, escape, history_page, supported
from .escape import html_text as h
from .front import Front, front
from .history import History
from .markdown import TITLE
from .model import SKIPPED, Column, Entry, Report, Row, Table

MANY_CHECKS = 100
"""A probe with more checks than this has its checks across releases on a page of its own (:func:`pages`)."""


def checks_page(probe: str) -> str:
    """The file name of ``probe``'s page of checks across releases, safe whatever the probe is called."""
    return f"compatibility-{safe_name(probe)}-checks.html"


def pages(
    name: str,
    report: Report,
    charts: Mapping[str, str] | None = None,
    histories: Sequence[History] = (),
    bisections: Sequence[Summary] = (),
    scripts: Collection[str] = (),
) -> dict[str, str]:
    """File name -> page: the report's page as ``name`` (:func:`render`), and a page for each probe with more
    than :data:`MANY_CHECKS` checks, holding its table, its picture and its checks across releases, which the
    report's page links in their place (and which link it back)."""
    charts = charts or {}
    apart = {history.probe: history for history in histories if len(history.checks) > MANY_CHECKS}
    found = {name: render(report, charts, histories, bisections, scripts, apart)}
    for table in report.tables:
        if table.probe not in apart:
            continue
        alone = dataclasses.replace(report, tables=(table,))
        title = f"{TITLE}: {table.probe}, its checks across releases"
        found[checks_page(table.probe)] = render(
            alone, {table.probe: charts[table.probe]} if table.probe in charts else {}, (apart[table.probe],),
            (), scripts, title=title, home=name,
        )  # fmt: skip
    return found


@functools.cache
def asset(name: str) -> str:
    """A file of the page's style or script, as kept beside this module (``assets/``)."""
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8").strip()


def render(
    report: Report,
    charts: Mapping[str, str] | None = None,
    histories: Sequence[History] = (),
    bisections: Sequence[Summary] = (),
    scripts: Collection[str] = (),
    apart: Collection[str] = (),
    title: str = TITLE,
    home: str = "",
) -> str:
    """compatibility.html. ``charts`` maps a probe to its picture (an ``<svg>`` element), shown under its table;
    ``histories`` are the probes' checks across releases (:func:`torchmatrix.views.history.histories`), under it;
    ``bisections``, the stored bisections' summaries, are shown in a section after the tables; ``scripts``, the
    repro scripts written beside it (:mod:`.repro`), are linked from the samples that changed; the histories of
    the probes in ``apart`` are on pages of their own (:func:`pages`), which it links; ``title``, its heading;
    ``home``, the report's page it links back to, for such a page of one probe.
    """
    charts = charts or {}
    history_of = {history.probe: history for history in histories}
    entries: list[dict[str, Any]] = []
    cells: dict[int, int] = {}
    data_cells: list[dict[str, Any]] = []
    back = f' <a href="{h(home)}">The whole report.</a>' if home else ""
    body = [
        f"<h1>{h(title)}</h1>",
        f'<p class="intro">{h(report.describe())} Click a cell for its numbers and environment.{back}</p>',
        _filters(report),
        _legend(report),
    ]
    tests = front(report)
    if tests:
        body.append(_front(tests))
    for table in report.tables:
        body.append(f'<section class="probe" data-probe="{h(table.probe)}">')
        body.append(f"<h2>{h(table.probe)}</h2>")
        positions: dict[tuple[Row, Column], int] = {}
        elsewhere = checks_page(table.probe) if table.probe in apart else ""
        body.append(_table(report, table, entries, cells, data_cells, positions, elsewhere))
        if table.probe in charts:
            body.append(f"<figure>{charts[table.probe]}</figure>")
        if table.probe in apart:
            body.append(_elsewhere(history_of[table.probe]))
        elif table.probe in history_of:
            body.append(history_page.section(history_of[table.probe], positions, scripts))
        body.append("</section>")
    if bisections:
        body.append(bisected.html(bisections))
    if report.notes:
        body.append('<section id="notes"><h2>Notes</h2><ol>')
        body += [f'<li id="note-{number}">{h(note)}</li>' for number, note in enumerate(report.notes, start=1)]
        body.append("</ol></section>")
    marks = {mark.value: {"symbol": mark.symbol, "meaning": mark.meaning} for mark in Outcome}
    data = {
        "cells": data_cells, "entries": entries, "notes": list(report.notes), "marks": marks,
        "text": safetext.page_patterns(),
    }  # fmt: skip
    # In a <script> element only `</` (and `<!--`) could end it early; escaped, the JSON means the same.
    payload = escape.json_text(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e")
    style = "\n".join(asset(name) for name in ("page.css", "history.css", *(["bisected.css"] if bisections else [])))
    script = asset("page.js")
    policy = (
        f"default-src 'none'; style-src '{_digest(style)}'; script-src '{_digest(script)}'; "
        "base-uri 'none'; form-action 'none'"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{h(title)}</title>",
            f"<style>{style}</style>",
            "</head>",
            "<body>",
            *body,
            '<aside id="details" hidden aria-live="polite">',
            '<button type="button" class="close" id="details-close" aria-label="Close">✕</button>',
            '<h2 id="details-title"></h2><div id="details-body"></div>',
            "</aside>",
            f'<script type="application/json" id="torchmatrix-data">{payload}</script>',
            f"<script>{script}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


def _elsewhere(history: History) -> str:
    """Where a probe's checks across releases are, when they have a page of their own."""
    count = f"{len(history.checks):,} checks"
    changed = len(history.changed_checks())
    return (
        f'<div class="history"><h3>Checks across releases</h3><p><a href="{h(checks_page(history.probe))}">'
        f"Its {count} across releases</a>, {changed} of them changed somewhere: on a page of their own.</p></div>"
    )


def _digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _filters(report: Report) -> str:
    groups = [
        ("probe", "Probes", [table.probe for table in report.tables]),
        ("device", "Devices", list(dict.fromkeys(column.device for column in report.columns))),
        ("machine", "Machines", list(report.machines)),
    ]
    parts = ['<nav id="filters" aria-label="Filters" hidden>']
    for kind, title, names in groups:
        if len(names) < 2:
            continue  # nothing to choose between
        parts.append(f"<fieldset><legend>{title}</legend>")
        parts += [
            f'<label><input type="checkbox" checked data-kind="{kind}" value="{h(name)}"> {h(name)}</label>'
            for name in names
        ]
        parts.append("</fieldset>")
    parts.append("</nav>")
    return "".join(parts)


def _legend(report: Report) -> str:
    items = "".join(
        f'<li><span class="cell o-{mark.value}">{mark.symbol}</span><span><b>{name}</b>: {h(meaning)}</span></li>'
        for mark, name, meaning in report.legend()
    )
    afterword = "".join(f'<p class="afterword">{h(line)}</p>' for line in report.afterword())
    return f'<section id="legend"><h2>Legend</h2><ul>{items}</ul>{afterword}</section>'


def _collapsed(names: Sequence[str]) -> str:
    """Names (escaped) as a front-table cell lists them: the first few, the others behind a click."""
    shown, more = supported.cut(names)
    hidden = f" <details><summary>and {len(more)} more</summary>{', '.join(more)}</details>" if more else ""
    return ", ".join(shown) + hidden


def _column_heads(report: Report) -> str:
    """A table's headings of its columns: the machine, and under it the device."""
    return "".join(
        f'<th data-machine="{h(column.machine)}" data-device="{h(column.device)}" scope="col">'
        f'{h(column.machine)}<span class="sep"> · </span><span class="device">{h(column.device)}</span></th>'
        for column in report.columns
    )


def _front(tests: Front) -> str:
    """The tests' front table: how they went in each release, on each machine and device; each test's table follows."""
    report = tests.report
    head = _column_heads(report)
    lines = [
        '<section id="tests"><h2>Tests</h2><div class="scroll"><table class="front">',
        f'<thead><tr><th scope="col">torch</th><th scope="col">python</th>{head}</tr></thead><tbody>',
    ]
    for row in tests.rows:
        cells = "".join(
            f'<td data-machine="{h(column.machine)}" data-device="{h(column.device)}">'
            f"{tests.summary(row, column, h, _collapsed)}</td>"
            for column in report.columns
        )
        lines.append(
            f'<tr><th scope="row">{_release(report, row)}</th><td class="py">{h(report.python_text(row))}</td>'
            f"{cells}</tr>"
        )
    lines.append("</tbody></table></div>")
    if tests.passed_everywhere():
        lines.append(f'<p class="afterword">{h(tests.passed_everywhere())}</p>')
    lines.append("</section>")
    return "\n".join(lines)


def _release(report: Report, row: Row) -> str:
    """A row's heading: its release, and the number of its note on what it was installed under, if it has one."""
    number = report.row_notes.get(row)
    return h(row.torch) + (f"<sup>{number}</sup>" if number else "")


def _table(
    report: Report,
    table: Table,
    entries: list[dict[str, Any]],
    cells: dict[int, int],
    data_cells: list[dict[str, Any]],
    positions: dict[tuple[Row, Column], int],
    elsewhere: str = "",
) -> str:
    """The probe's table; each of its cells' index among ``entries`` goes into ``positions``; ``elsewhere``, the
    page that lists its checks, where they are left out of this one's details."""
    head = _column_heads(report)
    lines = [
        '<div class="scroll"><table class="matrix">',
        f'<thead><tr><th scope="col">torch</th><th scope="col">python</th>{head}</tr></thead><tbody>',
    ]
    # Escaped once per column and per row, not once per cell: a report may have 10,000 cells.
    columns = [
        (column, f'data-machine="{h(column.machine)}" data-device="{h(column.device)}"', h(column.label))
        for column in report.columns
    ]
    for row in table.rows:
        parts = [f'<tr><th scope="row">{_release(report, row)}</th><td class="py">{h(report.python_text(row))}</td>']
        row_tip = h(f"torch {row.label}") + " · "
        for column, where, column_label in columns:
            entry = table.entries.get((row, column))
            if entry is None:
                parts.append(f"<td {where}></td>")
                continue
            index = positions[row, column] = len(entries)
            entries.append(_entry_data(table.probe, column.device, entry, cells, data_cells, elsewhere))
            note = f"<sup>{entry.note}</sup>" if entry.note else ""
            message = entry.record.message if entry.record else entry.result.message
            said = SKIPPED if entry.skipped else entry.mark.value
            tip = f"{row_tip}{column_label}: {said}" + (f" — {h(message, 200)}" if message else "")
            parts.append(
                f'<td class="cell o-{entry.mark.value}" {where} data-i="{index}" tabindex="0" title="{tip}">'
                f"{entry.mark.symbol}{note}</td>"
            )
        parts.append("</tr>")
        lines.append("".join(parts))
    lines.append("</tbody></table></div>")
    return "\n".join(lines)


def _entry_data(
    probe: str, device: str, entry: Entry, cells: dict[int, int], data_cells: list[dict[str, Any]], elsewhere: str
) -> dict[str, Any]:
    """What the details panel shows of one cell; each result's environment is stored once; its checks are left to
    the page ``elsewhere`` where one is named."""
    result, record = entry.result, entry.record
    key = id(result)
    if key not in cells:
        cells[key] = len(data_cells)
        data_cells.append(
            {
                "machine": result.machine,
                "torch": result.torch,
                "python": result.python,
                "session": result.session,
                "cell_id": result.cell_id,
                "finished_at": result.finished_at,
                "environment": result.environment,
            }
        )
    return {
        "cell": cells[key],
        "probe": probe,
        "device": device,
        "mark": entry.mark.value,
        "note": entry.note,
        "message": record.message if record else result.message,
        "duration": record.duration if record else None,
        "metrics": _panel_metrics(record.metrics, elsewhere) if record else {},
    }


def _panel_metrics(metrics: dict[str, Any], elsewhere: str = "") -> dict[str, Any]:
    """What the details panel shows of a record's metrics: a check's ``samples`` digests as their number; where
    the checks are on a page ``elsewhere``, their number and that page instead.

    The operator sweep keeps two digests per sample for every operator; they are for comparing releases (the
    checks across releases show that), and the result file keeps them.
    """
    checks = metrics.get("checks")
    if elsewhere and isinstance(checks, list):
        return dict(metrics, checks=f"{len(checks):,}, on {elsewhere}")
    if not isinstance(checks, list) or not any(isinstance(check, dict) and "samples" in check for check in checks):
        return metrics
    counted = [
        dict(check, samples=len(check["samples"])) if isinstance(check, dict) and isinstance(check.get("samples"), list)
        else check
        for check in checks
    ]  # fmt: skip
    return dict(metrics, checks=counted)
