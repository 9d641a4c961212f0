"""The "changed in" section: what the stored bisections found, one table per question, for Markdown and HTML.

A pure function of the summaries (:func:`torchmatrix.bisection.summaries.scan`: finished
ones, the newest per question), like the rest of the report. Every text from a
summary file is escaped for the format it lands in; the commit link is made
from hashes checked to be hex, never taken from the file.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..bisection.summaries import COLUMNS, BisectedChange, Summary
from . import escape
from .escape import html_text as h

TITLE = "Changed in"
INTRO = (
    "found: for each (probe, device) whose outcome differs between the ends of a bisection, the first release "
    "with NEW's outcome, the last with OLD's, and the commits between their builds."
)
NONE_CHANGED = "No (probe, device) changed its outcome between these ends."
HEADER = (*COLUMNS, "commits")


def markdown(found: Sequence[Summary]) -> list[str]:
    """The section's lines for COMPATIBILITY.md; none without summaries."""
    if not found:
        return []
    lines = [f"## {TITLE}", "", f"What `nox -s bisect` {INTRO}", ""]
    for summary in found:
        lines += [f"### {escape.markdown(summary.describe())}", ""]
        if not summary.changes:
            lines += [NONE_CHANGED, ""]
            continue
        lines += [_markdown_row(list(HEADER)), _markdown_row([":--"] * len(HEADER))]
        for change in summary.changes:
            lines.append(_markdown_row([*map(escape.markdown, change.cells()), _markdown_link(change)]))
        lines.append("")
    return lines


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _markdown_link(change: BisectedChange) -> str:
    commits = change.commits
    return f"[{commits.old[:12]}…{commits.new[:12]}]({commits.url})" if commits else ""


def html(found: Sequence[Summary]) -> str:
    """The section for compatibility.html; '' without summaries."""
    if not found:
        return ""
    parts = [
        f'<section id="changed-in"><h2>{TITLE}</h2>',
        f'<p class="intro">What <code>nox -s bisect</code> {INTRO}</p>',
    ]
    for summary in found:
        parts.append(f"<h3>{h(summary.describe())}</h3>")
        if not summary.changes:
            parts.append(f"<p>{NONE_CHANGED}</p>")
            continue
        head = "".join(f'<th scope="col">{h(name)}</th>' for name in HEADER)
        rows = "".join(
            "<tr>" + "".join(f"<td>{h(cell)}</td>" for cell in change.cells()) + f"<td>{_html_link(change)}</td></tr>"
            for change in summary.changes
        )
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
    parts.append("</section>")
    return "\n".join(parts)


def _html_link(change: BisectedChange) -> str:
    commits = change.commits
    if commits is None:
        return ""
    return f'<a href="{h(commits.url)}" rel="noreferrer">{h(commits.old[:12])}…{h(commits.new[:12])}</a>'
