"""A picture per probe: its worst error over tolerance, per torch release and device, as an SVG drawn by hand.

Each point is one cell's largest ``error / tolerance`` over its checks (see
:func:`.model.error_ratio`): below the dashed line at 1 the numbers are within
tolerance, above it they are not. The y axis is logarithmic; a ratio of 0 (an
exact result) sits on a band below it, and a failed exact check (infinity) on
a band above it. A probe gets a picture when some check has a tolerance.

A cell is plotted only where its outcome rests on its checks: a record that
passes though a check of it is beyond tolerance (the operator sweep's, which
passes when the sweep ran and leaves each operator's outcome to its checks)
would sit in the red above the line while its table says ✓; its checks
across releases show each check's outcome instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core import Outcome
from ..results import safe_name
from .escape import html_text
from .model import Column, Entry, Report, Table

# Okabe and Ito's palette, which colour-blind readers tell apart; each series also gets its own marker shape.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#999933")
MARKERS = ("circle", "square", "triangle", "diamond")
LEFT, TOP, PLOT_HEIGHT, BAND, BOTTOM, LEGEND = 64, 66, 220, 30, 78, 230
STEP = 56
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"'


@dataclass(frozen=True)
class Series:
    column: Column
    points: tuple[tuple[int, float, bool], ...]
    """(row index, error/tolerance, whether bit-identity was recorded and not met)."""


def file_name(probe: str) -> str:
    """The picture's file name, safe whatever the probe is called."""
    return f"compatibility-{safe_name(probe)}.svg"


def title(probe: str) -> str:
    return f"{probe}: worst error ÷ tolerance, per torch release and device"


def charts(report: Report) -> dict[str, str]:
    """probe -> SVG, for every probe with at least one check that has a tolerance."""
    drawn = {}
    for table in report.tables:
        series = _series(report, table)
        if any(0 < ratio < math.inf for one in series for _, ratio, _ in one.points):
            drawn[table.probe] = render(table, series)
    return drawn


def _series(report: Report, table: Table) -> list[Series]:
    found = []
    for column in report.columns:
        points = []
        for index, row in enumerate(table.rows):
            entry = table.entries.get((row, column))
            if entry and entry.ratio is not None and not _passes_regardless(entry):
                points.append((index, entry.ratio, entry.mark is Outcome.WITHIN_TOLERANCE))
        if points:
            found.append(Series(column, tuple(points)))
    return found


def _passes_regardless(entry: Entry) -> bool:
    """Whether the cell passed though a check of it is beyond tolerance: its outcome is not its checks'."""
    return entry.mark in (Outcome.PASS, Outcome.WITHIN_TOLERANCE) and entry.ratio is not None and entry.ratio > 1


