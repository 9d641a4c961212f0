"""`nox -s plan`: the resolved plan, a row per cell, and nothing run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tabulate import tabulate

from .. import terminal
from ..errors import UsageError
from ..plan import assumed_support

if TYPE_CHECKING:
    import nox

    from ..plan import Cell
    from ..project import Project


def run(project: Project, session: nox.Session) -> None:
    """Print where the plan looked (matrix, machine, results, find-links, notes), the caller's variables no pair
    sees, and each cell's row."""
    if session.posargs:
        raise UsageError(f"nox -s plan takes no arguments, not {' '.join(session.posargs)}")
    print(text(project))


def text(project: Project) -> str:
    lines = [f"matrix:  {project.matrix.file}", f"machine: {project.machine}", f"results: {project.results_dir}"]
    lines += [f"find-links: {link}" for link in project.find_links]
    lines += [f"note: {terminal.escape(note)}" for note in project.notes]
    lines += [f"note: {assumed}" for assumed in _assumptions(project.cells)]
    unseen = project.unseen_variables()
    if unseen:  # whatever they steer, no pair sees them: said, never dropped in silence
        lines.append(f"not passed to the pairs: {terminal.escape(', '.join(unseen))} (`pass_env:` passes one)")
    rows = [
        [
            cell.session,
            f"{cell.interpreter.path} ({cell.interpreter.source})" if cell.interpreter else "-",
            " ".join(project.install_requirements(cell, build=False)),  # the plan builds nothing
            _status(cell),
        ]
        for cell in project.cells
    ]
    table = tabulate(rows, headers=["session", "python", "requirements", "status"], disable_numparse=True)
    return "\n".join(lines) + "\n\n" + table


def _assumptions(cells: Sequence[Cell]) -> list[str]:
    """What the plan assumed of each release newer than its table, once per release whose Python it chose."""
    chosen = dict.fromkeys(cell.torch for cell in cells if cell.python_request is None and cell.interpreter)
    return [text for text in (assumed_support(version) for version in chosen) if text]


def _status(cell: Cell) -> str:
    if cell.outcome:
        return f"{cell.outcome.value}: {terminal.escape(cell.hint)}"
    return "ready" if cell.interpreter else f"cannot plan: {terminal.escape(cell.hint)}"
