"""`nox -s plan`: the resolved plan, a row per cell (what it installs, what bounds it, what seeds its environment),
and nothing run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tabulate import tabulate

from .. import safetext
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
    project.refuse_unlisted()
    print(text(project))


def text(project: Project) -> str:
    lines = [f"matrix:  {project.matrix.file}", f"machine: {project.machine}", f"results: {project.results_dir}"]
    lines += [f"find-links: {link}" for link in project.find_links]
    lines += [f"note: {safetext.for_terminal(note)}" for note in project.notes]
    lines += [f"note: {assumed}" for assumed in _assumptions(project.cells)]
    unseen = project.unseen_variables()
    if unseen:  # whatever they steer, no pair sees them: said, never dropped in silence
        lines.append(f"not passed to the pairs: {safetext.for_terminal(', '.join(unseen))} (`pass_env:` passes one)")
    rows = [
        [
            cell.session,
            f"{cell.interpreter.path} ({cell.interpreter.source})" if cell.interpreter else "-",
            " ".join(project.install_requirements(cell, build=False)),  # the plan builds nothing
            " ".join(cell.constraints) or "-",
            " ".join(cell.seed) or "-",
            _status(cell),
        ]
        for cell in project.cells
    ]
    headers = ["session", "python", "requirements", "constraints", "seed", "status"]
    table = tabulate(rows, headers=headers, disable_numparse=True)
    return "\n".join([*lines, "", table, "", *_why(project)])


def _why(project: Project) -> list[str]:
    """Where the cells' constraints come from, with their reasons, and what the seed is."""
    rules = [(rule, "known pin", (*rule.require, *rule.constrain)) for rule in project.known_pins]
    rules += [(rule, "the matrix's pins", rule.constrain) for rule in project.matrix.pins]
    said = []
    for rule, whose, bounds in rules:
        used = {text for cell in project.cells if rule.applies_to(cell.torch) for text in cell.constraints}
        shown = " ".join(text for text in map(str, bounds) if text in used)
        if shown:
            said.append(f"  {shown} for torch {rule.torch} ({whose}){': ' + rule.reason if rule.reason else ''}")
    if said:
        said.insert(0, "constraints bound a package where a cell installs it, and add none:")
    said.append("seed: what `python -m venv` installs in a new environment, as each interpreter's ensurepip says")
    return [safetext.for_terminal(line) for line in said]


def _assumptions(cells: Sequence[Cell]) -> list[str]:
    """What the plan assumed of each release newer than its table, once per release whose Python it chose."""
    chosen = dict.fromkeys(cell.torch for cell in cells if cell.python_request is None and cell.interpreter)
    return [text for text in (assumed_support(version) for version in chosen) if text]


def _status(cell: Cell) -> str:
    if cell.outcome:
        return f"{cell.outcome.value}: {safetext.for_terminal(cell.hint)}"
    return "ready" if cell.interpreter else f"cannot plan: {safetext.for_terminal(cell.hint)}"
