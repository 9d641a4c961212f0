"""The report of a matrix is that matrix: its cells now are shown, other stored cells named, all of them on asking."""

from __future__ import annotations

from packaging.version import Version

from torchmatrix.interpreters import Interpreter
from torchmatrix.planner import Cell
from torchmatrix.results import INSTALLED_SESSION, CellResult
from torchmatrix.views import markdown, model
from torchmatrix.views.cells import MatrixCells, split
from torchmatrix.views.options import parse

from .report_data import autograd, cell, unavailable

HERE = "linux-x86_64"


def planned(torch: str, python: str, request: str | None = None) -> Cell:
    major, minor = map(int, python.split("."))
    interpreter = Interpreter(f"/usr/bin/python{python}", (major, minor, 1), "", "path")
    return Cell(Version(torch), request, interpreter, (f"torch=={torch}",), torch)


MATRIX = MatrixCells.of([planned("1.12.1", "3.10"), planned("2.2.0", "3.11"), planned("2.2.0", "3.12", "3.12")], HERE)


def stored(torch: str, python: str, request: str | None = None, machine: str = HERE, session: str = "") -> CellResult:
    records = (autograd("cpu"), unavailable("autograd_dot", "cuda"))
    return cell(machine, torch, python, records, python_request=request, session=session or f"probe({torch})")


def test_the_matrix_cells_now_are_shown_and_the_others_named_with_why() -> None:
    found = [
        stored("1.12.1", "3.10"),
        stored("1.12.0", "3.10"),  # bisect built it
        stored("2.2.0", "3.12"),  # the planner picked 3.12 before its table said 3.11
        stored("2.2.0", "3.12", "3.12"),  # pinned, and still pinned
        stored("2.2.0", "3.10", "3.10"),  # pinned once
        stored("2.2.0", "3.12", machine="macos-arm64"),  # another machine's choice: not this plan's to judge
        stored("2.11.0", "3.12", session=INSTALLED_SESSION, machine="H200"),  # a torch installed already
    ]
    current, others = split(found, MATRIX)
    assert sorted((r.machine, r.torch, r.python, r.python_request) for r in current) == [
        ("H200", "2.11.0", "3.12", None),
        (HERE, "1.12.1", "3.10", None),
        (HERE, "2.2.0", "3.12", "3.12"),
        ("macos-arm64", "2.2.0", "3.12", None),
    ]
    assert [(aside.result.cell_id, aside.why) for aside in others] == [
        ("torch-1.12.0-py3.10", "torch 1.12.0 is not among the matrix's releases"),
        ("torch-2.2.0-py3.10", "the matrix no longer pins Python 3.10 for torch 2.2.0"),
        ("torch-2.2.0-py3.12", "the matrix now runs torch 2.2.0 on Python 3.11 here, not 3.12"),
    ]


def test_the_report_names_what_it_left_out_and_how_to_see_it() -> None:
    current, others = split([stored("1.12.1", "3.10"), stored("1.12.0", "3.10")], MATRIX)
    report = model.build(current, others)
    assert [row.torch for table in report.tables for row in table.rows] == ["1.12.1"]
    rendered = markdown.render(report)
    assert "Not shown, as no cell of the matrix now: 1 stored cell: torch-1.12.0-py3.10 of linux-x86\\_64" in rendered
    assert "nox -s report -- --all-cells shows every stored cell." in rendered
    assert "1.12.0 |" not in rendered
    typed = markdown.render(model.build(current, others, command="torchmatrix"))  # rendered by the command
    assert "torchmatrix report --all-cells shows every stored cell." in typed
    assert "No results yet: run torchmatrix probe." in markdown.render(model.build([], command="torchmatrix"))


def test_all_cells_is_an_option_of_the_report() -> None:
    assert parse([]).all_cells is False
    assert parse(["--all-cells"]).all_cells is True
