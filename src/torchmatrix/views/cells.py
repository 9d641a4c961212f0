"""Which stored results are the matrix's cells now: the report of a matrix is that matrix.

A results folder keeps every cell ever run into it: releases bisect built, a
Python the matrix pinned once, the Python the planner chose before its table
changed. The report shows the cells the matrix has now (its releases, with
the Pythons it pins, and on this machine the Python the planner picks now);
the others are named under the tables, with why, and ``nox -s report --
--all-cells`` shows them too. A result of a torch installed already
(``probe-installed``) is the matrix's probes in that torch: always shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import Version

from .. import results
from ..planner import Cell
from ..results import CellResult
from .model import Aside


@dataclass(frozen=True)
class MatrixCells:
    """The cells of a matrix: what a stored result must be to be one of them."""

    machine: str
    """This machine: the only one whose Python choice the plan knows."""
    pythons: dict[tuple[Version, str | None], str | None]
    """(release, the Python pinned or None) -> the Python the plan runs it on here (None: unknown here)."""

    @classmethod
    def of(cls, cells: Iterable[Cell], machine: str) -> MatrixCells:
        return cls(machine, {(cell.torch, cell.python_request): cell.python for cell in cells})

    def why_not(self, result: CellResult) -> str:
        """'' when ``result`` is a cell of the matrix now; otherwise why it is not, in a few words."""
        if result.session == results.INSTALLED_SESSION:
            return ""
        release = results.version_of(result.torch)
        key = (release, result.python_request)
        if key not in self.pythons:
            if not any(torch == release for torch, _ in self.pythons):
                return f"torch {result.torch} is not among the matrix's releases"
            return f"the matrix no longer pins Python {result.python_request} for torch {result.torch}"
        now = self.pythons[key]
        if result.machine == self.machine and now is not None and result.python != now:
            return f"the matrix now runs torch {result.torch} on Python {now} here, not {result.python}"
        return ""


def split(found: Iterable[CellResult], cells: MatrixCells) -> tuple[list[CellResult], list[Aside]]:
    """The results that are cells of the matrix, and the others with why, each in torch-version order."""
    current: list[CellResult] = []
    others: list[Aside] = []
    for result in sorted(found, key=results.sort_key):
        why = cells.why_not(result)
        if why:
            others.append(Aside(result, why))
        else:
            current.append(result)
    return current, others
