"""The options of `nox -s report -- ...`: which formats to write, which cells, another result set to diff against."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..util.arguments import Parser, typed
from .publish import DEFAULT_FORMATS, FILE_NAMES, FORMATS


@dataclass(frozen=True)
class ReportOptions:
    formats: tuple[str, ...] = DEFAULT_FORMATS
    diff: Path | None = None
    """A results folder to compare with (the one before); None: no comparison."""
    all_cells: bool = False
    """Every stored cell, not only the matrix's cells now (:mod:`torchmatrix.views.cells`)."""


def parse(argv: Sequence[str], command: str | None = None) -> ReportOptions:
    """The options the words after `--` ask; a mistake raises :class:`UsageError`. `--help` prints help, exits 0.

    ``command``: the command that started the session when it is not nox (``torchmatrix``), for the usage line.
    """
    namespace = arguments_parser(command).parse(argv)
    return ReportOptions(
        formats=_formats(namespace.format), diff=_results_folder(namespace.diff), all_cells=namespace.all_cells
    )


def arguments_parser(command: str | None = None) -> Parser:
    """The parser of the session's arguments, whose usage line is the ``command``'s that starts it (nox's: None)."""
    parser = Parser(
        usage=typed(command, "report", "[--format FORMAT[,FORMAT...]] [--all-cells] [--diff OTHER_RESULTS]"),
        description="Render the stored results of every machine as tables, a page and data files.",
    )
    files = ", ".join(f"{name} ({file})" for name, file in FILE_NAMES.items())
    parser.add_argument(
        "--format",
        action="append",
        metavar="FORMAT[,FORMAT...]",
        help=f"what to write, repeatable: {files}, or all (default: {','.join(DEFAULT_FORMATS)}); "
        "md and rst come with their charts (compatibility-<probe>.svg)",
    )
    parser.add_argument(
        "--all-cells",
        action="store_true",
        help="show every stored cell: also those that are no cell of the matrix now (releases bisect built, "
        "a Python the matrix no longer pins or picks), which are otherwise only named",
    )
    parser.add_argument(
        "--diff",
        metavar="OTHER_RESULTS",
        type=Path,
        help="also list the cells whose outcome differs from those in OTHER_RESULTS "
        "(a results folder, or an output folder holding results/)",
    )
    # The probe sessions' option: `nox -s probe report -- --force` gives both sessions the same words.
    parser.add_argument("--force", action="store_true", help=argparse.SUPPRESS)
    return parser


def _formats(given: list[str] | None) -> tuple[str, ...]:
    if not given:
        return DEFAULT_FORMATS
    names = [name.strip().lower() for words in given for name in words.split(",") if name.strip()]
    unknown = [name for name in names if name not in (*FORMATS, "all")]
    if unknown or not names:
        problem = f"unknown format {unknown[0]!r}" if unknown else "no format given"
        raise UsageError(f"--format: {problem}\n  hint: choose from {', '.join(FORMATS)}, all")
    return FORMATS if "all" in names else tuple(name for name in FORMATS if name in names)


def _results_folder(path: Path | None) -> Path | None:
    if path is None:
        return None
    if (path / "results").is_dir():
        return path / "results"
    if not path.is_dir():
        raise UsageError(f"--diff: {path} is not a folder\n  hint: give a results folder, e.g. other/reports/results")
    inner = sorted(folder.parent for pattern in ("*/results", "*/*/results") for folder in path.glob(pattern)
                   if folder.is_dir())  # fmt: skip
    if inner:  # a project's folder, whose output folder holds the results: compared with none, every cell is new
        raise UsageError(
            f"--diff: {path} holds no results/, but {inner[0]} does\n  hint: give {inner[0]} (its output folder)"
        )
    # files of another kind (an editor's .vscode/settings.json) hold no cell's result
    if any(path.iterdir()) and not any(_is_result(file) for file in path.glob("*/*.json")):
        raise UsageError(
            f"--diff: {path} holds neither results/ nor a machine's result files (results/<machine>/<cell>.json)\n"
            "  hint: give a results folder, e.g. other/reports/results"
        )
    return path


def _is_result(file: Path) -> bool:
    """Whether ``file`` is a cell's result file by what it says it is (a JSON object with its ``schema`` and
    ``records``), of any schema: which it can be read as, the comparison says."""
    try:
        data = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and type(data.get("schema")) is int and isinstance(data.get("records"), list)
