"""The report as one self-contained HTML page: colour-coded tables, charts, details on click, filters.

Nothing is fetched when the page is viewed: styles, script, data and pictures
are inline, and a Content-Security-Policy lets through only that one style and
that one script (by their hashes), so nothing from a result file can run or
reach the network. Every text from a result file is escaped here, and the
script shows details with ``textContent`` only.

The address's fragment holds what the filters hide and which cell is open
(``#hide=device:mps,probe:autograd_dot&cell=3``), so a view can be linked.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from ..core import Outcome
from ..summaries import Summary
from . import bisected, escape, history_page
from .escape import html_text as h
from .history import History
from .markdown import TITLE
from .model import Column, Entry, Report, Row, Table

STYLE = """
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif,
              "Apple Color Emoji", "Segoe UI Emoji", "Noto Color Emoji", "Symbola"; color: #1f2328;
       margin: 0 auto; padding: 1rem 1.5rem 4rem; max-width: 90rem; }
h1 { font-size: 1.6rem; margin: .5rem 0; }
h2 { font-size: 1.2rem; margin: 1.6rem 0 .6rem; }
[hidden] { display: none !important; }
.intro { color: var(--muted); margin: 0 0 1rem; }
#filters { display: flex; flex-wrap: wrap; gap: .75rem; margin: 0 0 1rem; }
#filters fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .3rem .7rem .5rem; margin: 0; }
#filters legend { font-weight: 600; padding: 0 .3rem; }
#filters label { margin-right: .8rem; white-space: nowrap; }
.scroll { overflow-x: auto; }
table.matrix { border-collapse: collapse; }
.matrix th, .matrix td { border: 1px solid var(--line); padding: .3rem .6rem; }
.matrix thead th { background: #f6f8fa; font-weight: 600; vertical-align: bottom; }
.matrix thead th span { display: block; font-weight: normal; color: var(--muted); }
.matrix tbody th { text-align: left; font-weight: 600; max-width: 16rem; overflow-wrap: anywhere; }
.matrix thead th { max-width: 16rem; overflow-wrap: anywhere; }
.matrix td.py { color: var(--muted); white-space: nowrap; }
.cell { text-align: center; min-width: 4.5rem; font-weight: 600; cursor: pointer; white-space: nowrap; }
.cell:focus, .cell.selected { outline: 3px solid #0969da; outline-offset: -3px; }
.cell sup { font-weight: normal; margin-left: .1rem; }
.o-pass { background: #dafbe1; color: #116329; }
.o-within-tolerance { background: #eef6d0; color: #4d6608; }
.o-fail { background: #ffcecb; color: #a40e26; }
.o-error { background: #ffe2cc; color: #953800; }
.o-crash { background: #82071e; color: #ffffff; }
.o-timeout { background: #fff1b3; color: #7d4e00; }
.o-unavailable { background: #f6f8fa; color: #8c959f; }
.o-unstable { background: #f3e8ff; color: #6e40c9; }
.o-no-interpreter, .o-no-wheel { background: #eaeef2; color: #424a53; }
.o-install-error { background: #ffd8b5; color: #762c00; }
#legend ul { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(22rem, 1fr));
             gap: .3rem 1rem; }
#legend li { display: flex; gap: .6rem; align-items: baseline; }
#legend .cell { display: inline-block; min-width: 4.5rem; padding: .1rem .4rem; border-radius: 4px; cursor: default; }
figure { margin: 1rem 0; overflow-x: auto; }
figure svg { max-width: none; }
#notes li { margin: .2rem 0; }
.afterword { color: var(--muted); }
#details { position: fixed; top: 0; right: 0; bottom: 0; width: min(46rem, 100vw); overflow-y: auto; background: #fff;
           border-left: 1px solid var(--line); box-shadow: -6px 0 18px rgba(31, 35, 40, .12); padding: 1rem 1.2rem; }
#details h2 { margin-top: 0; padding-right: 2.5rem; }
#details h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
#details .close { position: absolute; top: .8rem; right: 1rem; font-size: 1.1rem; }
#details dl { display: grid; grid-template-columns: minmax(0, max-content) minmax(0, 1fr); gap: .15rem .8rem;
              margin: 0; }
#details dt { color: var(--muted); max-width: 12rem; overflow-wrap: anywhere; }
#details dd { margin: 0; overflow-wrap: anywhere; }
#details pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; padding: .5rem; border-radius: 6px;
               max-height: 16rem; overflow-y: auto; margin: 0; }
#details table { border-collapse: collapse; width: 100%; font-size: 12px; }
#details table th, #details table td { border: 1px solid var(--line); padding: .2rem .35rem; text-align: left;
                                       vertical-align: top; overflow-wrap: break-word; }
#details table td:first-child { min-width: 12rem; }
#details .bad { background: #ffcecb; }
"""

SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("torchmatrix-data").textContent);
  var panel = document.getElementById("details");
  var selected = null;
  // What a result file holds is shown as text, never as markup; terminal escapes and invisible characters go too.
  function clean(text) {
    return String(text)
      .replace(/\x1b(?:\[[0-?]*[ -\/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])?/g, "")
      .replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, "\ufffd");
  }
  function node(tag, text, className) {
    var element = document.createElement(tag);
    if (text !== undefined && text !== null) { element.textContent = clean(text); }
    if (className) { element.className = className; }
    return element;
  }
  // Numbers to 4 significant digits (the stored files keep them whole); lists item by item.
  function show(value) {
    if (typeof value === "string") { return value; }
    if (typeof value === "number") {
      if (Number.isInteger(value)) { return String(value); }
      var size = Math.abs(value);
      return size !== 0 && (size < 1e-3 || size >= 1e6) ? value.toExponential(3) : String(Number(value.toPrecision(4)));
    }
    if (Array.isArray(value)) { return "[" + value.map(show).join(", ") + "]"; }
    return JSON.stringify(value);
  }
  function pairs(object) {
    var list = node("dl");
    Object.keys(object).forEach(function (key) {
      list.appendChild(node("dt", key));
      list.appendChild(node("dd", show(object[key])));
    });
    return list;
  }
  function checksTable(checks) {
    var keys = ["name", "observed", "expected", "error", "tolerance", "ok"];  // what every probe records, first
    checks.forEach(function (check) {
      Object.keys(check).forEach(function (key) { if (keys.indexOf(key) < 0) { keys.push(key); } });
    });
    var table = node("table"), head = table.insertRow();
    keys.forEach(function (key) { head.appendChild(node("th", key)); });
    checks.forEach(function (check) {
      var row = table.insertRow();
      if (check.ok === false) { row.className = "bad"; }
      keys.forEach(function (key) { row.appendChild(node("td", key in check ? show(check[key]) : "")); });
    });
    return table;
  }
  function open(index) {
    var entry = data.entries[index];
    if (!entry) { return; }
    var cell = data.cells[entry.cell], body = document.getElementById("details-body");
    body.textContent = "";
    document.getElementById("details-title").textContent =
      clean(entry.probe + " · torch " + cell.torch + " · " + cell.machine + " · " + entry.device);
    var mark = data.marks[entry.mark];
    body.appendChild(node("p", mark.symbol + " " + entry.mark + ": " + mark.meaning, "o-" + entry.mark));
    if (entry.note) { body.appendChild(node("p", "Note " + entry.note + ": " + data.notes[entry.note - 1])); }
    var facts = {"python": cell.python, "session": cell.session, "cell": cell.cell_id, "finished": cell.finished_at};
    if (entry.duration !== null) { facts.seconds = entry.duration; }
    body.appendChild(pairs(facts));
    if (entry.message) { body.appendChild(node("h3", "Message")); body.appendChild(node("pre", entry.message)); }
    var metrics = entry.metrics || {}, rest = {};
    if (Array.isArray(metrics.checks)) {
      body.appendChild(node("h3", "Checks"));
      var checks = metrics.checks.filter(function (check) { return check && typeof check === "object"; });
      body.appendChild(checksTable(checks));
    }
    Object.keys(metrics).forEach(function (key) { if (key !== "checks") { rest[key] = metrics[key]; } });
    if (Object.keys(rest).length) { body.appendChild(node("h3", "Metrics")); body.appendChild(pairs(rest)); }
    body.appendChild(node("h3", "Environment"));
    body.appendChild(Object.keys(cell.environment).length ? pairs(cell.environment) : node("p", "not recorded"));
    if (selected) { selected.classList.remove("selected"); }
    selected = document.querySelector('[data-i="' + index + '"]');
    if (selected) { selected.classList.add("selected"); }
    panel.hidden = false;
    state.cell = String(index);
    save();
  }
  function close() {
    panel.hidden = true;
    if (selected) { selected.classList.remove("selected"); selected.focus(); selected = null; }
    delete state.cell;
    save();
  }
  // The filters: a hidden probe hides its section, a hidden device or machine hides its columns.
  var state = {};
  function hiddenSet() {
    var hidden = {};
    document.querySelectorAll("#filters input").forEach(function (box) {
      if (!box.checked) { hidden[box.dataset.kind + ":" + box.value] = true; }
    });
    return hidden;
  }
  function apply() {
    var hidden = hiddenSet();
    document.querySelectorAll("section.probe").forEach(function (section) {
      section.hidden = !!hidden["probe:" + section.dataset.probe];
    });
    document.querySelectorAll("[data-device]").forEach(function (element) {  // table columns and chart series
      var off = !!(hidden["device:" + element.dataset.device] || hidden["machine:" + element.dataset.machine]);
      element.toggleAttribute("hidden", off);  // an attribute, not .hidden: SVG elements have no such property
    });
    var names = Object.keys(hidden);
    if (names.length) { state.hide = names.join(","); } else { delete state.hide; }
    save();
  }
  function save() {
    var parts = Object.keys(state).sort().map(function (key) {
      return key + "=" + state[key].split(",").map(encodeURIComponent).join(",");
    });
    try {
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
    } catch (error) { /* some browsers refuse this for a page opened from a file; the view still works */ }
  }
  // The checks across releases: rows filtered by name (a regular expression, or plain text where it is none)
  // and, if asked, to those that changed; one filter for every probe's, kept in the address.
  function matcher(text) {
    if (!text) { return function () { return true; }; }
    try {
      var pattern = new RegExp(text, "i");
      return function (name) { return pattern.test(name); };
    } catch (error) {
      var wanted = text.toLowerCase();
      return function (name) { return name.toLowerCase().indexOf(wanted) >= 0; };
    }
  }
  function filterChecks() {
    var matches = matcher(state.check || ""), changedOnly = state.changed === "1";
    document.querySelectorAll(".history").forEach(function (history) {
      var rows = history.querySelectorAll("tbody tr"), shown = 0;
      rows.forEach(function (row) {
        var visible = matches(row.dataset.check) && (!changedOnly || row.dataset.changed === "1");
        row.hidden = !visible;
        if (visible) { shown += 1; }
      });
      history.querySelector(".history-filter").value = state.check || "";
      history.querySelector(".history-changed").checked = changedOnly;
      history.querySelector(".history-count").textContent = shown + " of " + rows.length + " checks shown";
    });
  }
  function setCheckFilter(key, value) {
    if (value) { state[key] = value; } else { delete state[key]; }
    filterChecks();
    save();
  }
  document.querySelectorAll(".history-filters").forEach(function (filters) {
    filters.hidden = false;
    var search = filters.querySelector(".history-filter"), changed = filters.querySelector(".history-changed");
    search.addEventListener("input", function () { setCheckFilter("check", search.value); });
    changed.addEventListener("change", function () { setCheckFilter("changed", changed.checked ? "1" : ""); });
  });
  function load() {
    var wanted = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) { wanted[part.slice(0, at)] = part.slice(at + 1).split(",").map(decodeURIComponent); }
    });
    var hide = {};
    (wanted.hide || []).forEach(function (name) { hide[name] = true; });
    document.querySelectorAll("#filters input").forEach(function (box) {
      box.checked = !hide[box.dataset.kind + ":" + box.value];
    });
    ["check", "changed"].forEach(function (key) { if (wanted[key]) { state[key] = wanted[key].join(","); } });
    apply();
    filterChecks();
    if (wanted.cell) { open(Number(wanted.cell[0])); }
  }
  document.getElementById("filters").hidden = false;
  document.getElementById("filters").addEventListener("change", apply);
  document.addEventListener("click", function (event) {
    var cell = event.target.closest("[data-i]");
    if (cell) { open(Number(cell.dataset.i)); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !panel.hidden) { close(); return; }
    var cell = event.target.closest && event.target.closest("[data-i]");
    if (cell && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); open(Number(cell.dataset.i)); }
  });
  document.getElementById("details-close").addEventListener("click", close);
  load();
})();
"""


def render(
    report: Report,
    charts: Mapping[str, str] | None = None,
    histories: Sequence[History] = (),
    bisections: Sequence[Summary] = (),
) -> str:
    """compatibility.html. ``charts`` maps a probe to its picture (an ``<svg>`` element), shown under its table;
    ``histories`` are the probes' checks across releases (:func:`torchmatrix.report.history.histories`), under it;
    ``bisections``, the stored bisections' summaries, are shown in a section after the tables.
    """
    charts = charts or {}
    history_of = {history.probe: history for history in histories}
    entries: list[dict[str, Any]] = []
    cells: dict[int, int] = {}
    data_cells: list[dict[str, Any]] = []
    body = [
        f"<h1>{TITLE}</h1>",
        f'<p class="intro">{h(report.describe())} Click a cell for its numbers and environment.</p>',
        _filters(report),
        _legend(report),
    ]
    for table in report.tables:
        body.append(f'<section class="probe" data-probe="{h(table.probe)}">')
        body.append(f"<h2>{h(table.probe)}</h2>")
        positions: dict[tuple[Row, Column], int] = {}
        body.append(_table(report, table, entries, cells, data_cells, positions))
        if table.probe in charts:
            body.append(f"<figure>{charts[table.probe]}</figure>")
        if table.probe in history_of:
            body.append(history_page.section(history_of[table.probe], positions))
        body.append("</section>")
    if bisections:
        body.append(bisected.html(bisections))
    if report.notes:
        body.append('<section id="notes"><h2>Notes</h2><ol>')
        body += [f'<li id="note-{number}">{h(note)}</li>' for number, note in enumerate(report.notes, start=1)]
        body.append("</ol></section>")
    marks = {mark.value: {"symbol": mark.symbol, "meaning": mark.meaning} for mark in Outcome}
    data = {"cells": data_cells, "entries": entries, "notes": list(report.notes), "marks": marks}
    # In a <script> element only `</` (and `<!--`) could end it early; escaped, the JSON means the same.
    payload = escape.json_text(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e")
    style = (STYLE + history_page.STYLE + (bisected.STYLE if bisections else "")).strip()
    script = SCRIPT.strip()
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
            f"<title>{TITLE}</title>",
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
        f'<li><span class="cell o-{mark.value}">{mark.symbol}</span>'
        f"<span><b>{mark.value}</b>: {mark.meaning}</span></li>"
        for mark in report.marks
    )
    afterword = "".join(f'<p class="afterword">{h(line)}</p>' for line in report.afterword())
    return f'<section id="legend"><h2>Legend</h2><ul>{items}</ul>{afterword}</section>'


def _table(
    report: Report,
    table: Table,
    entries: list[dict[str, Any]],
    cells: dict[int, int],
    data_cells: list[dict[str, Any]],
    positions: dict[tuple[Row, Column], int],
) -> str:
    """The probe's table; each of its cells' index among ``entries`` goes into ``positions``."""
    head = "".join(
        f'<th data-machine="{h(column.machine)}" data-device="{h(column.device)}" scope="col">'
        f"{h(column.machine)}<span>{h(column.device)}</span></th>"
        for column in report.columns
    )
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
        pythons = ", ".join(report.pythons.get(row, ()))
        parts = [f'<tr><th scope="row">{h(row.label)}</th><td class="py">{h(pythons)}</td>']
        row_tip = h(f"torch {row.label}") + " · "
        for column, where, column_label in columns:
            entry = table.entries.get((row, column))
            if entry is None:
                parts.append(f"<td {where}></td>")
                continue
            index = positions[row, column] = len(entries)
            entries.append(_entry_data(table.probe, column.device, entry, cells, data_cells))
            note = f"<sup>{entry.note}</sup>" if entry.note else ""
            message = entry.record.message if entry.record else entry.result.message
            tip = f"{row_tip}{column_label}: {entry.mark.value}" + (f" — {h(message, 200)}" if message else "")
            parts.append(
                f'<td class="cell o-{entry.mark.value}" {where} data-i="{index}" tabindex="0" title="{tip}">'
                f"{entry.mark.symbol}{note}</td>"
            )
        parts.append("</tr>")
        lines.append("".join(parts))
    lines.append("</tbody></table></div>")
    return "\n".join(lines)


def _entry_data(
    probe: str, device: str, entry: Entry, cells: dict[int, int], data_cells: list[dict[str, Any]]
) -> dict[str, Any]:
    """What the details panel shows of one cell; each result's environment is stored once."""
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
        "metrics": _panel_metrics(record.metrics) if record else {},
    }


def _panel_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """What the details panel shows of a record's metrics: a check's ``samples`` digests as their number.

    The operator sweep keeps two digests per sample for every operator; they are for comparing releases (the
    checks across releases show that), and the result file keeps them.
    """
    checks = metrics.get("checks")
    if not isinstance(checks, list) or not any(isinstance(check, dict) and "samples" in check for check in checks):
        return metrics
    counted = [
        dict(check, samples=len(check["samples"])) if isinstance(check, dict) and isinstance(check.get("samples"), list)
        else check
        for check in checks
    ]  # fmt: skip
    return dict(metrics, checks=counted)
