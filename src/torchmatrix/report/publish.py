"""Render a report in the formats asked for and write the files: the one place that knows their names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from .. import atomicfile
from . import chart, export, markdown, page, rst, supported
from .model import Report

FILE_NAMES = {
    "md": "COMPATIBILITY.md",
    "rst": "COMPATIBILITY.rst",
    "html": "compatibility.html",
    "json": "compatibility.json",
    "csv": "compatibility.csv",
    "supported": "SUPPORTED.md",
}
FORMATS = tuple(FILE_NAMES)
DEFAULT_FORMATS = ("md", "html", "json", "csv")


def render(report: Report, formats: Iterable[str] = DEFAULT_FORMATS) -> dict[str, str]:
    """File name -> content for each format in ``formats``, and the charts the Markdown or RST shows beside it."""
    formats = set(formats)
    charts = chart.charts(report)
    pictures = {probe: chart.file_name(probe) for probe in charts}
    files: dict[str, str] = {}
    if formats & {"md", "rst"}:
        files.update({pictures[probe]: svg for probe, svg in charts.items()})
    flat = export.rows(report) if formats & {"json", "csv"} else []
    renderers = {
        "md": lambda: markdown.render(report, pictures),
        "rst": lambda: rst.render(report, pictures),
        "html": lambda: page.render(report, charts),
        "json": lambda: export.to_json(report, flat),
        "csv": lambda: export.to_csv(report, flat),
        "supported": lambda: supported.render(report),
    }
    files.update({FILE_NAMES[name]: renderers[name]() for name in FORMATS if name in formats})
    return files


def write(output: Path, files: Mapping[str, str]) -> list[Path]:
    """Write each file into ``output`` atomically; the paths written."""
    written = []
    for name, text in files.items():
        path = output / name
        atomicfile.write_text(path, text)
        written.append(path)
    return written