def render(table: Table, series: list[Series]) -> str:
    """One probe's picture (an ``<svg>`` element, usable as a file and inline in HTML)."""
    positive = [ratio for one in series for _, ratio, _ in one.points if 0 < ratio < math.inf]
    # A decade of room under the lowest point, so that it does not sit on the axis.
    low = min(math.floor(math.log10(min(positive))) - 1, -1) if positive else -1
    high = max(math.ceil(math.log10(max(positive))), 1) if positive else 1
    width = LEFT + max(len(table.rows) * STEP, 360) + LEGEND
    height = TOP + PLOT_HEIGHT + BAND + BOTTOM
    plot_right = width - LEGEND

    def x(index: int) -> float:
        return LEFT + STEP / 2 + index * (plot_right - LEFT - STEP) / max(len(table.rows) - 1, 1)

    def y(ratio: float) -> float:
        if ratio <= 0:
            return TOP + PLOT_HEIGHT + BAND / 2
        if ratio == math.inf:
            return TOP - BAND / 2
        return TOP + PLOT_HEIGHT * (high - math.log10(ratio)) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" {FONT} font-size="12">',
        f"<title>{html_text(title(table.probe))}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{LEFT}" y="20" font-size="14" font-weight="600" fill="#1f2328">'
        f"{html_text(title(table.probe))}</text>",
        # Above the tolerance: shaded, so a point there reads as wrong at a glance.
        f'<rect x="{LEFT}" y="{TOP - BAND}" width="{plot_right - LEFT}" height="{y(1) - TOP + BAND:.1f}" '
        'fill="#ffebe9"/>',
        # The band of failed exact checks, apart from the decades beyond tolerance under it.
        f'<rect x="{LEFT}" y="{TOP - BAND}" width="{plot_right - LEFT}" height="{BAND}" fill="#ffcecb"/>',
        f'<text x="{LEFT - 6}" y="{TOP - BAND / 2 + 4}" text-anchor="end" fill="#cf222e">∞</text>',
    ]
    every = max(1, math.ceil((high - low) / 8))
    for decade in range(low, high + 1):
        at = y(10.0**decade)
        parts.append(f'<line x1="{LEFT}" y1="{at:.1f}" x2="{plot_right}" y2="{at:.1f}" stroke="#d0d7de"/>')
        if (decade - low) % every == 0 or decade == 0:
            parts.append(f'<text x="{LEFT - 6}" y="{at + 4:.1f}" text-anchor="end" fill="#57606a">1e{decade}</text>')
    one = y(1)
    parts += [
        f'<line x1="{LEFT}" y1="{one:.1f}" x2="{plot_right}" y2="{one:.1f}" stroke="#cf222e" stroke-dasharray="6 4"/>',
        f'<text x="{plot_right - 4}" y="{one - 5:.1f}" text-anchor="end" fill="#cf222e">tolerance</text>',
        f'<text x="{plot_right - 4}" y="{TOP - BAND / 2 + 4}" text-anchor="end" fill="#cf222e">'
        "exact check failed</text>",
        f'<text x="{LEFT - 6}" y="{y(0) + 4:.1f}" text-anchor="end" fill="#57606a">0</text>',
        f'<line x1="{LEFT}" y1="{TOP + PLOT_HEIGHT}" x2="{plot_right}" y2="{TOP + PLOT_HEIGHT}" stroke="#57606a"/>',
        f'<text transform="translate(16 {TOP + PLOT_HEIGHT / 2}) rotate(-90)" text-anchor="middle" fill="#57606a">'
        "error ÷ tolerance</text>",
    ]
    for index, row in enumerate(table.rows):
        label_y = TOP + PLOT_HEIGHT + BAND + 14
        parts.append(
            f'<text transform="translate({x(index):.1f} {label_y}) rotate(-35)" text-anchor="end" fill="#1f2328">'
            f"{html_text(row.label, 24)}</text>"
        )
    legend_rows = (PLOT_HEIGHT + BAND) // 20
    spread = min(4.0, STEP / 2 / len(series))
    for number, one_series in enumerate(series):
        colour, marker = COLOURS[number % len(COLOURS)], MARKERS[number % len(MARKERS)]
        # Series side by side, so that equal values do not hide one another.
        shift = (number - (len(series) - 1) / 2) * spread
        column = one_series.column
        # The page's device and machine filters hide a series by these, as they hide a table column.
        parts.append(f'<g data-machine="{html_text(column.machine)}" data-device="{html_text(column.device)}">')
        if len(one_series.points) > 1:
            coordinates = " ".join(f"{x(index) + shift:.1f},{y(ratio):.1f}" for index, ratio, _ in one_series.points)
            parts.append(f'<polyline points="{coordinates}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for index, ratio, hollow in one_series.points:
            value = "an exact check failed" if ratio == math.inf else f"{ratio:.3g} of the tolerance"
            tip = f"torch {table.rows[index].label}, {one_series.column.label}: {value}"
            tip += ", not bit-identical" if hollow else ""
            parts.append(_marker(marker, x(index) + shift, y(ratio), colour, hollow, html_text(tip)))
        legend_y = TOP + 8 + number * 20
        if number < legend_rows - 1 or len(series) == legend_rows:
            parts.append(_marker(marker, plot_right + 24, legend_y, colour, False, ""))
            label = html_text(one_series.column.label, 30)
            parts.append(f'<text x="{plot_right + 36}" y="{legend_y + 4}" fill="#1f2328">{label}</text>')
        elif number == legend_rows - 1:
            more = f"and {len(series) - number} more (hover a point)"
            parts.append(f'<text x="{plot_right + 16}" y="{legend_y + 4}" fill="#57606a">{more}</text>')
        parts.append("</g>")
    if any(hollow for one in series for _, _, hollow in one.points):
        parts.append(
            f'<text x="{LEFT}" y="{height - 8}" fill="#57606a">'
            "A hollow marker: within tolerance, but not bit-identical.</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _marker(shape: str, cx: float, cy: float, colour: str, hollow: bool, tip: str) -> str:
    tooltip = f"<title>{tip}</title>" if tip else ""
    paint = f'fill="#ffffff" stroke="{colour}" stroke-width="2"' if hollow else f'fill="{colour}"'
    if shape == "circle":
        return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4.5" {paint}>{tooltip}</circle>'
    if shape == "square":
        return f'<rect x="{cx - 4:.1f}" y="{cy - 4:.1f}" width="8" height="8" {paint}>{tooltip}</rect>'
    corners = (
        [(cx, cy - 5.5), (cx + 5, cy + 4), (cx - 5, cy + 4)]
        if shape == "triangle"
        else [(cx, cy - 5.5), (cx + 5, cy), (cx, cy + 5.5), (cx - 5, cy)]
    )
    points = " ".join(f"{px:.1f},{py:.1f}" for px, py in corners)
    return f'<polygon points="{points}" {paint}>{tooltip}</polygon>'
