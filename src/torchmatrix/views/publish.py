"""Render a report in the formats asked for and write the files: the one place that knows their names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..bisection.summaries import Summary
from ..util import atomicfile
from . import changes, chart, export, history, junit, markdown, page, repro, rst, supported
from .model import Report

FILE_NAMES = {
    "md": "COMPATIBILITY.md",
    "rst": "COMPATIBILITY.rst",
    "html": "compatibility.html",
    "json": "compatibility.json",
    "csv": "compatibility.csv",
    "changes": "CHECK-CHANGES.md",
    "supported": "SUPPORTED.md",
    "junit": "junit.xml",
}
FORMATS = tuple(FILE_NAMES)
DEFAULT_FORMATS = ("md", "html", "json", "csv", "changes")


def render(
    report: Report,
    formats: Iterable[str] = DEFAULT_FORMATS,
    bisections: Sequence[Summary] = (),
    probes: Mapping[str, repro.ProbeSource] | None = None,
) -> dict[str, str]:
    """File name -> content for each format in ``formats``, and the charts the Markdown or RST shows beside it.

    ``bisections`` (the stored bisections' summaries) add their "changed in" section to the Markdown and the page.
    ``probes`` (a probe's name -> its file, :func:`.repro.sources`) add, with the page or CHECK-CHANGES.md, a repro
    script per sample of that probe whose output changed where its record asks for one (``repro/…py``), which
    they link.
    """
    formats = set(formats)
    charts = chart.charts(report)
    pictures = {probe: chart.file_name(probe) for probe in charts}
    files: dict[str, str] = {}
    if formats & {"md", "rst"}:
        files.update({pictures[probe]: svg for probe, svg in charts.items()})
    flat = export.rows(report) if formats & {"json", "csv"} else []
    histories = history.histories(report) if formats & {"html", "changes"} else ()
    scripts = {
        path: text
        for found in histories
        if found.probe in (probes or {})
        for path, text in repro.scripts(repro.sample_changes(found), (probes or {})[found.probe]).items()
    }
    renderers = {
        "md": lambda: markdown.render(report, pictures, bisections),
        "rst": lambda: rst.render(report, pictures),
        "json": lambda: export.to_json(report, flat),
        "csv": lambda: export.to_csv(report, flat),
        "changes": lambda: changes.render(report, histories, scripts),
        "supported": lambda: supported.render(report),
        "junit": lambda: junit.render(report),
    }
    files.update({FILE_NAMES[name]: renderers[name]() for name in FORMATS if name in formats and name in renderers})
    if "html" in formats:  # the page, and a page of their own for the checks of a probe with too many for it
        files.update(page.pages(FILE_NAMES["html"], report, charts, histories, bisections, scripts))
    files.update(scripts)
    return files


def write(output: Path, files: Mapping[str, str]) -> list[Path]:
    """Write each file into ``output`` atomically, unless it holds that text already; the paths written.

    A report of one cell renders every file again: one whose content did not change keeps its time, so a
    build tool or ``git status`` sees only what did.
    """
    written = []
    for name, text in files.items():
        path = output / name
        if _holds(path, text):
            continue
        atomicfile.write_text(path, text)
        written.append(path)
    return written


def _holds(path: Path, text: str) -> bool:
    try:
        return path.is_file() and path.stat().st_size == len(text.encode()) and path.read_text("utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False
