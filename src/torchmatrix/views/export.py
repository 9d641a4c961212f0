"""The report for other tools: one row per (machine, torch, python, device, probe), as JSON and as CSV.

Every merged cell is here, the columns the tables leave out included. A cell
that ran no probe (no wheel, no interpreter, install error) has a row for each
probe and device it was planned for. A row carries the outcome and what says
why (message, note, the failing checks); everything else a probe measured is in
the result file the row names (``result_file``, relative to the output folder),
and the environment fingerprints are in the JSON once per result file.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path, PurePosixPath
from typing import Any

from .. import results
from ..core import Outcome
from ..results import CellResult
from . import escape
from .model import Column, Entry, Report, Row, failing_checks, note_text

SCHEMA = 1
CSV_FIELDS = (
    "machine", "torch", "python", "python_request", "device", "probe", "outcome", "mark", "bit_identical",
    "error_ratio", "duration_s", "message", "note", "torch_build", "cell_id", "finished_at", "result_file",
)  # fmt: skip


def rows(report: Report) -> list[dict[str, Any]]:
    """The flat rows, ordered by torch release, machine, device and probe."""
    found = []
    files = {id(result): result_file(result) for result in report.results}
    columns = report.all_columns
    every_row = sorted({row for table in report.tables for row in table.rows}, key=Row.sort_key)
    for row in every_row:
        for column in columns:
            for table in report.tables:
                entry = table.entries.get((row, column))
                if entry:
                    found.append(_row(table.probe, column, entry, files[id(entry.result)]))
    return found


def _row(probe: str, column: Column, entry: Entry, file: str) -> dict[str, Any]:
    result, record = entry.result, entry.record
    identical = record.metrics.get("bit_identical") if record else None
    ratio = entry.ratio
    return {
        "machine": result.machine,
        "torch": result.torch,
        "python": result.python,
        "python_request": result.python_request,
        "device": column.device,
        "probe": probe,
        "outcome": record.outcome.value if record else entry.mark.value,
        "mark": entry.mark.value,
        "symbol": entry.mark.symbol,
        "bit_identical": identical if isinstance(identical, bool) else None,
        # Strict JSON has no infinity: a failed exact check's ratio is the string "inf".
        "error_ratio": ratio if ratio is None or math.isfinite(ratio) else str(ratio),
        "duration_s": record.duration if record else None,
        "message": record.message if record else result.message,
        "note": note_text(entry) if entry.mark.noted else "",
        "failing_checks": [
            {field: check.get(field) for field in ("name", "observed", "expected", "error", "tolerance")}
            for check in failing_checks(record.metrics)
        ]
        if record and entry.mark is Outcome.FAIL
        else [],
        "torch_build": result.environment.get("torch"),
        "cell_id": result.cell_id,
        "finished_at": result.finished_at,
        "result_file": file,
    }


def result_file(result: CellResult) -> str:
    """Where a result's file lies, relative to the output folder: the file it was read from.

    A result that was not read from a file (one made in memory) is named where its machine would store it.
    """
    if result.path is None:
        return results.result_path(Path("results"), result.machine, result.cell_id).as_posix()
    return PurePosixPath("results", result.path.parent.name, result.path.name).as_posix()


def to_json(report: Report, flat: list[dict[str, Any]] | None = None) -> str:
    """compatibility.json: the rows, the environment of each result file, the legend, the newest result's time.

    ``flat``: the report's :func:`rows`, when the caller has them already.
    """
    document = {
        "schema": SCHEMA,
        "updated": report.updated,
        "legend": {mark.value: {"symbol": mark.symbol, "meaning": mark.meaning} for mark in Outcome},
        "environments": {result_file(result): result.environment for result in report.results},
        "rows": rows(report) if flat is None else flat,
    }
    # No indentation: only then does the json module use its C encoder.
    return escape.json_text(document, ensure_ascii=False) + "\n"


def to_csv(report: Report, flat: list[dict[str, Any]] | None = None) -> str:
    """compatibility.csv: the rows' scalar fields; text cleaned and kept from being read as formulas."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    cleaned: dict[object, object] = {}  # most texts repeat from row to row (machine, torch, probe…)
    for row in rows(report) if flat is None else flat:
        line = []
        for field in CSV_FIELDS:
            value = row[field]
            if value.__class__ is str:
                if value not in cleaned:
                    cleaned[value] = escape.csv_cell(value)
                value = cleaned[value]
            line.append(value)
        writer.writerow(line)
    return buffer.getvalue()
