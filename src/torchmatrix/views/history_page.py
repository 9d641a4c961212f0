"""The page's view of a probe's checks across releases: a table per probe, filterable by name and by change.

Rows are checks (changes first), columns the releases of each machine and
device; each cell is coloured by the check's outcome and shows its error,
with ``●`` where its value or output changed from the previous release on the
same inputs. A cell opens the record's details, as the cells of the probe's
table do; the page's script filters the rows. Every text from a result file
is escaped here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from . import repro
from .escape import html_text as h
from .history import SHOWN_CHANGES, CheckInRelease, History, SincePrevious
from .model import Column, Row


def section(history: History, positions: Mapping[tuple[Row, Column], int], scripts: Collection[str] = ()) -> str:
    """The probe's history as HTML; ``positions`` gives the page's entry index of each (release, column) record;
    ``scripts``, the repro scripts written beside the page (:mod:`.repro`), which the changed samples link."""
    changed = set(history.changed_checks())
    lines = [
        f'<div class="history" data-probe="{h(history.probe)}">',
        "<h3>Checks across releases</h3>",
        '<div class="history-filters" hidden>'
        '<label>Check <input type="search" class="history-filter" placeholder="name or regular expression"></label>'
        '<label><input type="checkbox" class="history-changed"> only checks that changed</label>'
        '<span class="history-count"></span></div>',
        '<div class="scroll"><table class="matrix history-table">',
        _head(history),
        "<tbody>",
    ]
    # Escaped once per column and per tooltip, and looked up by the check's name alone, not once per cell by
    # (name, release, column): the sweep's history has thousands of cells.
    held: dict[tuple[Row, Column], dict[str, CheckInRelease]] = {}
    for (name, row, column), step in history.steps.items():
        held.setdefault((row, column), {})[name] = step
    places = [
        (held.get((row, column), {}), _where(column), positions.get((row, column)))
        for column in history.columns
        for row in history.releases[column]
    ]
    tips: dict[tuple[object, ...], str] = {}
    for name in history.checks:
        cells = "".join(_cell(steps.get(name), where, index, tips) for steps, where, index in places)
        flag = "1" if name in changed else "0"
        lines.append(f'<tr data-check="{h(name)}" data-changed="{flag}"><th scope="row">{h(name)}</th>{cells}</tr>')
    lines += ["</tbody></table></div>", _legend(), _samples(repro.sample_changes(history), scripts), "</div>"]
    return "\n".join(lines)


def _samples(changes: Sequence[repro.SampleChange], scripts: Collection[str]) -> str:
    """The samples whose output changed, each with its distance from float64 before and after, and its repro."""
    if not changes:
        return ""
    rows = []
    for change in changes:
        link = (
            f'<a href="{h(change.script)}">{h(change.script.rpartition("/")[2])}</a>'
            if change.script in scripts
            else ""
        )
        rows.append(
            f"<tr><td>{h(change.check)}</td><td>{h(change.column.label)}</td><td>{h(change.before.label)}</td>"
            f"<td>{h(change.after.label)}</td><td><code>{h(change.input)}</code></td>"
            f"<td><code>{h(change.output_before)}</code> → <code>{h(change.output_after)}</code></td>"
            f"<td>{h(change.ulps)}</td><td>{link}</td></tr>"
        )
    hint = (
        ", each with a repro: run it under both releases, or nox -s bisect -- &lt;repro&gt; --by-output --from A --to B"
        if any(change.script in scripts for change in changes)
        else ""
    )
    return (
        f'<details class="repros"><summary>{len(changes)} samples changed{hint}</summary>'
        '<div class="scroll"><table class="repros-table"><thead><tr><th scope="col">check</th>'
        '<th scope="col">machine, device</th><th scope="col">from</th><th scope="col">to</th>'
        '<th scope="col">input</th><th scope="col">output</th><th scope="col">ulps from float64</th>'
        f'<th scope="col">repro</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div></details>'
    )


def _head(history: History) -> str:
    groups, releases, compared = [], [], []
    transitions = {(item.column, item.after): item for item in history.transitions}
    holding = {(row, column) for _, row, column in history.steps}
    for column in history.columns:
        where = _where(column)
        rows = history.releases[column]
        groups.append(f'<th colspan="{len(rows)}" {where} scope="colgroup">{h(column.label)}</th>')
        for row in rows:
            entry = history.entries.get((row, column))
            mark = f' class="o-{entry.mark.value}"' if entry and (row, column) not in holding else ""
            tip = f' title="{h(entry.record.message, 200)}"' if mark and entry and entry.record else ""
            releases.append(f'<th {where}{mark}{tip} scope="col">{h(row.label)}</th>')
            transition = transitions.get((column, row))
            if transition is None:
                compared.append(f"<th {where}>–</th>")
            else:
                tip = (
                    f"from {transition.before.label}: {transition.in_both} checks in both, {transition.compared} "
                    f"with the same inputs, {transition.refused} samples refused, {len(transition.changed)} changed"
                )
                if transition.samples_from:
                    tip += f"; samples: {transition.samples_from}"
                differs = ""
                if transition.differs:
                    tip += "; torch saw another machine: " + "; ".join(transition.differs)
                    differs = ' <span class="differs">⚑</span>'
                compared.append(
                    f'<th {where} title="{h(tip)}">{transition.samples_compared}/{transition.samples}{differs}</th>'
                )
    return (
        f'<thead><tr><th scope="col" rowspan="2">check</th>{"".join(groups)}</tr>'
        f"<tr>{''.join(releases)}</tr>"
        f'<tr class="compared"><th scope="row" title="samples compared with the previous release, on the same '
        f'inputs, of the samples both hold">samples compared</th>{"".join(compared)}</tr></thead>'
    )


def _cell(step: CheckInRelease | None, where: str, index: int | None, tips: dict[tuple[object, ...], str]) -> str:
    """One check in one release; ``tips`` keeps each tooltip's escaped text, for the cells that share it."""
    if step is None:
        return f"<td {where}></td>"
    changed = " changed" if step.change is SincePrevious.CHANGED else ""
    opens = f' data-i="{index}" tabindex="0"' if index is not None else ""
    # A number as short_number() writes it (digits, '.', 'e', '+', '-', 'inf', 'nan') or our own symbols: no markup.
    text = (step.value or step.mark.symbol) + (f" {step.change.symbol}" if step.change.symbol else "")
    key = (step.mark, step.change, step.comparison, step.against, step.samples)
    if key not in tips:
        tips[key] = h(_tip(step))
    return f'<td class="cell o-{step.mark.value}{changed}" {where}{opens} title="{tips[key]}">{text}</td>'


def _tip(step: CheckInRelease) -> str:
    """The step's outcome and how it compares (its error is the cell's text)."""
    parts = [step.mark.value]
    comparison, against = step.comparison, step.against
    if against is not None and step.samples is not None:
        parts.append(
            f"{comparison.compared} of {step.samples} samples on the same inputs as {against.label}, "
            f"{comparison.changed} changed"
        )
    elif against is not None and comparison.comparable:
        parts.append(f"observed {'changed' if comparison.changed else 'the same'} since {against.label}")
    elif against is not None:
        parts.append(f"not compared with {against.label}: another probe file")
    elif step.change.meaning:
        parts.append(step.change.meaning)
    return "; ".join(parts)


def _where(column: Column) -> str:
    return f'data-machine="{h(column.machine)}" data-device="{h(column.device)}"'


def _legend() -> str:
    marks = "; ".join(f"{change.symbol} {change.meaning}" for change in SHOWN_CHANGES)
    return (
        "<p class=\"afterword\">A cell shows the check's error (or its outcome's symbol) in its outcome's colour; "
        f"{h(marks)}. The row under the releases: samples compared with the previous release, of those both hold; "
        "⚑ where torch saw another machine there (its CPU capability, BLAS or GPU: the tooltip says which).</p>"
    )
